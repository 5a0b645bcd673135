package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.helidon.webserver.WebServer;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * Nothing the database says reaches an API caller: NUL bytes are refused as 400s naming the field
 * before any SQL runs, and a 5xx carries a generic message with an error id the log line repeats.
 */
class ApiErrorLeakTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  static InProcessCluster cluster;
  static Api api;

  @BeforeAll
  static void start() {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static void assertNoSql(Api.Reply r) {
    String body = String.valueOf(r.json()).toLowerCase(Locale.ROOT);
    for (String word : new String[] {"select ", "insert ", "update ", "sql", "exception", "jooq"}) {
      assertFalse(body.contains(word), "'" + word + "' in " + body);
    }
  }

  private static void assert400Naming(Api.Reply r, String field) {
    assertEquals(400, r.status(), String.valueOf(r.json()));
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(400, r.json().get("error_code").asInt());
    assertEquals(field, r.json().get("field").asText(), r.json().toString());
    assertNoSql(r);
  }

  @Test
  void aNulInJobIdIsA400NamingItOnEveryRoute() {
    assert400Naming(api.get("/api/v1/model-distribution/jobs?job_id=%00"), "job_id");
    assert400Naming(
        api.post("/api/v1/model-distribution/jobs/cancel?job_id=%00", new byte[0]), "job_id");
    assert400Naming(api.get("/api/v1/model-distribution/jobs?job_id=a%20b"), "job_id");
    assert400Naming(
        api.post("/api/v1/model-distribution/jobs/cancel?job_id=" + "x".repeat(129), new byte[0]),
        "job_id");
  }

  @Test
  void aCursorHoldingANulIsA400NamingAfter() {
    String cursor =
        Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString("v1|2026-01-01T00:00:00Z|a\0b".getBytes(StandardCharsets.UTF_8));
    assert400Naming(api.get("/api/v1/model-distribution/jobs?after=" + cursor), "after");
  }

  @Test
  void aNulAnywhereInTheBodyIsA400NamingTheField() throws Exception {
    ObjectNode req = (ObjectNode) Json.MAPPER.readTree(Requests.rfcExample());
    req.put("job_id", "nul-1");
    req.put("comment", "a\u0000b");
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", Json.write(req));
    assert400Naming(r, "comment");
    assertTrue(r.json().get("error_message").asText().contains("U+0000"), r.json().toString());
    assertFalse(r.json().toString().contains("nul-1"), "no excerpt of the body");

    ObjectNode nested = (ObjectNode) Json.MAPPER.readTree(Requests.rfcExample());
    nested.put("job_id", "nul-2");
    ((ObjectNode) nested.get("model")).put("x-extra", "\u0000");
    assert400Naming(
        api.post("/api/v1/model-distribution/jobs", Json.write(nested)), "model.x-extra");
    assertEquals(404, api.job("nul-1").status());
  }

  @Test
  void aDatabaseFailureIsA503WithAnErrorIdTheLogCarriesAndNoSql() {
    Database broken = Database.open(pg.url(), 1, "api-error-leak-test");
    broken.close();
    WebServer server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(r -> MasterRouting.routing(r, broken, () -> {}))
            .build()
            .start();
    Logger logger = (Logger) LoggerFactory.getLogger(MasterRouting.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      Api.Reply r =
          new Api("http://127.0.0.1:" + server.port())
              .get("/api/v1/model-distribution/jobs?job_id=some-job");
      assertEquals(503, r.status(), String.valueOf(r.json()));
      JsonNode body = r.json();
      assertFalse(body.get("success").asBoolean());
      assertEquals(503, body.get("error_code").asInt());
      String id = body.get("error_id").asText();
      assertTrue(id.matches("[0-9a-f]{12}"), body.toString());
      assertTrue(body.get("error_message").asText().contains(id), body.toString());
      assertNoSql(r);
      assertFalse(body.toString().contains("some-job"), body.toString());
      assertTrue(
          logs.list.stream().anyMatch(e -> e.getFormattedMessage().contains(id)),
          "the log line carries the error id");
    } finally {
      logger.detachAppender(logs);
      server.stop();
    }
  }
}
