package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A master with a source allowlist refuses other sources at validation and writes nothing. */
class SourcePolicyApiTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  @Test
  void aSourceOutsideTheAllowlistIsRefusedWith400NamingTheFieldAndNothingIsWritten() {
    WebServer server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(
                r ->
                    MasterRouting.routing(
                        r, pg.database(), () -> {}, SourcePolicy.parse("file:///models/")))
            .build()
            .start();
    try {
      Api api = new Api("http://127.0.0.1:" + server.port());
      Api.Reply r = api.post("/api/v1/model-distribution/jobs", Requests.rfcExample());
      assertEquals(400, r.status(), String.valueOf(r.json()));
      assertEquals("manifest.files[0].download_url", r.json().get("field").asText());
      assertTrue(
          r.json().get("error_message").asText().contains("not allowed"), r.json().toString());
      String jobId =
          io.mooncake.dist.scheduler.domain.Json.read(Requests.rfcExample(), JsonNode.class)
              .get("job_id")
              .asText();
      assertEquals(0, pg.database().dsl().fetchCount(JOBS, JOBS.JOB_ID.eq(jobId)));
    } finally {
      server.stop();
    }
  }

  @Test
  void withoutASourceOptionTheMasterRefusesEverySource() {
    int port = TestFiles.freePort();
    try (Processes procs = new Processes(tmp.resolve("default-logs"))) {
      procs.start(
          "master",
          "mooncake_master",
          "--http-port",
          String.valueOf(port),
          "--db-url",
          pg.url(),
          "--no-auth");
      Api api = new Api("http://127.0.0.1:" + port);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      String body =
          Requests.job(
              "default-deny",
              "m",
              "r1",
              List.of(new Requests.FileSpec("h", 5, 5, "dummy", "file:///etc/hostname")),
              "127.0.0.1:1",
              List.of("127.0.0.1:1"));
      Api.Reply r = api.post("/api/v1/model-distribution/jobs", body);
      assertEquals(400, r.status(), String.valueOf(r.json()));
      assertEquals("manifest.files[0].download_url", r.json().get("field").asText());
      assertTrue(
          r.json().get("error_message").asText().contains("--allow-any-source"),
          r.json().toString());
      assertEquals(0, pg.database().dsl().fetchCount(JOBS, JOBS.JOB_ID.eq("default-deny")));
      assertTrue(procs.log("master").contains("no model source is allowed"), procs.log("master"));
    }
    Processes.Run both =
        Processes.run(
            "mooncake_master",
            "--allowed-sources",
            "file:///models/",
            "--allow-any-source",
            "--no-auth",
            "--db-url",
            pg.url());
    assertEquals(2, both.exitCode(), both.output());
    assertTrue(both.output().contains("contradict"), both.output());
  }

  @Test
  void theSeedRefusesARedirectToAnOriginTheJobsRulesDoNotName() throws Exception {
    java.util.concurrent.atomic.AtomicInteger hitsOnB =
        new java.util.concurrent.atomic.AtomicInteger();
    com.sun.net.httpserver.HttpServer b =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    b.createContext(
        "/internal/admin",
        ex -> {
          hitsOnB.incrementAndGet();
          ex.sendResponseHeaders(200, 5);
          ex.getResponseBody().write("admin".getBytes());
          ex.close();
        });
    com.sun.net.httpserver.HttpServer a =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    a.createContext(
        "/model.bin",
        ex -> {
          ex.getResponseHeaders()
              .add("Location", "http://127.0.0.1:" + b.getAddress().getPort() + "/internal/admin");
          ex.sendResponseHeaders(302, -1);
          ex.close();
        });
    a.start();
    b.start();
    String originA = "http://127.0.0.1:" + a.getAddress().getPort();
    try (InProcessCluster cluster =
        new InProcessCluster(pg.database(), SourcePolicy.parse(originA))) {
      String seed = cluster.addNode(tmp.resolve("seed"));
      Api.Reply r =
          cluster
              .api()
              .post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      "redirect-1",
                      "m-redirect",
                      "r1",
                      List.of(
                          new Requests.FileSpec(
                              "model.bin", 5, 5, "dummy", originA + "/model.bin")),
                      seed,
                      List.of(seed)));
      assertEquals(201, r.status(), String.valueOf(r.json()));
      JsonNode job = cluster.api().awaitTerminal("redirect-1");
      assertEquals("failed", job.get("status").asText(), job.toString());
      String error = job.get("last_error").asText();
      assertTrue(error.contains("redirect from " + originA + "/model.bin"), error);
      assertTrue(error.contains("not allowed"), error);
      assertEquals(0, hitsOnB.get(), "the seed never asked B");
    } finally {
      a.stop(0);
      b.stop(0);
    }
  }

  @Test
  void theMasterRefusesAMalformedAllowlistAtStart() {
    Processes.Run run =
        Processes.run("mooncake_master", "--allowed-sources", "ftp://x/", "--db-url", pg.url());
    assertEquals(2, run.exitCode(), run.output());
    assertTrue(run.output().contains("--allowed-sources"), run.output());
  }
}
