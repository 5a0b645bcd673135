package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;

import java.util.List;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * A job as a follower's seed share and relay chain see it (the worker's {@code SeedShares} and
 * {@code RelayChain}): how many objects it has, how many followers (placements other than the
 * seed's), failed ones included, and, when there are few of them, their node ids in target order.
 *
 * @param followerOrder the followers' node ids by their position in the request's target nodes,
 *     when there are at most the {@code chainUpTo} given to {@link #read}; empty otherwise
 */
public record JobShape(int objects, int followers, List<String> followerOrder) {

  public JobShape {
    followerOrder = List.copyOf(followerOrder);
  }

  /** A shape without the followers' order. */
  public JobShape(int objects, int followers) {
    this(objects, followers, List.of());
  }

  /** The most objects one follower pulls from the seed: {@code ceil(objects / followers)}. */
  public int share() {
    return followers <= 0 ? Integer.MAX_VALUE : Math.max(1, -Math.floorDiv(-objects, followers));
  }

  /**
   * Reads the job's shape: two counts by primary-key range in one statement (an unknown job is 0
   * objects and 0 followers), then, for a job of at most {@code chainUpTo} followers, their node
   * ids in target order.
   */
  public static JobShape read(DSLContext dsl, String jobId, int chainUpTo) {
    var r =
        dsl.select(
                DSL.field(DSL.selectCount().from(JOB_OBJECTS).where(JOB_OBJECTS.JOB_ID.eq(jobId))),
                DSL.field(
                    DSL.selectCount()
                        .from(PLACEMENTS)
                        .where(PLACEMENTS.JOB_ID.eq(jobId))
                        .and(PLACEMENTS.IS_SEED.isFalse())))
            .fetchOne();
    if (r == null) {
      return new JobShape(0, 0);
    }
    if (r.value2() < 2 || r.value2() > chainUpTo) {
      return new JobShape(r.value1(), r.value2());
    }
    List<String> order =
        dsl.select(PLACEMENTS.NODE_ID)
            .from(PLACEMENTS)
            .where(PLACEMENTS.JOB_ID.eq(jobId))
            .and(PLACEMENTS.IS_SEED.isFalse())
            .orderBy(PLACEMENTS.ORDINAL)
            .limit(chainUpTo + 1)
            .fetch(PLACEMENTS.NODE_ID);
    return new JobShape(r.value1(), r.value2(), order.size() > chainUpTo ? List.of() : order);
  }
}
