package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PrivatePostgres;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Postgres itself stopped mid-job (fast shutdown, a few seconds down, started again), under a real
 * master and two real clients: all of them must reconnect on their own and the job complete with
 * identical bytes. Runs on a private server made with the installed initdb, so the shared test
 * server is never restarted under other tests.
 */
class PostgresRestartTest {
  private static final long MIB = 1024 * 1024;

  @TempDir Path tmp;

  @Test
  void masterAndClientsReconnectAfterPostgresRestartsMidJob() throws Exception {
    Path bin = PrivatePostgres.findBinaries();
    // A Docker-only machine (Testcontainers, no local server) may lack initdb; one that runs its
    // own PostgreSQL for the suite (MOONCAKE_TEST_DB_URL, as CI does) must run this test.
    org.junit.jupiter.api.Assumptions.assumeTrue(
        bin != null || System.getenv("MOONCAKE_TEST_DB_URL") != null,
        "no PostgreSQL server binaries (initdb, pg_ctl) and no local server: the restart test needs them");
    assertNotNull(
        bin,
        "PostgreSQL server binaries (initdb, pg_ctl) are needed for this test: "
            + "install postgresql (Debian: /usr/lib/postgresql/<v>/bin)");
    Path src = TestFiles.random(tmp.resolve("src/r.bin"), 24 * MIB, 31);
    String seed = "127.0.0.1:" + TestFiles.freePort();
    String follower = "127.0.0.1:" + TestFiles.freePort();
    int httpPort = TestFiles.freePort();
    try (PrivatePostgres pg = PrivatePostgres.start(bin);
        Processes procs = new Processes(tmp.resolve("logs"))) {
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
          "--no-auth");
      Api api = new Api("http://127.0.0.1:" + httpPort);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      for (String[] node : new String[][] {{"seed", seed, "0"}, {"follower", follower, "48"}}) {
        procs.start(
            node[0],
            "mooncake_client",
            "--node-id",
            node[1],
            "--data-dir",
            tmp.resolve(node[0]).toString(),
            "--db-url",
            pg.url(),
            "--poll-ms",
            "200",
            "--heartbeat-ms",
            "500",
            "--lease-seconds",
            "5",
            "--download-limit-mbit",
            node[2]);
      }
      Processes.await(
          "both nodes live",
          Duration.ofSeconds(60),
          () -> {
            int live = 0;
            for (JsonNode n : api.get("/api/v1/nodes").json().get("nodes")) {
              live += n.get("live").asBoolean() ? 1 : 0;
            }
            return live == 2;
          });
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "pg-restart",
                      "model-r",
                      "r1",
                      List.of(
                          new FileSpec(
                              "r.bin",
                              24 * MIB,
                              MIB,
                              "sha256:" + TestFiles.sha256(src),
                              src.toString())),
                      seed,
                      List.of(seed, follower)))
              .status());
      JsonNode before =
          api.awaitJob("pg-restart", j -> staged(j, follower) > 0, Duration.ofSeconds(60));
      assertTrue(
          staged(before, follower) < 24 * MIB,
          "the follower finished before the restart: " + before);

      pg.stop();
      // Down long enough for every pool, listener and heartbeat to notice.
      Thread.sleep(3000);
      assertEquals(
          503, api.get("/health").status(), "the master should report the database as unavailable");
      pg.start();

      JsonNode job =
          api.awaitJob(
              "pg-restart",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(120));
      String logs =
          "\nmaster:\n"
              + procs.log("master")
              + "\nfollower:\n"
              + procs.log("follower")
              + "\npostgres:\n"
              + pg.log();
      assertEquals("completed", job.get("status").asText(), job + logs);
      for (JsonNode p : job.get("placements")) {
        assertEquals("staged", p.get("state").asText(), job.toString());
        assertTrue(
            TestFiles.sameBytes(src, Path.of(p.get("local_path").asText()).resolve("r.bin")));
      }
    } catch (UncheckedIOException e) {
      throw new AssertionError("the master stopped answering", e);
    }
  }

  private static long staged(JsonNode job, String node) {
    for (JsonNode p : job.get("placements")) {
      if (p.get("node_id").asText().equals(node)) {
        return p.get("staged_bytes").asLong();
      }
    }
    throw new AssertionError("no placement for " + node + " in " + job);
  }
}
