package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.loop.PruneFinishedTasks;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pruning deletes the task rows and attempts of jobs finished longer than the retention ago, in
 * batches, and what the snapshot and the history queries answer about those jobs stays the same.
 */
class PruningTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration RETENTION = Duration.ofHours(168);

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static final String SEED = "10.2.0.1:1";
  private static final String F1 = "10.2.0.2:1";
  private static final String F2 = "10.2.0.3:1";

  /** A seed and two followers, three 8-byte objects. */
  private static void create(String jobId, List<String> targets) {
    ModelRef model = new ModelRef("prune-" + jobId, "r1", "bin", "local");
    String prefix = "p/" + jobId;
    ManifestFile f =
        new ManifestFile(
            "m.bin",
            24,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            List.of(prefix + "/0", prefix + "/1", prefix + "/2"),
            new ChunkLayout(8, 3, prefix));
    JobRequest req =
        new JobRequest(
            jobId, model, new Manifest(model, 24, "v1", List.of(f)), targets.get(0), targets, null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha-" + jobId, "{}"));
    assertTrue(ScheduleJob.run(dsl(), jobId));
  }

  private static List<ClaimedTask> claim(String node, int n) {
    return new TaskQueue(dsl()).claim(node, node + "/w", n, LEASE);
  }

  /**
   * Drives a job to failed: the seed and F1 staged, F2 failed after one copy and part of another.
   */
  private static void finishedJob(String jobId) {
    TaskQueue q = new TaskQueue(dsl());
    create(jobId, List.of(SEED, F1, F2));
    ClaimedTask download = claim(SEED, 1).get(0);
    List<Replica> published =
        download.payload().files().get(0).objects().stream()
            .map(
                o ->
                    new Replica(
                        o.objectId(),
                        SEED,
                        o.length(),
                        "sha256:" + "ab".repeat(32),
                        "/d/m.bin",
                        o.offset()))
            .toList();
    assertTrue(q.succeed(download.taskId(), SEED + "/w", 24, null, published));
    assertTrue(ScheduleJob.run(dsl(), jobId));

    List<ClaimedTask> c1 = claim(F1, 3);
    assertEquals(
        3,
        q.succeedAll(
                c1.stream()
                    .map(t -> new TaskQueue.Completion(t.taskId(), F1 + "/w", 8, null, List.of()))
                    .toList())
            .size());
    assertTrue(ScheduleJob.run(dsl(), jobId));
    ClaimedTask materialize = claim(F1, 1).get(0);
    assertTrue(q.succeed(materialize.taskId(), F1 + "/w", 0, null, List.of()));

    List<ClaimedTask> c2 = claim(F2, 2);
    assertTrue(q.succeed(c2.get(0).taskId(), F2 + "/w", 8, null, List.of()));
    assertTrue(q.progress(c2.get(1).taskId(), F2 + "/w", 5, SEED));
    assertEquals("pending", q.fail(c2.get(1).taskId(), F2 + "/w", "peer reset", true));
    // Due at once, and ahead of the third copy (claims take ready rows by run_after).
    dsl()
        .execute(
            "UPDATE tasks SET run_after = now() - interval '1 hour' WHERE task_id = ?",
            c2.get(1).taskId());
    ClaimedTask again = claim(F2, 1).get(0);
    assertEquals(c2.get(1).taskId(), again.taskId());
    assertTrue(q.progress(again.taskId(), F2 + "/w", 5, SEED));
    assertEquals("failed", q.fail(again.taskId(), F2 + "/w", "cannot write: disk full", false));
    assertTrue(ScheduleJob.run(dsl(), jobId));
    assertEquals(
        "failed",
        dsl().select(JOBS.STATUS).from(JOBS).where(JOBS.JOB_ID.eq(jobId)).fetchOne().value1());
  }

  /**
   * What the history reports read: per (node, type, state) tasks, attempts, failing attempts,
   * bytes.
   */
  private static Map<String, String> history(String jobId) {
    Map<String, String> out = new TreeMap<>();
    dsl()
        .resultQuery(
            """
            WITH live AS (
              SELECT t.node_id, t.task_type, t.state, count(*) AS tasks, sum(t.attempts) AS attempts,
                     sum((SELECT count(*) FROM task_attempts a
                           WHERE a.task_id = t.task_id AND a.outcome IN ('failed', 'retry', 'lease_expired'))) AS failed_attempts,
                     sum(t.bytes_total) AS bytes_total, sum(t.bytes_done) AS bytes_done, max(t.last_error) AS last_error
                FROM tasks t WHERE t.job_id = ? GROUP BY 1, 2, 3
              UNION ALL
              SELECT h.node_id, h.task_type, h.state, h.tasks, h.attempts, h.failed_attempts, h.bytes_total, h.bytes_done,
                     h.last_error
                FROM task_history h WHERE h.job_id = ?)
            SELECT node_id || ' ' || task_type || ' ' || state,
                   sum(tasks) || ' tasks, ' || sum(attempts) || ' attempts, ' || sum(failed_attempts) || ' failing, '
                     || sum(bytes_total) || '/' || sum(bytes_done) || ' bytes, ' || coalesce(max(last_error), '-')
              FROM live GROUP BY node_id, task_type, state
            """,
            jobId,
            jobId)
        .fetch()
        .forEach(r -> out.put(r.get(0, String.class), r.get(1, String.class)));
    return out;
  }

  @Test
  void aPrunedJobKeepsItsSnapshotAndItsHistoryWhileRecentAndActiveJobsKeepTheirRows() {
    finishedJob("old");
    finishedJob("recent");
    create("active", List.of("10.2.0.9:1"));
    dsl()
        .execute("UPDATE jobs SET finished_at = now() - interval '200 hours' WHERE job_id = 'old'");
    JobSnapshot before = new JobStore(dsl()).snapshot("old").orElseThrow();
    Map<String, String> historyBefore = history("old");
    int oldTasks = dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("old"));
    assertEquals(8, oldTasks);
    assertEquals(
        13, before.placements().get(2).stagedBytes(), "a failed follower shows the bytes it had");
    assertTrue(
        historyBefore.get(F2 + " REPLICA_COPY failed").endsWith("cannot write: disk full"),
        historyBefore.toString());

    // Batches of 3 rows, so one job takes several transactions.
    assertEquals(oldTasks, new PruneFinishedTasks(dsl(), RETENTION, 3).run());

    assertEquals(0, dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("old")));
    assertEquals(
        0,
        dsl()
            .fetchOne(
                """
                SELECT (SELECT count(*) FROM task_counts WHERE job_id = 'old')
                     + (SELECT count(*) FROM task_count_deltas WHERE job_id = 'old')""")
            .get(0, Long.class),
        "a pruned job's task counters are gone");
    assertTrue(
        dsl()
            .fetchExists(
                DSL.selectOne()
                    .from("task_count_deltas")
                    .where("job_id = 'recent'")
                    .unionAll(DSL.selectOne().from("task_counts").where("job_id = 'recent'"))),
        "a job inside the retention keeps its counters");
    assertEquals(
        0,
        dsl()
            .fetchCount(
                TASK_ATTEMPTS,
                TASK_ATTEMPTS.TASK_ID.notIn(dsl().select(TASKS.TASK_ID).from(TASKS))));
    assertEquals(
        before,
        new JobStore(dsl()).snapshot("old").orElseThrow(),
        "the snapshot of a pruned job is unchanged");
    assertEquals(historyBefore, history("old"), "the history of a pruned job is unchanged");
    assertEquals(8, dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("recent")), "inside the retention");
    assertEquals(1, dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("active")), "not finished");
    assertEquals(0, new PruneFinishedTasks(dsl(), RETENTION).run(), "nothing left to prune");
  }

  @Test
  void pruningTwiceOverSeveralRoundsAddsUpInTheHistory() {
    finishedJob("twice");
    dsl()
        .execute(
            "UPDATE jobs SET finished_at = now() - interval '200 hours' WHERE job_id = 'twice'");
    Map<String, String> historyBefore = history("twice");
    // A task row that shows up after the first prune (e.g. a straggler) is folded into the same
    // rows.
    assertEquals(8, new PruneFinishedTasks(dsl(), RETENTION, 5).run());
    dsl()
        .execute(
            """
        INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state, attempts, bytes_total, bytes_done, finished_at)
        VALUES ('twice', ?, 'REPLICA_COPY', 'straggler', '{}', 'canceled', 0, 8, 0, now())""",
            F2);
    assertEquals(1, new PruneFinishedTasks(dsl(), RETENTION).run());
    Map<String, String> expected = new TreeMap<>(historyBefore);
    expected.put(
        F2 + " REPLICA_COPY canceled",
        expected
            .get(F2 + " REPLICA_COPY canceled")
            .replaceFirst(
                "^1 tasks, 0 attempts, 0 failing, 8/0", "2 tasks, 0 attempts, 0 failing, 16/0"));
    assertEquals(expected, history("twice"));
  }
}
