package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RFC's Phase 1 end to end on real processes: {@code bin/mooncake_master} and two {@code
 * bin/mooncake_client}s as separate OS processes, the RFC's example request verbatim, and the
 * staged bytes compared on disk.
 */
class EndToEndTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void theRfcExampleRequestStagesTheModelOnBothNodes() throws Exception {
    Path source = TestFiles.random(Path.of("/tmp/mooncake-dist-test/model.bin"), 1_048_576, 42);
    int httpPort = TestFiles.freePort();
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      // As a control plane runs it: the API only answers a bearer token.
      String token = "e2e-write-token-0123456789";
      Path tokens =
          TestFiles.privateFile(tmp.resolve("api-tokens"), "write " + token + " control-plane\n");
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
          "--api-tokens-file",
          tokens.toString());
      Api api = new Api("http://127.0.0.1:" + httpPort, token, null);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      procs.start(
          "seed",
          "mooncake_client",
          "--node-id",
          "127.0.0.1:25001",
          "--data-dir",
          tmp.resolve("n1").toString(),
          "--db-url",
          pg.url(),
          "--poll-ms",
          "200");
      procs.start(
          "follower",
          "mooncake_client",
          "--node-id",
          "127.0.0.1:25002",
          "--data-dir",
          tmp.resolve("n2").toString(),
          "--db-url",
          pg.url(),
          "--poll-ms",
          "200");
      Processes.await(
          "both nodes registered and live",
          Duration.ofSeconds(60),
          () -> {
            JsonNode nodes = api.get("/api/v1/nodes").json().get("nodes");
            int live = 0;
            for (JsonNode n : nodes) {
              live += n.get("live").asBoolean() ? 1 : 0;
            }
            return live == 2;
          });

      Api.Reply created = api.post("/api/v1/model-distribution/jobs", Requests.rfcExample());
      assertEquals(201, created.status(), String.valueOf(created.json()) + procs.log("master"));
      JsonNode job =
          api.awaitJob(
              "019d3ca8-c2e7-7d73-ab73-445f9143d1eb",
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));

      String logs =
          "\nmaster:\n"
              + procs.log("master")
              + "\nseed:\n"
              + procs.log("seed")
              + "\nfollower:\n"
              + procs.log("follower");
      assertEquals("completed", job.get("status").asText(), job + logs);
      assertTrue(job.get("last_error").isNull());
      assertEquals(2, job.get("placements").size());
      for (JsonNode p : job.get("placements")) {
        assertEquals("staged", p.get("state").asText());
        assertEquals(1_048_576, p.get("staged_bytes").asLong());
        assertTrue(p.get("checksum_verified").asBoolean());
        assertTrue(p.get("last_error").isNull());
        Path staged = Path.of(p.get("local_path").asText()).resolve("model.bin");
        assertTrue(TestFiles.sameBytes(source, staged), "bytes differ at " + staged);
      }
      assertTrue(
          Path.of(job.get("placements").get(0).get("local_path").asText())
              .startsWith(tmp.resolve("n1").toRealPath()));
      assertTrue(
          Path.of(job.get("placements").get(1).get("local_path").asText())
              .startsWith(tmp.resolve("n2").toRealPath()));
    } finally {
      Files.deleteIfExists(source);
    }
  }

  @Test
  void bothLaunchersPrintHelpAndFailFastOnBadFlagsOrAnUnreachableDatabase() {
    for (String launcher : new String[] {"mooncake_master", "mooncake_client"}) {
      Processes.Run help = Processes.run(launcher, "--help");
      assertEquals(0, help.exitCode(), help.output());
      assertTrue(help.output().contains("--db-url"), help.output());

      Processes.Run bad =
          launcher.equals("mooncake_master")
              ? Processes.run(launcher, "--no-such-flag")
              : Processes.run(
                  launcher,
                  "--node-id",
                  "127.0.0.1:25009",
                  "--data-dir",
                  tmp.toString(),
                  "--no-such-flag");
      assertEquals(2, bad.exitCode(), bad.output());
      assertTrue(bad.output().contains("--no-such-flag"), bad.output());
    }
    Processes.Run masterDown =
        Processes.run(
            "mooncake_master", "--no-auth", "--db-url", "jdbc:postgresql://127.0.0.1:1/none");
    assertEquals(3, masterDown.exitCode(), masterDown.output());
    assertTrue(masterDown.output().contains("cannot connect to database"), masterDown.output());

    Processes.Run clientDown =
        Processes.run(
            "mooncake_client",
            "--node-id",
            "127.0.0.1:25009",
            "--data-dir",
            tmp.resolve("x").toString(),
            "--db-url",
            "jdbc:postgresql://127.0.0.1:1/none");
    assertEquals(3, clientDown.exitCode(), clientDown.output());
    assertTrue(clientDown.output().contains("cannot connect to database"), clientDown.output());

    Processes.Run badNode =
        Processes.run(
            "mooncake_client",
            "--node-id",
            "node1",
            "--data-dir",
            tmp.toString(),
            "--db-url",
            pg.url());
    assertEquals(2, badNode.exitCode(), badNode.output());
    assertTrue(badNode.output().contains("host:port"), badNode.output());

    Processes.Run missing = Processes.run("mooncake_client", "--data-dir", tmp.toString());
    assertEquals(2, missing.exitCode(), missing.output());
    assertTrue(missing.output().contains("--node-id"), missing.output());

    Processes.Run noDb = Processes.run("mooncake_master", "--db-url", "");
    assertEquals(2, noDb.exitCode(), noDb.output());
    assertTrue(noDb.output().contains("MOONCAKE_DB_URL"), noDb.output());
  }
}
