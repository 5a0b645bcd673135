package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job of a few followers relays along a chain in target order (the worker's RelayChain), over
 * real processes: each follower reads every object from the one before it, the first from the seed;
 * and a follower killed mid-job takes its successor off the chain without losing the job.
 */
class RelayChainEndToEndTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void everyFollowerReadsEveryObjectFromTheOneBeforeItInTargetOrder() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/c.bin"), 16 * MIB, 41);
    int[] ports = {TestFiles.freePort(), TestFiles.freePort(), TestFiles.freePort()};
    String seed = "127.0.0.1:" + TestFiles.freePort();
    List<String> followers = new ArrayList<>();
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      ProcessCluster cluster = new ProcessCluster(procs, pg);
      Api api = cluster.startMaster("master");
      cluster.startClient("seed", seed, tmp.resolve("seed"));
      for (int i = 0; i < ports.length; i++) {
        String id = "127.0.0.1:" + ports[i];
        followers.add(id);
        cluster.startClient("f" + i, id, tmp.resolve("f" + i), "--download-limit-mbit", "200");
      }
      ProcessCluster.awaitLive(api, 4);
      // Target order is not node-id order: the chain follows the caller's order.
      List<String> order = List.of(followers.get(2), followers.get(0), followers.get(1));
      List<String> targets = new ArrayList<>(List.of(seed));
      targets.addAll(order);
      post(api, "chain-1", src, 16 * MIB, seed, targets);
      JsonNode job = api.awaitTerminal("chain-1");
      assertEquals("completed", job.get("status").asText(), job.toString());
      for (int i = 0; i < ports.length; i++) {
        assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("f" + i))), "f" + i);
      }
      Map<String, String> predecessor =
          Map.of(order.get(0), seed, order.get(1), order.get(0), order.get(2), order.get(1));
      var copies =
          pg.database()
              .dsl()
              .select(TASKS.NODE_ID, TASKS.SOURCE_NODE_ID)
              .from(TASKS)
              .where(TASKS.JOB_ID.eq("chain-1"))
              .and(TASKS.TASK_TYPE.eq("REPLICA_COPY"))
              .fetch();
      assertEquals(3 * 16, copies.size());
      for (var c : copies) {
        assertEquals(
            predecessor.get(c.value1()), c.value2(), c.value1() + " read from " + c.value2());
      }
    }
  }

  @Test
  void aFollowerKilledMidJobTakesItsSuccessorOffTheChainAndTheJobCompletes() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/k.bin"), 24 * MIB, 43);
    String seed = "127.0.0.1:" + TestFiles.freePort();
    List<String> followers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      followers.add("127.0.0.1:" + TestFiles.freePort());
    }
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      ProcessCluster cluster = new ProcessCluster(procs, pg);
      Api api = cluster.startMaster("master");
      cluster.startClient("seed", seed, tmp.resolve("seed"));
      Process middle = null;
      for (int i = 0; i < 3; i++) {
        // 40 Mbit/s each: about 5 s for the model, time enough to kill the middle one early on.
        Process p =
            cluster.startClient(
                "f" + i, followers.get(i), tmp.resolve("f" + i), "--download-limit-mbit", "40");
        if (i == 1) {
          middle = p;
        }
      }
      ProcessCluster.awaitLive(api, 4);
      List<String> targets = new ArrayList<>(List.of(seed));
      targets.addAll(followers);
      post(api, "chain-kill", src, 24 * MIB, seed, targets);
      api.awaitJob(
          "chain-kill",
          j ->
              ProcessCluster.placement(j, followers.get(1)).get("staged_bytes").asLong() >= 4 * MIB,
          Duration.ofSeconds(60));
      middle.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      // The last follower finishes without the middle one: from the seed and the first follower.
      api.awaitJob(
          "chain-kill",
          j -> ProcessCluster.placement(j, followers.get(2)).get("state").asText().equals("staged"),
          Duration.ofSeconds(90));
      assertTrue(
          procs.log("f2").contains("leaving the relay chain"),
          "the successor of the killed follower left the chain: " + procs.log("f2"));

      cluster.startClient("f1-again", followers.get(1), tmp.resolve("f1"));
      JsonNode job =
          api.awaitJob(
              "chain-kill",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));
      assertEquals("completed", job.get("status").asText(), job.toString());
      for (int i = 0; i < 3; i++) {
        assertTrue(TestFiles.sameBytes(src, staged(tmp.resolve("f" + i))), "f" + i);
      }
    }
  }

  private static void post(
      Api api, String jobId, Path src, long size, String seed, List<String> targets) {
    assertEquals(
        201,
        api.post(
                "/api/v1/model-distribution/jobs",
                Requests.job(
                    jobId,
                    "model-" + jobId,
                    "r1",
                    List.of(new FileSpec("m.bin", size, MIB, "dummy", src.toString())),
                    seed,
                    targets))
            .status());
  }

  private static Path staged(Path dataDir) throws java.io.IOException {
    try (var files = java.nio.file.Files.walk(dataDir.resolve("models"))) {
      return files
          .filter(p -> p.getFileName().toString().equals("m.bin"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no m.bin under " + dataDir));
    }
  }
}
