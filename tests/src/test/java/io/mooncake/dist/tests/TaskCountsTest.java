package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobCancel;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code task_counts} (V016) plus {@code task_count_deltas} (V017), which a scheduler pass folds
 * and reads instead of counting a job's task rows, equals the count of those rows per (node, type,
 * state) after every kind of write the queue makes: the release statement's copies, claims,
 * progress, successes, a retry, a deferral, a failure for good, a lapsed lease rescued, whole-model
 * tasks enqueued, a job canceled, rows inserted by hand, and task rows deleted.
 */
class TaskCountsTest {
  private static final int OBJECTS = 60;
  private static final int FOLLOWERS = 5;
  private static final long CHUNK = 1 << 20;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** What the counters say, without zero rows. */
  private static Map<String, Long> counters(String jobId) {
    return byNodeTypeState(
        """
        SELECT node_id, task_type, state, sum(tasks)
          FROM (SELECT node_id, task_type, state, tasks FROM task_counts WHERE job_id = ?
                UNION ALL
                SELECT node_id, task_type, state, tasks FROM task_count_deltas WHERE job_id = ?) u
         GROUP BY 1, 2, 3
        HAVING sum(tasks) <> 0""",
        jobId,
        jobId);
  }

  private static long deltaRows(String jobId) {
    return dsl()
        .fetchOne("SELECT count(*) FROM task_count_deltas WHERE job_id = ?", jobId)
        .get(0, Long.class);
  }

  /** What the task rows say. */
  private static Map<String, Long> counted(String jobId) {
    return byNodeTypeState(
        "SELECT node_id, task_type, state, count(*) FROM tasks WHERE job_id = ? GROUP BY 1, 2, 3",
        jobId);
  }

  /** "node type state" to count, from a query answering those four columns. */
  private static Map<String, Long> byNodeTypeState(String sql, Object... binds) {
    Map<String, Long> out = new TreeMap<>();
    dsl()
        .resultQuery(sql, binds)
        .forEach(
            r ->
                out.put(
                    r.get(0, String.class)
                        + " "
                        + r.get(1, String.class)
                        + " "
                        + r.get(2, String.class),
                    r.get(3, Long.class)));
    return out;
  }

  private static void assertCountsMatch(String jobId, String after) {
    Map<String, Long> rows = counted(jobId);
    assertTrue(!rows.isEmpty() || after.contains("deleted"), after + ": the job has tasks");
    assertEquals(rows, counters(jobId), "task_counts after " + after);
  }

