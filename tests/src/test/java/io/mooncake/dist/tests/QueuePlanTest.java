package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.NestedPlans;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.sql.SQLException;
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
 * stale statistics, for a small and a large limit, with and without source lookups, the generic
 * plan the claim function ({@code mooncake_claim}, V019) is forced to use reads the partial index
 * of ready rows and never scans the table or walks the primary key filtering finished rows. Checked
 * on the plan the function ran, as {@code auto_explain} reports it (JSON).
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

  /**
   * The plan the claim function ({@code mooncake_claim}) runs its query with, as {@code
   * auto_explain} reports it for the nested statement; the claim is rolled back.
   */
  private static JsonNode planRun(ResultQuery<?> claim) {
    return NestedPlans.planOf(dsl(), claim.getSQL(ParamType.INLINED), "ready AS MATERIALIZED");
  }

  /** The claim, with its copies' sources looked up or not. */
  private static ResultQuery<?> claim(int limit, boolean lookups) {
    return new TaskQueue(dsl())
        .claimStatement(
            NODE,
            NODE + "/w",
            limit,
            Duration.ofSeconds(30),
            lookups ? Duration.ofSeconds(5) : null);
  }

  /** The claim with and without lookups, for a small and a large limit. */
  private static void assertEveryClaimThroughTheReadyIndex(String statistics) {
    for (int limit : new int[] {1, 32}) {
      String what = statistics + ", limit " + limit;
      assertClaimsThroughTheReadyIndex(planRun(claim(limit, false)), what + ", no lookups");
      assertClaimsThroughTheReadyIndex(planRun(claim(limit, true)), what + ", with lookups");
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
