package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The HTTP contract over a real socket and a real Postgres: create, query, errors, idempotency. */
class DistributionApiTest {
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

  private static ObjectNode rfc() throws Exception {
    return (ObjectNode) Json.MAPPER.readTree(Requests.rfcExample());
  }

  @Test
  void theRfcExampleIsCreatedWith201AndAnRfcShapedSnapshot() throws Exception {
    ObjectNode req = rfc();
    req.put("job_id", "api-create-1");
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", Json.write(req));
    assertEquals(201, r.status(), String.valueOf(r.json()));
    JsonNode s = r.json();
    assertEquals("api-create-1", s.get("job_id").asText());
    assertTrue(s.get("status").asText().matches("planned|seeding"), s.toString());
    assertTrue(s.has("last_error") && s.get("last_error").isNull());
    assertEquals(2, s.get("placements").size());
    for (JsonNode p : s.get("placements")) {
      for (String field :
          List.of(
              "node_id",
              "state",
              "local_path",
              "staged_bytes",
              "checksum_verified",
              "last_error")) {
        assertTrue(p.has(field), "placement lacks " + field + ": " + p);
      }
    }
    assertEquals("127.0.0.1:25001", s.get("placements").get(0).get("node_id").asText());
    assertEquals(
        "object_digests", s.get("integrity").asText(), "a dummy checksum rests on object digests");

    Api.Reply q = api.job("api-create-1");
    assertEquals(200, q.status());
    assertEquals("api-create-1", q.json().get("job_id").asText());
  }

  @Test
  void repeatingTheSamePostIsIdempotentAndADifferentBodyConflicts() throws Exception {
    ObjectNode req = rfc();
    req.put("job_id", "api-idem-1");
    assertEquals(201, api.post("/api/v1/model-distribution/jobs", Json.write(req)).status());
    // Same content, other key order and whitespace.
    String reordered =
        "{\n \"target_nodes\": [\"127.0.0.1:25001\", \"127.0.0.1:25002\"],\n"
            + Json.write(req)
                .substring(1)
                .replace("\"target_nodes\":[\"127.0.0.1:25001\",\"127.0.0.1:25002\"],", "");
    Api.Reply again = api.post("/api/v1/model-distribution/jobs", reordered);
    assertEquals(200, again.status(), String.valueOf(again.json()));
    assertEquals("api-idem-1", again.json().get("job_id").asText());

    req.withArray("target_nodes").add("127.0.0.1:25003");
    Api.Reply conflict = api.post("/api/v1/model-distribution/jobs", Json.write(req));
    assertEquals(409, conflict.status());
    assertEquals(false, conflict.json().get("success").asBoolean());
    assertEquals(409, conflict.json().get("error_code").asInt());
    assertTrue(conflict.json().get("error_message").asText().contains("api-idem-1"));
    assertEquals(2, pg.database().dsl().fetchCount(PLACEMENTS, PLACEMENTS.JOB_ID.eq("api-idem-1")));
  }

  @Test
  void anUnknownJobIs404AnEmptyJobIdIs400AndNoJobIdListsJobs() {
    Api.Reply r = api.job("no-such-job");
    assertEquals(404, r.status());
    assertEquals(false, r.json().get("success").asBoolean());
    assertTrue(r.json().get("error_message").asText().contains("no-such-job"));
    Api.Reply empty = api.get("/api/v1/model-distribution/jobs?job_id=");
    assertEquals(400, empty.status());
    assertEquals("job_id", empty.json().get("field").asText());
    // Without job_id the same path is the operators' job list (JobListApiTest covers it).
    Api.Reply list = api.get("/api/v1/model-distribution/jobs");
    assertEquals(200, list.status());
    assertTrue(list.json().get("jobs").isArray(), list.json().toString());
  }

  @Test
  void aBadRequestNamesTheFieldAndWritesNothing() throws Exception {
    int before = pg.database().dsl().fetchCount(JOBS);
    ObjectNode req = rfc();
    req.put("job_id", "api-bad-1");
    ((ObjectNode) req.withArray("/manifest/files").get(0).get("chunk_layout"))
        .put("chunk_count", 5);
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", Json.write(req));
    assertEquals(400, r.status());
    assertEquals("manifest.files[0].chunk_layout.chunk_count", r.json().get("field").asText());
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(before, pg.database().dsl().fetchCount(JOBS));

    ObjectNode seedOutside = rfc();
    seedOutside.put("job_id", "api-bad-2");
    seedOutside.put("seed_node_id", "127.0.0.1:25009");
    Api.Reply r2 = api.post("/api/v1/model-distribution/jobs", Json.write(seedOutside));
    assertEquals(400, r2.status());
    assertEquals("seed_node_id", r2.json().get("field").asText());

    Api.Reply notJson = api.post("/api/v1/model-distribution/jobs", new byte[] {(byte) 0xC3, 0x28});
    assertEquals(400, notJson.status());
    Api.Reply empty = api.post("/api/v1/model-distribution/jobs", new byte[0]);
    assertEquals(400, empty.status());
    assertEquals(before, pg.database().dsl().fetchCount(JOBS));
  }

  @Test
  void anOversizedBodyIsRefusedWith413() {
    byte[] big = new byte[9 * 1024 * 1024];
    java.util.Arrays.fill(big, (byte) ' ');
    big[0] = '{';
    big[big.length - 1] = '}';
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", big);
    assertEquals(413, r.status());
    assertEquals("body", r.json().get("field").asText());
  }

  @Test
  void healthAnswers200() {
    Api.Reply r = api.get("/health");
    assertEquals(200, r.status());
    assertEquals("UP", r.json().get("status").asText());
  }
}
