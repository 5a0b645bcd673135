package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Record4;
import org.jooq.impl.DSL;

/**
 * The operators' job list: newest first, optionally one state, paged by keyset on {@code
 * (created_at, job_id)} so a page costs the same however deep it is and jobs created while a caller
 * pages never shift what it sees. {@code job_id} breaks ties between jobs created in the same
 * microsecond.
 */
public final class JobListing {
  /**
   * The job columns an API caller sees in the list (the snapshot adds a few): never the request as
   * posted, tens of KiB for a 1,000-node job.
   */
  static final List<org.jooq.Field<?>> SHOWN =
      List.of(
          JOBS.JOB_ID,
          JOBS.STATUS,
          JOBS.MODEL_ID,
          JOBS.REVISION,
          JOBS.FORMAT,
          JOBS.PROVIDER,
          JOBS.SEED_NODE_ID,
          JOBS.TOTAL_SIZE_BYTES,
          JOBS.CREATED_AT,
          JOBS.UPDATED_AT,
          JOBS.LAST_ERROR);

  private final DSLContext dsl;

  public JobListing(DSLContext dsl) {
    this.dsl = dsl;
  }

  /**
   * @param state only jobs in this state, or {@code null} for all
   * @param limit page size, at least 1
   * @param after the cursor of the previous page, or {@code null} for the first page
   */
  public JobPage list(JobStatus state, int limit, JobCursor after) {
    Condition where = DSL.noCondition();
    if (state != null) {
      where = where.and(JOBS.STATUS.eq(state.wire()));
    }
    if (after != null) {
      where =
          where.and(
              DSL.row(JOBS.CREATED_AT, JOBS.JOB_ID)
                  .lt(OffsetDateTime.ofInstant(after.createdAt(), ZoneOffset.UTC), after.jobId()));
    }
    // One row more than asked tells whether another page exists without a count query.
    List<Record> rows =
        new ArrayList<>(
            dsl.select(SHOWN)
                .from(JOBS)
                .where(where)
                .orderBy(JOBS.CREATED_AT.desc(), JOBS.JOB_ID.desc())
                .limit(limit + 1)
                .fetch());
    boolean more = rows.size() > limit;
    List<Record> page = more ? rows.subList(0, limit) : rows;
    Map<String, int[]> counts =
        placementCounts(page.stream().map(r -> r.get(JOBS.JOB_ID)).toList());
    List<JobSummary> jobs =
        page.stream()
            .map(r -> summary(r, counts.getOrDefault(r.get(JOBS.JOB_ID), new int[3])))
            .toList();
    String next = null;
    if (more) {
      Record last = page.get(page.size() - 1);
      next = new JobCursor(last.get(JOBS.CREATED_AT).toInstant(), last.get(JOBS.JOB_ID)).encode();
    }
    return new JobPage(jobs, next);
  }

  /** Targets, staged and failed placements per job, in one aggregate over the page's jobs. */
  private Map<String, int[]> placementCounts(List<String> jobIds) {
    Map<String, int[]> out = new HashMap<>();
    if (jobIds.isEmpty()) {
      return out;
    }
    dsl.select(
            PLACEMENTS.JOB_ID,
            DSL.count(),
            DSL.count().filterWhere(PLACEMENTS.STATE.eq(PlacementState.STAGED.wire())),
            DSL.count().filterWhere(PLACEMENTS.STATE.eq(PlacementState.FAILED.wire())))
        .from(PLACEMENTS)
        .where(PLACEMENTS.JOB_ID.in(jobIds))
        .groupBy(PLACEMENTS.JOB_ID)
        .fetch()
        .forEach(
            (Record4<String, Integer, Integer, Integer> r) ->
                out.put(r.value1(), new int[] {r.value2(), r.value3(), r.value4()}));
    return out;
  }

  private static JobSummary summary(Record r, int[] counts) {
    return new JobSummary(
        r.get(JOBS.JOB_ID),
        r.get(JOBS.STATUS),
        new ModelRef(
            r.get(JOBS.MODEL_ID), r.get(JOBS.REVISION), r.get(JOBS.FORMAT), r.get(JOBS.PROVIDER)),
        r.get(JOBS.SEED_NODE_ID),
        r.get(JOBS.TOTAL_SIZE_BYTES),
        counts[0],
        counts[1],
        counts[2],
        r.get(JOBS.CREATED_AT).toString(),
        r.get(JOBS.UPDATED_AT).toString(),
        r.get(JOBS.LAST_ERROR));
  }
}
