package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.db.jooq.tables.records.TasksRecord;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed's one pull per object holds for a copy that falls back to the seed after a relay failed,
 * not only for one planned from the seed (issue 19: at 1,000 nodes those fallbacks were 39 pulls of
 * one object from the seed at once, each at a 39th of its uplink).
 *
 * <p>A real master, a real seed and a real follower; a second follower that is registered and
 * heartbeating but whose chunk port answers nobody, with its copy of the object running from the
 * seed (its row written as a running pull would write it). The real follower is offered that copy
 * as a relay, fails to reach it, and must not then pull a second copy from the seed while that pull
 * is fresh: it waits and asks again. Once the other pull stops making progress, the seed serves it.
 */
class SeedFallbackTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aCopyWhoseRelayFailsWaitsForTheSeedsOtherPullInsteadOfTakingASecond() throws Exception {
    DSLContext dsl = pg.database().dsl();
    try (InProcessCluster cluster = new InProcessCluster(pg.database())) {
      Api api = cluster.api();
      String seed = cluster.addNode(tmp.resolve("seed"));
      int followerPort = TestFiles.freePort();
      String follower = cluster.addNode(tmp.resolve("follower"), followerPort);
      // Registered, then stopped until the other follower's pull is running.
      cluster.stopNode(follower);
      int silentPort = TestFiles.freePort();
      String silent = "127.0.0.1:" + silentPort;
      new NodeRegistry(dsl).register(silent, "127.0.0.1", silentPort, "/data", "i-silent");

      Path src = TestFiles.random(tmp.resolve("src/a.bin"), MIB, 7);
      String body =
          Requests.job(
              "fallback",
              "model-f",
              "r1",
              List.of(
                  new FileSpec(
                      "a.bin",
                      MIB,
                      MIB,
                      "sha256:" + TestFiles.sha256(src),
                      src.toUri().toString())),
              seed,
              List.of(seed, silent, follower));
      assertEquals(201, api.post("/api/v1/model-distribution/jobs", body).status());

      ScheduledExecutorService keeper = Executors.newSingleThreadScheduledExecutor();
      // The silent follower stays live, and once its copy exists, it runs from the seed, fresh.
      keeper.scheduleAtFixedRate(
          () -> {
            dsl.execute("UPDATE nodes SET heartbeat_at = now() WHERE node_id = ?", silent);
            dsl.execute(
                """
                UPDATE tasks SET state = 'processing', lease_owner = 'silent/w', source_node_id = ?,
                                 lease_expires_at = now() + interval '1 minute',
                                 started_at = coalesce(started_at, now()), updated_at = now()
                 WHERE job_id = 'fallback' AND node_id = ? AND task_type = 'REPLICA_COPY'""",
                seed,
                silent);
          },
          0,
          200,
          TimeUnit.MILLISECONDS);
      try {
        awaitCopy(dsl, silent, "processing");
        cluster.addNode(tmp.resolve("follower"), followerPort);

        // The follower is offered the silent one as a relay, cannot reach it, and waits: the
        // seed is pulled by another follower. Deferrals use no attempt, so it never fails.
        long until = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        boolean claimed = false;
        while (System.nanoTime() < until) {
          TasksRecord copy = copy(dsl, follower);
          assertNotEquals(
              "succeeded",
              copy.getState(),
              "took a second copy from the seed while another follower's pull was fresh");
          assertNotEquals("failed", copy.getState(), String.valueOf(copy.getLastError()));
          claimed |= copy.getStartedAt() != null;
          Thread.sleep(100);
        }
        assertTrue(claimed, "the follower never claimed its copy");
      } finally {
        keeper.shutdownNow();
        keeper.awaitTermination(10, TimeUnit.SECONDS);
      }

      // The other pull stops making progress: 5 s later the seed serves this follower.
      TasksRecord done = awaitCopy(dsl, follower, "succeeded");
      assertEquals(seed, done.getSourceNodeId());
      var replica =
          dsl.selectFrom(OBJECT_REPLICAS).where(OBJECT_REPLICAS.NODE_ID.eq(follower)).fetchOne();
      assertEquals(0, replica.getFileOffset());
      // The file is whole; it is renamed to its final name when the node materializes the model.
      Path file = Path.of(replica.getFilePath());
      Path held = Files.exists(file) ? file : Path.of(file + ".partial");
      assertTrue(TestFiles.sameBytes(src, held), replica.toString());
    }
  }

  private static TasksRecord copy(DSLContext dsl, String node) {
    return dsl.selectFrom(TASKS)
        .where(TASKS.JOB_ID.eq("fallback"))
        .and(TASKS.NODE_ID.eq(node))
        .and(TASKS.TASK_TYPE.eq("REPLICA_COPY"))
        .fetchOne();
  }

  /** A hang guard, not a speed limit. */
  private static TasksRecord awaitCopy(DSLContext dsl, String node, String state)
      throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < until) {
      TasksRecord copy = copy(dsl, node);
      if (copy != null && state.equals(copy.getState())) {
        return copy;
      }
      Thread.sleep(50);
    }
    throw new AssertionError(node + "'s copy never became " + state + ": " + copy(dsl, node));
  }
}
