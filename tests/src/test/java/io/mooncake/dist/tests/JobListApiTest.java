package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /api/v1/model-distribution/jobs} without {@code job_id}: the job list, newest first,
 * filtered by state and paged by an opaque keyset cursor. Targets are nodes with no worker, so
 * every job stays where the test puts it.
 */
class JobListApiTest {
  private static final String JOBS = "/api/v1/model-distribution/jobs";

  /** Every job of this class's database in list order: newest first, ties by job_id descending. */
  private static final List<String> ALL =
      List.of("list-5", "list-4", "list-3", "list-2", "list-1", "tie-c", "tie-b", "tie-a");

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  static String follower;

  @BeforeAll
  static void start() {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = "127.0.0.1:" + TestFiles.freePort();
    follower = "127.0.0.1:" + TestFiles.freePort();
    for (String id :
        List.of("tie-a", "tie-b", "tie-c", "list-1", "list-2", "list-3", "list-4", "list-5")) {
      Api.Reply r =
          api.post(
              JOBS,
              Requests.job(
                  id,
                  "model-" + id,
                  "r1",
                  List.of(
                      new FileSpec("m.bin", 1000, 512, "dummy", "/srv/models/" + id + "/m.bin")),
                  seed,
                  List.of(seed, follower)));
      assertEquals(201, r.status(), String.valueOf(r.json()));
    }
    // Jobs created in the same microsecond: only job_id can order them, also across page
    // boundaries.
    pg.database()
        .dsl()
        .execute(
            "UPDATE jobs SET created_at = '2001-02-03T04:05:06.789Z' WHERE job_id LIKE 'tie-%'");
    for (String id : List.of("list-2", "list-4")) {
      assertEquals(200, api.post(JOBS + "/cancel?job_id=" + id, "").status());
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static List<String> ids(JsonNode page) {
    List<String> ids = new ArrayList<>();
    page.get("jobs").forEach(j -> ids.add(j.get("job_id").asText()));
    return ids;
  }

  /** Follows {@code next} from the first page to the last, returning every job id in order. */
  private static List<String> walk(String query, int limit, List<Integer> pageSizes) {
    List<String> seen = new ArrayList<>();
    String after = null;
    do {
      String url =
          JOBS
              + "?limit="
              + limit
              + query
              + (after == null ? "" : "&after=" + URLEncoder.encode(after, StandardCharsets.UTF_8));
      Api.Reply r = api.get(url);
      assertEquals(200, r.status(), String.valueOf(r.json()));
      seen.addAll(ids(r.json()));
      pageSizes.add(r.json().get("jobs").size());
      after = r.json().get("next").isNull() ? null : r.json().get("next").asText();
      assertTrue(pageSizes.size() <= ALL.size() + 1, "paging does not end: " + seen);
    } while (after != null);
    return seen;
  }

  @Test
  void theListIsNewestFirstAndPagesWithACursorUntilNextIsNull() {
    List<Integer> sizes = new ArrayList<>();
    assertEquals(ALL, walk("", 3, sizes));
    assertEquals(List.of(3, 3, 2), sizes);
  }

  @Test
  void pagingOneJobAtATimeNeitherSkipsNorRepeatsJobsCreatedInTheSameInstant() {
    List<Integer> sizes = new ArrayList<>();
    assertEquals(ALL, walk("", 1, sizes));
    assertEquals(
        ALL.size(), sizes.size(), "a full last page ends with next = null, not an empty page");
  }

  @Test
  void withoutParametersThePageHoldsUpTo50Jobs() {
    Api.Reply r = api.get(JOBS);
    assertEquals(200, r.status());
    assertEquals(ALL, ids(r.json()));
    assertTrue(r.json().get("next").isNull());
    assertEquals(1, ids(api.get(JOBS + "?limit=1").json()).size());
    assertEquals(ALL, ids(api.get(JOBS + "?limit=500").json()));
  }

  @Test
  void aStateFilterListsOnlyJobsInThatStateWithTheirSummary() {
    Api.Reply r = api.get(JOBS + "?state=canceled");
    assertEquals(200, r.status());
    assertEquals(List.of("list-4", "list-2"), ids(r.json()));
    assertTrue(r.json().get("next").isNull());
    JsonNode j = r.json().get("jobs").get(0);
    assertEquals("canceled", j.get("status").asText());
    assertEquals("model-list-4", j.at("/model/model_id").asText());
    assertEquals("r1", j.at("/model/revision").asText());
    assertEquals("bin", j.at("/model/format").asText());
    assertEquals("local", j.at("/model/provider").asText());
    assertEquals(seed, j.get("seed_node_id").asText());
    assertEquals(1000, j.get("total_size_bytes").asLong());
    assertEquals(2, j.get("target_count").asInt());
    assertEquals(0, j.get("placements_staged").asInt());
    assertEquals(2, j.get("placements_failed").asInt());
    assertEquals("canceled by request", j.get("last_error").asText());
    assertTrue(j.get("created_at").isTextual() && j.get("updated_at").isTextual(), j.toString());

    Api.Reply active = api.get(JOBS + "?state=seeding&limit=2");
    assertTrue(active.status() == 200, String.valueOf(active.json()));
    for (JsonNode job : active.json().get("jobs")) {
      assertEquals("seeding", job.get("status").asText());
      assertTrue(job.get("last_error").isNull());
    }
    Api.Reply none = api.get(JOBS + "?state=completed");
    assertEquals(0, none.json().get("jobs").size());
    assertTrue(none.json().get("next").isNull());
  }

  @Test
  void badParametersAre400NamingTheParameter() {
    assertBad(JOBS + "?state=running", "state", "running");
    assertBad(JOBS + "?state=CANCELED", "state", "canceled");
    assertBad(JOBS + "?limit=0", "limit", "1 to 500");
    assertBad(JOBS + "?limit=501", "limit", "501");
    assertBad(JOBS + "?limit=ten", "limit", "ten");
    assertBad(JOBS + "?after=%25%25", "after", "cursor");
    String forged =
        Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString("v9|2020-01-01T00:00:00Z|x".getBytes(StandardCharsets.UTF_8));
    assertBad(JOBS + "?after=" + forged, "after", "cursor");
    assertBad(JOBS + "?job_id=", "job_id", "job_id");
  }

  private static void assertBad(String url, String field, String mentioned) {
    Api.Reply r = api.get(url);
    assertEquals(400, r.status(), url + " -> " + r.json());
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(400, r.json().get("error_code").asInt());
    assertEquals(field, r.json().get("field").asText(), url);
    assertTrue(r.json().get("error_message").asText().contains(mentioned), r.json().toString());
  }

  @Test
  void withJobIdTheSnapshotIsReturnedAsBefore() {
    Api.Reply r = api.job("list-3");
    assertEquals(200, r.status());
    assertEquals("list-3", r.json().get("job_id").asText());
    assertEquals(2, r.json().get("placements").size());
    assertFalse(r.json().has("jobs"));
  }
}
