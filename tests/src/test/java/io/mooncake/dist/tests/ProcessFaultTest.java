package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPT_LOG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.ProcessCluster;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crashes over real processes: a follower and a master killed with SIGKILL mid-job, and every
 * database connection cut mid-job (what a Postgres restart does to clients). Each job must still
 * complete with identical bytes. Followers copy under a download limit so the job is reliably still
 * running when the fault hits.
 */
class ProcessFaultTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  private Api startMaster(Processes procs, String name) {
    return new ProcessCluster(procs, pg).startMaster(name);
  }

  @Test
  void aHolderKilledMidChunkIsResumedFromAnotherHolderAtTheByteItStopped() throws Exception {
    // One 32 MiB object, so the copy under test is a single chunk, larger than the socket buffers
    // between the two nodes (which still deliver what the killed holder had queued).
    Path src = TestFiles.random(tmp.resolve("src/k.bin"), 32 * MIB, 29);
    int seedPort = TestFiles.freePort();
    int holderPort = TestFiles.freePort();
    int followerPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + seedPort;
    String holder = "127.0.0.1:" + holderPort;
    String follower = "127.0.0.1:" + followerPort;
    List<FileSpec> files =
        List.of(
            new FileSpec(
                "k.bin", 32 * MIB, 32 * MIB, "sha256:" + TestFiles.sha256(src), src.toString()));
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api api = startMaster(procs, "master");
      startClient(procs, "seed", seedPort, tmp.resolve("k-seed"));
      startClient(procs, "holder", holderPort, tmp.resolve("k-holder"));
      // The follower reads at 40 Mbit/s: 6.7 s for the object, time enough to kill the holder early
      // on.
      startClient(
          procs,
          "follower",
          followerPort,
          tmp.resolve("k-follower"),
          "--download-limit-mbit",
          "40");
      awaitLive(api, 3);
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job("resume-1", "model-k", "r1", files, seed, List.of(seed, holder)))
              .status());
      assertEquals("completed", api.awaitTerminal("resume-1").get("status").asText());

      // The seed looks flaky, so the follower tries the slow holder first and the seed only after
      // it.
      pg.database()
          .dsl()
          .execute(
              "UPDATE nodes SET serve_failures = 3, serve_failed_at = now() WHERE node_id = ?",
              seed);
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job("resume-2", "model-k", "r1", files, seed, List.of(seed, follower)))
              .status());
      api.awaitJob(
          "resume-2",
          j -> placement(j, follower).get("staged_bytes").asLong() >= 2 * MIB,
          Duration.ofSeconds(60));
      procs.kill("holder");

      JsonNode job =
          api.awaitJob(
              "resume-2",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));
      String log = procs.log("follower");
      assertEquals("completed", job.get("status").asText(), job + log);
      assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("k-follower"), "model-k", "k.bin")));
      assertTrue(
          log.matches(
              "(?s).*object model-k/r1/k.bin/chunk-000: resumed at byte [1-9][0-9]* from "
                  + seed
                  + " after an interrupted fetch; verified whole.*"),
          log);
      assertEquals(
          1,
          pg.database()
              .dsl()
              .fetchCount(
                  TASKS,
                  TASKS
                      .JOB_ID
                      .eq("resume-2")
                      .and(TASKS.TASK_TYPE.eq("REPLICA_COPY"))
                      .and(TASKS.ATTEMPTS.eq(1))),
          "resumed within the first attempt");
    }
  }

  private Process startClient(Processes procs, String name, int port, Path dir, String... extra) {
    return new ProcessCluster(procs, pg).startClient(name, "127.0.0.1:" + port, dir, extra);
  }

  private static void awaitLive(Api api, int n) {
    ProcessCluster.awaitLive(api, n);
  }

  private static JsonNode placement(JsonNode job, String node) {
    return ProcessCluster.placement(job, node);
  }

  private static Path staged(Path dataDir, String model, String file) {
    return dataDir.resolve("models/local").resolve(model).resolve("r1/bin").resolve(file);
  }

  @Test
  void aFollowerKilledMidCopyResumesFromItsVerifiedChunksAfterRestart() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/k.bin"), 24 * MIB, 21);
    int seedPort = TestFiles.freePort();
    int followerPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + seedPort;
    String follower = "127.0.0.1:" + followerPort;
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api api = startMaster(procs, "master");
      startClient(procs, "seed", seedPort, tmp.resolve("seed"));
      Process slow =
          startClient(
              procs,
              "follower-1",
              followerPort,
              tmp.resolve("follower"),
              "--download-limit-mbit",
              "40",
              "--concurrency",
              "2");
      awaitLive(api, 2);
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "kill-follower",
                      "model-k",
                      "r1",
                      List.of(new FileSpec("k.bin", 24 * MIB, MIB, "dummy", src.toString())),
                      seed,
                      List.of(seed, follower)))
              .status());
      api.awaitJob(
          "kill-follower",
          j -> placement(j, follower).get("staged_bytes").asLong() >= 4 * MIB,
          Duration.ofSeconds(60));
      slow.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      List<Long> doneBeforeKill =
          pg.database()
              .dsl()
              .select(TASKS.TASK_ID)
              .from(TASKS)
              .where(TASKS.JOB_ID.eq("kill-follower"))
              .and(TASKS.NODE_ID.eq(follower))
              .and(TASKS.TASK_TYPE.eq("REPLICA_COPY"))
              .and(TASKS.STATE.eq("succeeded"))
              .fetch(TASKS.TASK_ID);
      assertTrue(
          doneBeforeKill.size() >= 2 && doneBeforeKill.size() < 24,
          "killed mid-copy: " + doneBeforeKill.size());

      startClient(procs, "follower-2", followerPort, tmp.resolve("follower"));
      JsonNode job =
          api.awaitJob(
              "kill-follower",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));
      assertEquals("completed", job.get("status").asText(), job + procs.log("follower-2"));
      assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("follower"), "model-k", "k.bin")));
      // Chunks verified before the crash were not fetched again.
      for (long id : doneBeforeKill) {
        assertEquals(
            1,
            pg.database().dsl().fetchCount(TASK_ATTEMPT_LOG, TASK_ATTEMPT_LOG.TASK_ID.eq(id)),
            "task " + id + " was redone");
      }
    }
  }

  @Test
  void aMasterKilledMidJobIsReplacedByTheOtherOne() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/m.bin"), 16 * MIB, 22);
    int seedPort = TestFiles.freePort();
    int followerPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + seedPort;
    String follower = "127.0.0.1:" + followerPort;
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api first = startMaster(procs, "master-1");
      Api second = startMaster(procs, "master-2");
      startClient(procs, "seed", seedPort, tmp.resolve("seed"));
      startClient(
          procs, "follower", followerPort, tmp.resolve("follower"), "--download-limit-mbit", "40");
      awaitLive(first, 2);
      assertEquals(
          201,
          first
              .post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "kill-master",
                      "model-m",
                      "r1",
                      List.of(new FileSpec("m.bin", 16 * MIB, MIB, "dummy", src.toString())),
                      seed,
                      List.of(seed, follower)))
              .status());
      first.awaitJob(
          "kill-master",
          j -> placement(j, follower).get("staged_bytes").asLong() > 0,
          Duration.ofSeconds(60));
      procs.kill("master-1");
      JsonNode job =
          second.awaitJob(
              "kill-master",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));
      assertEquals("completed", job.get("status").asText(), job.toString());
      assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("follower"), "model-m", "m.bin")));
    }
  }

  @Test
  void everyDatabaseConnectionCutMidJobIsSurvivedByMastersAndClients() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/p.bin"), 16 * MIB, 23);
    int seedPort = TestFiles.freePort();
    int followerPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + seedPort;
    String follower = "127.0.0.1:" + followerPort;
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api api = startMaster(procs, "master");
      startClient(procs, "seed", seedPort, tmp.resolve("seed"));
      startClient(
          procs, "follower", followerPort, tmp.resolve("follower"), "--download-limit-mbit", "40");
      awaitLive(api, 2);
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "cut-db",
                      "model-p",
                      "r1",
                      List.of(new FileSpec("p.bin", 16 * MIB, MIB, "dummy", src.toString())),
                      seed,
                      List.of(seed, follower)))
              .status());
      api.awaitJob(
          "cut-db",
          j -> placement(j, follower).get("staged_bytes").asLong() > 0,
          Duration.ofSeconds(60));
      // What a Postgres restart does to its clients: every session of this database is gone.
      int cut =
          pg.database()
              .dsl()
              .fetchOne(
                  """
          SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid()""")
              .get(0, Integer.class);
      assertTrue(cut >= 3, "expected master and client sessions to cut, got " + cut);
      JsonNode job =
          api.awaitJob(
              "cut-db",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(120));
      assertEquals("completed", job.get("status").asText(), job + procs.log("follower"));
      assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("follower"), "model-p", "p.bin")));
    }
  }
}
