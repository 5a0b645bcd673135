package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A target that never comes up, on real processes: its placement fails after the master's {@code
 * --node-grace-seconds} with that reason, the seed stages anyway, and the job ends {@code failed}
 * instead of waiting forever.
 */
class NodeNeverComesUpTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aTargetThatNeverRegistersFailsAfterTheGraceWithThatReason() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/n.bin"), 2 * MIB, 5);
    String seed = "127.0.0.1:" + TestFiles.freePort();
    String ghost = "127.0.0.1:" + TestFiles.freePort();
    int httpPort = TestFiles.freePort();
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      procs.start(
          "master",
          "mooncake_master",
          "--http-port",
          String.valueOf(httpPort),
          "--allow-any-source",
          "--db-url",
          pg.url(),
          "--scheduler-tick-ms",
          "200",
          "--node-grace-seconds",
          "3",
          "--no-auth");
      Api api = new Api("http://127.0.0.1:" + httpPort);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      procs.start(
          "seed",
          "mooncake_client",
          "--node-id",
          seed,
          "--data-dir",
          tmp.resolve("seed").toString(),
          "--db-url",
          pg.url(),
          "--poll-ms",
          "200");
      Processes.await(
          "the seed live",
          Duration.ofSeconds(60),
          () -> api.get("/api/v1/nodes").json().get("nodes").size() == 1);
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "ghost",
                      "model-n",
                      "r1",
                      List.of(
                          new FileSpec(
                              "n.bin",
                              2 * MIB,
                              MIB,
                              "sha256:" + TestFiles.sha256(src),
                              src.toString())),
                      seed,
                      List.of(seed, ghost)))
              .status());

      JsonNode job =
          api.awaitJob(
              "ghost",
              j -> j.get("status").asText().matches("completed|failed|canceled"),
              Duration.ofSeconds(90));
      assertEquals("failed", job.get("status").asText(), job.toString());
      for (JsonNode p : job.get("placements")) {
        if (p.get("node_id").asText().equals(seed)) {
          assertEquals("staged", p.get("state").asText(), job.toString());
        } else {
          assertEquals("failed", p.get("state").asText(), job.toString());
          assertTrue(
              p.get("last_error")
                  .asText()
                  .startsWith("node " + ghost + " never came up: no heartbeat within 3 s"),
              job.toString());
        }
      }
    }
  }
}