  static List<String> createJob(DSLContext dsl, String jobId) {
    String seed = "10.4.0.0:1";
    List<String> targets = new ArrayList<>(List.of(seed));
    IntStream.rangeClosed(1, FOLLOWERS).forEach(i -> targets.add("10.4.1." + i + ":1"));
    ModelRef model = new ModelRef(jobId, "r1", "safetensors", "local");
    List<String> ids = IntStream.range(0, OBJECTS).mapToObj(i -> jobId + "/m.bin/" + i).toList();
    ManifestFile file =
        new ManifestFile(
            "m.bin",
            OBJECTS * CHUNK,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            ids,
            new ChunkLayout(CHUNK, OBJECTS, jobId + "/m.bin"));
    JobRequest req =
        new JobRequest(
            jobId,
            model,
            new Manifest(model, OBJECTS * CHUNK, "v1", List.of(file)),
            seed,
            targets,
            null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl).create(req, "sha", "{}"));
    return targets;
  }

  /** The seed publishes the first {@code n} objects. */
  static void publish(DSLContext dsl, String jobId, String seed, int from, int to) {
    dsl.execute(
        """
            INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
            SELECT object_id, ?, length_bytes, 'sha256:' || md5(object_id) || md5(object_id), '/d/m.bin', offset_bytes
              FROM job_objects WHERE job_id = ? AND chunk_index >= ? AND chunk_index < ?""",
        seed,
        jobId,
        from,
        to);
  }

  @Test
  void countersEqualTheTaskRowsAfterEveryKindOfWrite() {
    String job = "counts";
    List<String> targets = createJob(dsl(), job);
    String seed = targets.get(0);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    assertCountsMatch(job, "the download enqueued");

    ClaimedTask download = q.claim(seed, seed + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertCountsMatch(job, "the download claimed");
    publish(dsl(), job, seed, 0, 20);
    assertTrue(ScheduleJob.run(dsl(), job));
    assertCountsMatch(job, "the first release");
    publish(dsl(), job, seed, 20, OBJECTS);
    assertTrue(ScheduleJob.run(dsl(), job));
    assertCountsMatch(job, "the second release");

    // Follower 1: claims, progress, successes, a retry, a deferral.
    String f1 = targets.get(1);
    List<ClaimedTask> held = q.claim(f1, f1 + "/w", 8, Duration.ofMinutes(5));
    assertEquals(8, held.size());
    assertCountsMatch(job, "a claim");
    assertTrue(q.progress(held.get(0).taskId(), f1 + "/w", 1000, seed));
    q.progressAll(
        new long[] {held.get(1).taskId(), held.get(2).taskId()},
        new String[] {f1 + "/w", f1 + "/w"},
        new long[] {10, 20});
    assertCountsMatch(job, "progress");
    q.succeedAll(
        held.subList(0, 4).stream()
            .map(t -> new TaskQueue.Completion(t.taskId(), f1 + "/w", CHUNK, null, List.of()))
            .toList());
    assertCountsMatch(job, "successes");
    assertEquals("pending", q.fail(held.get(4).taskId(), f1 + "/w", "peer reset", true));
    assertCountsMatch(job, "a retryable failure");
    assertTrue(q.defer(held.get(5).taskId(), f1 + "/w", Duration.ofMillis(1)));
    assertCountsMatch(job, "a deferral");

    // Follower 2: a failure for good fails its placement; the pass cancels its pending copies.
    String f2 = targets.get(2);
    ClaimedTask doomed = q.claim(f2, f2 + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertEquals("failed", q.fail(doomed.taskId(), f2 + "/w", "disk full", false));
    assertCountsMatch(job, "a failure for good");
    assertTrue(ScheduleJob.run(dsl(), job));
    assertCountsMatch(job, "the pass after a failed placement");

    // Follower 3: a lease that lapses and is rescued.
    String f3 = targets.get(3);
    List<ClaimedTask> lapsing = q.claim(f3, f3 + "/w", 3, Duration.ofMillis(1));
    assertEquals(3, lapsing.size());
    dsl()
        .execute(
            "UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE lease_owner = ?",
            f3 + "/w");
    assertTrue(q.rescueExpiredLeases() >= 3);
    assertCountsMatch(job, "a rescue");

    // The seed's download finishes; a row inserted by hand (payload given) is counted too.
    assertTrue(q.succeed(download.taskId(), seed + "/w", OBJECTS * CHUNK, null, List.of()));
    dsl()
        .execute(
            """
            INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total)
            VALUES (?, ?, 'REPLICA_COPY', 'by-hand', '{}', 1)""",
            job,
            targets.get(4));
    assertCountsMatch(job, "an insert by hand");
    long deltas = deltaRows(job);
    assertTrue(ScheduleJob.run(dsl(), job));
    assertCountsMatch(job, "a pass");
    assertTrue(deltaRows(job) < deltas, "the pass folds the deltas: " + deltas + " rows before it");

    // Canceled: the pending rows of every node change state in one statement.
    assertNotNull(new JobCancel(dsl()).cancel(job));
    assertCountsMatch(job, "the job canceled");
    Map<String, Long> before = counted(job);
    assertTrue(before.keySet().stream().anyMatch(k -> k.endsWith(" canceled")), before.toString());

    // Deleted rows (what pruning does) leave no count behind.
    dsl().execute("DELETE FROM tasks WHERE job_id = ? AND node_id = ?", job, f1);
    assertCountsMatch(job, "a follower's rows deleted");
    dsl().execute("DELETE FROM tasks WHERE job_id = ?", job);
    assertEquals(Map.of(), counters(job), "task_counts after every row deleted");
  }
}
