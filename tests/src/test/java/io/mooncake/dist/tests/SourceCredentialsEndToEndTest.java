package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials by reference, end to end on real processes: the registry wants a token, the job names
 * only the URL, the seed's {@code --source-credentials} file supplies the header, and the token
 * appears in no table, snapshot or log.
 */
class SourceCredentialsEndToEndTest {
  private static final long MIB = 1024 * 1024;
  private static final String TOKEN = "Bearer registry-token-9f8e7d6c5b4a";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aPrivateHttpSourceStagesWithTheNodesCredentialWhichIsStoredNowhereElse() throws Exception {
    Path model = TestFiles.random(tmp.resolve("src/model.bin"), 2 * MIB + 4321, 7);
    byte[] bytes = Files.readAllBytes(model);
    AtomicInteger refused = new AtomicInteger();
    HttpServer registry = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    registry.createContext(
        "/private/model.bin",
        exchange -> {
          boolean ok = TOKEN.equals(exchange.getRequestHeaders().getFirst("Authorization"));
          if (!ok) {
            refused.incrementAndGet();
          }
          exchange.sendResponseHeaders(ok ? 200 : 401, ok ? bytes.length : -1);
          try (OutputStream out = exchange.getResponseBody()) {
            if (ok) {
              out.write(bytes);
            }
          }
        });
    registry.start();
    String base = "http://127.0.0.1:" + registry.getAddress().getPort();
    Path creds =
        TestFiles.privateFile(
            tmp.resolve("seed-credentials"),
            "# the model registry\n" + base + "/private/ Authorization: " + TOKEN + "\n");
    int httpPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + TestFiles.freePort();
    String follower = "127.0.0.1:" + TestFiles.freePort();
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
          tmp.resolve("n1").toString(),
          "--db-url",
          pg.url(),
          "--poll-ms",
          "200",
          "--source-credentials",
          creds.toString());
      procs.start(
          "follower",
          "mooncake_client",
          "--node-id",
          follower,
          "--data-dir",
          tmp.resolve("n2").toString(),
          "--db-url",
          pg.url(),
          "--poll-ms",
          "200");

      String jobId = UUID.randomUUID().toString();
      String request =
          Requests.job(
              jobId,
              "private-model",
              "r1",
              List.of(
                  new FileSpec(
                      "model.bin",
                      bytes.length,
                      MIB,
                      "sha256:" + TestFiles.sha256(model),
                      base + "/private/model.bin")),
              seed,
              List.of(seed, follower));
      assertFalse(request.contains("registry-token"));
      assertEquals(201, api.post("/api/v1/model-distribution/jobs", request).status());
      JsonNode job =
          api.awaitJob(
              jobId,
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(90));
      String logs = procs.log("master") + procs.log("seed") + procs.log("follower");
      assertEquals("completed", job.get("status").asText(), job + "\n" + logs);
      assertEquals(0, refused.get(), "the seed asked without its credential");
      for (JsonNode p : job.get("placements")) {
        assertTrue(
            TestFiles.sameBytes(model, Path.of(p.get("local_path").asText()).resolve("model.bin")));
      }

      // Nowhere else: not in the snapshot, the logs, or any row of any table.
      assertFalse(job.toString().contains("registry-token"), job.toString());
      assertFalse(logs.contains("registry-token"), logs);
      try (Connection c = pg.database().dataSource().getConnection();
          Statement s = c.createStatement()) {
        List<String> tables = new java.util.ArrayList<>();
        try (ResultSet rs =
            s.executeQuery("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")) {
          while (rs.next()) {
            tables.add(rs.getString(1));
          }
        }
        assertTrue(tables.contains("jobs") && tables.contains("tasks"), tables.toString());
        for (String table : tables) {
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT count(*) FROM " + table + " t WHERE t::text LIKE '%registry-token%'")) {
            rs.next();
            assertEquals(0, rs.getInt(1), "the token is stored in " + table);
          }
        }
      }
    } finally {
      registry.stop(0);
    }
  }
}
