package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.jooq.ResultQuery;
import org.jooq.conf.ParamType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The claim's plan is a tested fact: with 50,000 finished rows in the table, under fresh and under
 * stale statistics, as a one-off (custom) plan and as the generic plan a prepared statement ends up
 * with, the claim reads the partial index of ready rows and never scans the table or walks the
 * primary key filtering finished rows. Checked on {@code EXPLAIN (FORMAT JSON)}.
 */
class QueuePlanTest {
  private static final String NODE = "10.1.0.1:25000";
  private static final int FINISHED = 50_000;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  @BeforeAll
  static void jobWithManyTasks() {
    dsl()
        .execute(
            """
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES ('plan', 'x', '{}', 'm', 'r', 'bin', 'local', ?, 0, 'object_digests', 'replicating')""",
            NODE);
    // Four nodes' worth of copy tasks, all still pending when statistics are gathered.
    dsl()
        .execute(
            """
        INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total)
        SELECT 'plan', '10.1.0.' || (g % 4 + 1) || ':25000', 'REPLICA_COPY', 'o-' || g, '{}', 1
          FROM generate_series(1, ?) g""",
            FINISHED + 400);
    dsl().execute("ANALYZE tasks");
  }

  private static List<JsonNode> scansOfTasks(JsonNode plan) {
    List<JsonNode> out = new ArrayList<>();
    collect(plan, out);
    return out;
  }

  private static void collect(JsonNode node, List<JsonNode> out) {
    if ("tasks".equals(node.path("Relation Name").asText())
        && node.path("Node Type").asText().contains("Scan")) {
      out.add(node);
    }
    for (JsonNode child : node.path("Plans")) {
      collect(child, out);
    }
  }

  private static void assertClaimsThroughTheReadyIndex(JsonNode plan, String what) {
    List<JsonNode> scans = scansOfTasks(plan);
    String shape =
        scans.stream()
            .map(
                s ->
                    s.path("Node Type").asText()
                        + " "
                        + s.path("Index Name").asText()
                        + " cond="
                        + s.path("Index Cond").asText()
                        + " filter="
                        + s.path("Filter").asText())
            .collect(Collectors.joining("; "));
    assertTrue(
        scans.stream()
            .anyMatch(
                s ->
                    s.path("Node Type").asText().equals("Index Scan")
                        && s.path("Index Name").asText().equals("tasks_claim_idx")),
        what + ": no Index Scan on tasks_claim_idx: " + shape);
    assertTrue(
        scans.stream().noneMatch(s -> s.path("Node Type").asText().contains("Seq Scan")),
        what + ": Seq Scan on tasks: " + shape);
    // The only other read of tasks allowed is the join back by primary key, never a walk of it.
    for (JsonNode s : scans) {
      if (!s.path("Index Name").asText().equals("tasks_claim_idx")) {
        assertEquals("tasks_pkey", s.path("Index Name").asText(), what + ": " + shape);
        assertTrue(
            s.path("Index Cond").asText().contains("task_id"),
            what + ": primary key walked: " + shape);
        assertFalse(s.has("Filter"), what + ": primary key walked with a filter: " + shape);
      }
    }
  }

  private static JsonNode explainCustom(ResultQuery<?> claim) {
    String json =
        dsl()
            .resultQuery("EXPLAIN (FORMAT JSON) " + claim.getSQL(ParamType.INLINED))
            .fetchOne(0, String.class);
    return Json.read(json, JsonNode.class).get(0).get("Plan");
  }

