package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.PlacementSnapshot;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A job with a thousand objects and forty followers: its copy tasks are enqueued by one set-based
 * statement for all followers (never one per task or per follower), and its snapshot is two key
 * lookups whose byte figures equal the sum over the task rows. Times belong to bench/queue.sh.
 */
class LargeJobTest {
  private static final int OBJECTS = 1_000;
  private static final int FOLLOWERS = 40;
  private static final long CHUNK = 1 << 20;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** The same database access, counting the statements it sends. */
  private static DSLContext counting(AtomicInteger statements) {
    ExecuteListener count =
        new ExecuteListener() {
          @Override
          public void executeStart(ExecuteContext ctx) {
            statements.incrementAndGet();
          }
        };
    return dsl().configuration().derive(new DefaultExecuteListenerProvider(count)).dsl();
  }

  @Test
  void copiesAreEnqueuedSetBasedAndTheSnapshotReadsNoTaskRows() {
    String seed = "10.3.0.0:1";
    List<String> targets = new ArrayList<>(List.of(seed));
    IntStream.rangeClosed(1, FOLLOWERS).forEach(i -> targets.add("10.3.1." + i + ":1"));
    ModelRef model = new ModelRef("large", "r1", "safetensors", "local");
    List<String> ids = IntStream.range(0, OBJECTS).mapToObj(i -> "large/m.bin/" + i).toList();
    ManifestFile file =
        new ManifestFile(
            "m.bin",
            OBJECTS * CHUNK,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            ids,
            new ChunkLayout(CHUNK, OBJECTS, "large/m.bin"));
    JobRequest req =
        new JobRequest(
            "large",
            model,
            new Manifest(model, OBJECTS * CHUNK, "v1", List.of(file)),
            seed,
            targets,
            null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha", "{}"));
    assertTrue(ScheduleJob.run(dsl(), "large"));

    TaskQueue q = new TaskQueue(dsl());
    ClaimedTask download = q.claim(seed, seed + "/w", 1, Duration.ofMinutes(5)).get(0);
    dsl()
        .transaction(
            cfg -> {
              cfg.dsl()
                  .execute(
                      """
          INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
          SELECT object_id, ?, length_bytes, 'sha256:' || md5(object_id) || md5(object_id), '/d/m.bin', offset_bytes
            FROM job_objects WHERE job_id = 'large'""",
                      seed);
              assertTrue(
                  new TaskQueue(cfg.dsl())
                      .succeed(download.taskId(), seed + "/w", OBJECTS * CHUNK, null, List.of()));
            });

    AtomicInteger statements = new AtomicInteger();
    // No release window: this is the release of every copy at once (--release-window 0).
    assertTrue(ScheduleJob.run(counting(statements), "large", 0));
    assertEquals(OBJECTS * FOLLOWERS, dsl().fetchCount(TASKS, TASKS.TASK_TYPE.eq("REPLICA_COPY")));
    assertTrue(
        statements.get() <= 20,
        statements.get()
            + " statements for "
            + OBJECTS * FOLLOWERS
            + " tasks: one release statement for every follower");
    assertEquals(
        0,
        dsl().fetchCount(TASKS, TASKS.TASK_TYPE.eq("REPLICA_COPY").and(TASKS.PAYLOAD.isNotNull())),
        "copies carry no payload");

    // Some progress and successes on a few followers, then the snapshot.
    for (int i = 1; i <= 3; i++) {
      String node = targets.get(i);
      List<ClaimedTask> held = q.claim(node, node + "/w", 10, Duration.ofMinutes(5));
      q.succeedAll(
          held.subList(0, 7).stream()
              .map(t -> new TaskQueue.Completion(t.taskId(), node + "/w", CHUNK, null, List.of()))
              .toList());
      for (ClaimedTask t : held.subList(7, 10)) {
        assertTrue(q.progress(t.taskId(), node + "/w", 1000L * i, seed));
      }
    }
    statements.set(0);
    JobSnapshot snap = new JobStore(counting(statements)).snapshot("large").orElseThrow();
    assertEquals(2, statements.get(), "job row, placements joined to their byte counters");
    Map<String, Long> summed =
        dsl()
            .resultQuery(
                """
            SELECT node_id, sum(CASE WHEN state = 'succeeded' THEN bytes_total ELSE bytes_done END)::bigint
              FROM tasks WHERE job_id = 'large' AND task_type IN ('MODEL_DOWNLOAD', 'REPLICA_COPY') GROUP BY node_id""")
            .fetchMap(r -> r.get(0, String.class), r -> r.get(1, Long.class));
    for (PlacementSnapshot p : snap.placements()) {
      long expected =
          p.state().equals("staged")
              ? OBJECTS * CHUNK
              : Math.min(OBJECTS * CHUNK, summed.getOrDefault(p.nodeId(), 0L));
      assertEquals(expected, p.stagedBytes(), p.nodeId());
    }
    assertEquals(
        7 * CHUNK + 3 * 2000L,
        snap.placements().stream()
            .filter(p -> p.nodeId().equals(targets.get(2)))
            .findFirst()
            .orElseThrow()
            .stagedBytes());
    assertEquals(
        FOLLOWERS + 1,
        snap.placements().size(),
        snap.placements().stream().map(PlacementSnapshot::nodeId).collect(Collectors.joining(",")));
  }
}
