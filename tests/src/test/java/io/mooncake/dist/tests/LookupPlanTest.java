package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.NestedPlans;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The copy-source lookup ({@code copy_sources}, V024) reads tasks only through an index condition:
 * with thousands of copies processing, under statistics gathered when none were (as when a job
 * starts and a connection makes the function's one generic plan) and under fresh ones, no read of
 * tasks in the plan the function runs walks an index or the table with a filter alone. Before V024
 * the plan answered "is the seed serving this object" and "does the asking copy run" by walking
 * every processing task of every job, twice a copy (8,000 rows at 1,000 nodes). The same holds for
 * nodes, replicas and placements (V025): before it, the holders' liveness was read by scanning
 * every node twice a lookup, and the follower count by a filtered scan of placements.
 */
class LookupPlanTest {
  private static final String SEED = "10.2.0.0:25000";
  private static final int NODES = 400;
  private static final int OBJECTS = 64;

  /** The tables the lookup may read only through an index condition: each grows with the fleet. */
  private static final java.util.Set<String> READ_BY_KEY =
      java.util.Set.of("tasks", "nodes", "object_replicas", "placements");

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static String node(int i) {
    return "10.2." + (i / 250) + "." + (i % 250 + 1) + ":25000";
  }

  @BeforeAll
  static void jobWithManyCopies() {
    dsl()
        .execute(
            """
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES ('lp', 'x', '{}', 'm', 'r', 'bin', 'local', ?, 0, 'object_digests', 'replicating')""",
            SEED);
    dsl()
        .execute(
            """
        INSERT INTO nodes (node_id, host, port, data_dir, instance_id)
        SELECT '10.2.' || (g / 250) || '.' || (g % 250 + 1) || ':25000', 'h', 25000, '/d', 'i'
          FROM generate_series(0, ? - 1) g
        UNION ALL SELECT ?, 'h', 25000, '/d', 'i'""",
            NODES, SEED);
    dsl()
        .execute(
            """
        INSERT INTO placements (job_id, node_id, ordinal, is_seed)
        SELECT 'lp', '10.2.' || (g / 250) || '.' || (g % 250 + 1) || ':25000', g + 1, false
          FROM generate_series(0, ? - 1) g
        UNION ALL SELECT 'lp', ?, 0, true""",
            NODES, SEED);
    // Every follower's copy of every object, all pending when the statistics are gathered.
    dsl()
        .execute(
            """
        INSERT INTO tasks (job_id, node_id, task_type, object_id, bytes_total)
        SELECT 'lp', '10.2.' || (n / 250) || '.' || (n % 250 + 1) || ':25000', 'REPLICA_COPY', 'o-' || o, 1
          FROM generate_series(0, ? - 1) n, generate_series(1, ?) o""",
            NODES, OBJECTS);
    dsl()
        .execute(
            "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)"
                + " SELECT 'o-' || o, ?, 1, 'sha256:aa', '/f', 0 FROM generate_series(1, ?) o",
            SEED,
            OBJECTS);
    // The objects before the one asked for are held by followers too: a quarter of them for o-3.
    dsl()
        .execute(
            """
        INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
        SELECT 'o-' || o, '10.2.' || (n / 250) || '.' || (n % 250 + 1) || ':25000', 1, 'sha256:aa', '/f', 0
          FROM generate_series(0, ? - 1) n, generate_series(1, 3) o
         WHERE o < 3 OR n % 4 = 0""",
            NODES);
    dsl().execute("ANALYZE");
    // Then eight objects in flight to every follower, as mid-job: 3,200 running copies, most of
    // them relayed by other followers, a few straight from the seed.
    dsl()
        .execute(
            """
        UPDATE tasks t
           SET state = 'processing', started_at = now(), updated_at = now(), lease_owner = t.node_id,
               lease_expires_at = now() + interval '30 seconds', attempts = 1,
               source_node_id = CASE WHEN t.task_id % 97 = 0 THEN ? ELSE '10.2.0.' || (t.task_id % 200 + 1) || ':25000' END
         WHERE t.object_id IN ('o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6', 'o-7', 'o-8')""",
            SEED);
  }

  @Test
  void theLookupReadsRunningCopiesThroughIndexConditionsUnderStaleAndFreshStatistics() {
    assertBounded(planRun(), "stale statistics");
    dsl().execute("ANALYZE");
    assertBounded(planRun(), "fresh statistics");
  }

  private static void assertBounded(JsonNode plan, String what) {
    List<JsonNode> scans = new ArrayList<>();
    collect(plan, scans);
    String shape =
        scans.stream()
            .map(
                s ->
                    s.path("Node Type").asText()
                        + " "
                        + s.path("Relation Name").asText()
                        + " "
                        + s.path("Index Name").asText()
                        + " cond="
                        + s.path("Index Cond").asText(s.path("Recheck Cond").asText())
                        + " filter="
                        + s.path("Filter").asText())
            .collect(Collectors.joining("; "));
    assertFalse(scans.isEmpty(), what + ": no read of tasks, nodes or replicas in the plan");
    for (JsonNode s : scans) {
      assertFalse(s.path("Node Type").asText().contains("Seq Scan"), what + ": " + shape);
      // An index scan reads by its condition; a bitmap heap scan by its index's (its recheck).
      String cond = s.path("Index Cond").asText(s.path("Recheck Cond").asText());
      assertFalse(cond.isEmpty(), what + ": a read without an index condition: " + shape);
    }
  }

  private static void collect(JsonNode node, List<JsonNode> out) {
    if (READ_BY_KEY.contains(node.path("Relation Name").asText())
        && node.path("Node Type").asText().contains("Scan")) {
      out.add(node);
    }
    for (JsonNode child : node.path("Plans")) {
      collect(child, out);
    }
  }

  /**
   * The plan the lookup's query runs with, as {@code auto_explain} reports it, for a follower
   * asking for an object in flight (its own copy of it running) on a fresh server connection.
   */
  private static JsonNode planRun() {
    return NestedPlans.planOf(
        dsl(),
        "SELECT * FROM copy_sources('lp', 'o-3', 'sha256:aa', '"
            + node(123)
            + "', 15, 15, 3, 300, 8, 60)",
        "WITH job AS");
  }
}
