package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;

import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * A job as a follower's seed share sees it (the worker's {@code SeedShares}): how many objects it
 * has and how many followers (placements other than the seed's), failed ones included.
 */
public record JobShape(int objects, int followers) {

  /** The most objects one follower pulls from the seed: {@code ceil(objects / followers)}. */
  public int share() {
    return followers <= 0 ? Integer.MAX_VALUE : Math.max(1, -Math.floorDiv(-objects, followers));
  }

  /**
   * Reads the job's shape in one statement, two counts by primary-key range (an unknown job is 0
   * objects and 0 followers).
   */
  public static JobShape read(DSLContext dsl, String jobId) {
    var r =
        dsl.select(
                DSL.field(DSL.selectCount().from(JOB_OBJECTS).where(JOB_OBJECTS.JOB_ID.eq(jobId))),
                DSL.field(
                    DSL.selectCount()
                        .from(PLACEMENTS)
                        .where(PLACEMENTS.JOB_ID.eq(jobId))
                        .and(PLACEMENTS.IS_SEED.isFalse())))
            .fetchOne();
    return r == null ? new JobShape(0, 0) : new JobShape(r.value1(), r.value2());
  }
}