  /** The plan a prepared claim gets once Postgres switches it to a generic plan. */
  private static JsonNode explainGeneric(ResultQuery<?> claim) {
    String sql = claim.getSQL(ParamType.INDEXED);
    StringBuilder numbered = new StringBuilder();
    int n = 0;
    for (char ch : sql.toCharArray()) {
      numbered.append(ch == '?' ? "$" + (++n) : String.valueOf(ch));
    }
    List<Object> binds = claim.getBindValues();
    return dsl()
        .connectionResult(
            c -> {
              try (Statement st = c.createStatement()) {
                st.execute("PREPARE claim_plan AS " + numbered);
                st.execute("SET plan_cache_mode = force_generic_plan");
                String args =
                    binds.stream()
                        .map(b -> "'" + b.toString().replace("'", "''") + "'")
                        .collect(Collectors.joining(", "));
                try (ResultSet rs =
                    st.executeQuery("EXPLAIN (FORMAT JSON) EXECUTE claim_plan(" + args + ")")) {
                  rs.next();
                  return Json.read(rs.getString(1), JsonNode.class).get(0).get("Plan");
                } finally {
                  st.execute("DEALLOCATE claim_plan");
                  st.execute("RESET plan_cache_mode");
                }
              }
            });
  }

  private static ResultQuery<?> claim(int limit) {
    return new TaskQueue(dsl()).claimStatement(NODE, NODE + "/w", limit, Duration.ofSeconds(30));
  }

  /** The worker's claim (with its copies' sources), whose limit is a bind. */
  private static ResultQuery<?> claimWithSources(int limit) {
    return new TaskQueue(dsl())
        .claimWithSourcesStatement(
            NODE, NODE + "/w", limit, Duration.ofSeconds(30), Duration.ofSeconds(5));
  }

  /** Both claims, as custom and as generic plans, for a small and a large limit. */
  private static void assertEveryClaimThroughTheReadyIndex(String statistics) {
    for (int limit : new int[] {1, 32}) {
      String what = statistics + ", limit " + limit;
      assertClaimsThroughTheReadyIndex(explainCustom(claim(limit)), what + ", custom plan");
      assertClaimsThroughTheReadyIndex(explainGeneric(claim(limit)), what + ", generic plan");
      assertClaimsThroughTheReadyIndex(
          explainCustom(claimWithSources(limit)), what + ", claim with sources, custom plan");
      assertClaimsThroughTheReadyIndex(
          explainGeneric(claimWithSources(limit)), what + ", claim with sources, generic plan");
    }
  }

  @Test
  void theClaimReadsTheReadyIndexUnderStaleAndFreshStatistics() throws SQLException {
    // Stale: the statistics still say every row is pending, but almost all have finished.
    dsl()
        .execute(
            "UPDATE tasks SET state = 'succeeded', finished_at = now() WHERE task_id <= ?",
            (long) FINISHED);
    assertEveryClaimThroughTheReadyIndex("stale statistics");
    dsl().execute("ANALYZE tasks");
    assertEveryClaimThroughTheReadyIndex("fresh statistics");
  }

  @Test
  void theClaimStillTakesReadyRowsInOrderAndSkipsOnesInBackoff() {
    TaskQueue q = new TaskQueue(dsl());
    String node = "10.1.0.9:25000";
    dsl()
        .execute(
            """
        INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total, run_after)
        SELECT 'plan', ?, 'REPLICA_COPY', 'later-' || g, '{"model":null,"files":[]}', 1,
               CASE WHEN g = 1 THEN now() + interval '1 hour' ELSE now() END
          FROM generate_series(1, 5) g""",
            node);
    List<Long> ids =
        dsl()
            .resultQuery(
                "SELECT task_id FROM tasks WHERE node_id = ? AND object_id <> 'later-1' ORDER BY task_id",
                node)
            .fetch(0, Long.class);
    assertEquals(
        ids.subList(0, 2),
        q.claim(node, node + "/a", 2, Duration.ofSeconds(30)).stream()
            .map(t -> t.taskId())
            .toList());
    assertEquals(
        ids.subList(2, 4),
        q.claim(node, node + "/b", 5, Duration.ofSeconds(30)).stream()
            .map(t -> t.taskId())
            .toList(),
        "the task in its backoff must not be claimed");
  }
}
