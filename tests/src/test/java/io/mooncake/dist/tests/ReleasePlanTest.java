package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.jooq.conf.ParamType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The release statement's plan does not follow the statistics into a quadratic join. Statistics
 * taken while the tables were empty (a fresh database, or one last analyzed before a large job
 * arrived, on a server without autovacuum) made the planner expect a handful of objects and
 * replicas; it then matched every object against every replica of the seed by nested loop, 10,000 x
 * 10,000 comparisons for a 10,000-object job. Each object must find the seed's replica and its
 * earlier release by an exact index probe, whatever the statistics say.
 */
class ReleasePlanTest {
  private static final String SEED = "10.6.0.0:1";
  private static final int OBJECTS = 2_000;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** The scans of {@code relation} under the statement's alias {@code alias}. */
  private static void collect(JsonNode node, String relation, String alias, List<JsonNode> out) {
    if (relation.equals(node.path("Relation Name").asText())
        && alias.equals(node.path("Alias").asText())
        && node.path("Node Type").asText().contains("Scan")) {
      out.add(node);
    }
    for (JsonNode child : node.path("Plans")) {
      collect(child, relation, alias, out);
    }
  }

  private static String shape(List<JsonNode> scans) {
    return scans.stream()
        .map(
            s ->
                s.path("Node Type").asText()
                    + " "
                    + s.path("Index Name").asText()
                    + " cond="
                    + s.path("Index Cond").asText())
        .collect(Collectors.joining("; "));
  }

  /**
   * Every read of the relation under {@code alias} (its inserts aside) is an index probe on all of
   * {@code keys}.
   */
  private static void assertProbed(
      JsonNode plan, String relation, String alias, List<String> keys, String what) {
    List<JsonNode> scans = new ArrayList<>();
    collect(plan, relation, alias, scans);
    assertFalse(scans.isEmpty(), what + ": " + relation + " not read at all");
    for (JsonNode s : scans) {
      assertTrue(
          s.path("Node Type").asText().startsWith("Index"),
          what + ": " + relation + " scanned: " + shape(scans));
      for (String key : keys) {
        assertTrue(
            s.path("Index Cond").asText().contains(key),
            what + ": not probed by " + key + ": " + shape(scans));
      }
    }
  }

  private static JsonNode explainRelease(String job, List<String> followers) {
    String sql =
        ScheduleJob.releaseStatement(dsl(), job, followers, ScheduleJob.DEFAULT_RELEASE_WINDOW)
            .getSQL(ParamType.INLINED);
    String json = dsl().resultQuery("EXPLAIN (FORMAT JSON) " + sql).fetchOne(0, String.class);
    return Json.read(json, JsonNode.class).get(0).get("Plan");
  }

  /**
   * Each fresh object probes the seed's replica (r) and its release (c) exactly; the window's reads
   * of the releases still waiting for a follower (w) use their partial index, and probe those
   * releases' replicas (h) by object.
   */
  private static void assertPlan(JsonNode plan, String what) {
    assertProbed(plan, "object_replicas", "r", List.of("object_id", "node_id"), what);
    assertProbed(plan, "copy_releases", "c", List.of("job_id", "object_id"), what);
    assertProbed(plan, "copy_releases", "w", List.of("job_id"), what);
    assertProbed(plan, "object_replicas", "h", List.of("object_id"), what);
    List<JsonNode> waiting = new ArrayList<>();
    collect(plan, "copy_releases", "w", waiting);
    for (JsonNode s : waiting) {
      assertEquals(
          "copy_releases_waiting_idx",
          s.path("Index Name").asText(),
          what + ": waiting releases not read by their index: " + shape(waiting));
    }
  }

  @Test
  void aReleaseStopsWaitingWhenAFollowerHoldsItsObject() {
    dsl()
        .execute(
            """
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES ('win', 'x', '{}', 'm', 'r', 'bin', 'local', ?, 20480, 'object_digests', 'replicating')""",
            SEED);
    dsl()
        .execute(
            """
        INSERT INTO job_objects (job_id, object_id, file_index, chunk_index, offset_bytes, length_bytes)
        SELECT 'win', 'win/m.bin/' || g, 0, g, g * 1024, 1024 FROM generate_series(0, 19) g""");
    dsl()
        .execute(
            """
        INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
        SELECT object_id, ?, length_bytes, 'sha256:' || md5(object_id), '/d/m.bin', offset_bytes
          FROM job_objects WHERE job_id = 'win'""",
            SEED);
    List<String> followers = List.of("10.7.0.1:1", "10.7.0.2:1");
    assertEquals(
        3, ScheduleJob.releaseStatement(dsl(), "win", followers, 3).fetchOne(0, Integer.class));
    assertEquals(
        0, ScheduleJob.releaseStatement(dsl(), "win", followers, 3).fetchOne(0, Integer.class));
    // A follower's replica of object 1 (with another digest it does not count), then the seed's
    // own replicas never count.
    dsl()
        .execute(
            """
        INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
        VALUES ('win/m.bin/1', '10.7.0.2:1', 1024, 'sha256:' || md5('win/m.bin/1'), '/d/m.bin', 1024),
               ('win/m.bin/2', '10.7.0.1:1', 1024, 'sha256:other', '/d/m.bin', 2048)""");
    assertEquals(
        1, ScheduleJob.releaseStatement(dsl(), "win", followers, 3).fetchOne(0, Integer.class));
    assertEquals(
        List.of("win/m.bin/0", "win/m.bin/2", "win/m.bin/3"),
        dsl()
            .fetch(
                "SELECT object_id FROM copy_releases WHERE job_id = 'win' AND NOT follower_held"
                    + " ORDER BY object_id")
            .getValues(0, String.class));
    assertEquals(
        4 * followers.size(),
        dsl()
            .fetchCount(
                dsl()
                    .selectFrom("tasks")
                    .where("job_id = 'win' AND task_type = 'REPLICA_COPY' AND state = 'pending'")));
  }

  @Test
  void eachObjectFindsItsReplicaAndItsReleaseByAnExactProbeUnderStatisticsOfEmptyTables() {
    dsl().execute("ANALYZE");
    dsl()
        .execute(
            """
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES ('rel', 'x', '{}', 'm', 'r', 'bin', 'local', ?, ?, 'object_digests', 'seeding')""",
            SEED,
            OBJECTS * 1024L);
    dsl()
        .execute(
            """
        INSERT INTO job_objects (job_id, object_id, file_index, chunk_index, offset_bytes, length_bytes)
        SELECT 'rel', 'rel/m.bin/' || g, 0, g, g * 1024, 1024 FROM generate_series(0, ? - 1) g""",
            OBJECTS);
    dsl()
        .execute(
            """
        INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
        SELECT object_id, ?, length_bytes, 'sha256:' || md5(object_id), '/d/m.bin', offset_bytes
          FROM job_objects WHERE job_id = 'rel'""",
            SEED);
    // Half of them released already, by earlier passes, all but four held by a follower by now.
    dsl()
        .execute(
            """
        INSERT INTO copy_releases (job_id, object_id, digest, follower_held)
        SELECT job_id, object_id, 'sha256:' || md5(object_id), chunk_index >= 8
          FROM job_objects WHERE job_id = 'rel' AND chunk_index % 2 = 0""");
    List<String> followers =
        IntStream.rangeClosed(1, 8).mapToObj(i -> "10.6.0." + i + ":1").toList();

    JsonNode plan = explainRelease("rel", followers);
    assertPlan(plan, "statistics of empty tables");

    dsl().execute("ANALYZE");
    plan = explainRelease("rel", followers);
    assertPlan(plan, "fresh statistics");

    // And the statement does what it says: with a window of 8 and 4 releases waiting, the next 4
    // objects in file order are released; with none, the rest of the odd half, to every follower.
    int released =
        ScheduleJob.releaseStatement(dsl(), "rel", followers, 8).fetchOne(0, Integer.class);
    assertEquals(4, released);
    assertEquals(
        List.of("rel/m.bin/1", "rel/m.bin/3", "rel/m.bin/5", "rel/m.bin/7"),
        dsl()
            .fetch(
                "SELECT object_id FROM copy_releases WHERE job_id = 'rel' AND NOT follower_held"
                    + " AND object_id IN (SELECT object_id FROM job_objects WHERE chunk_index % 2 = 1)"
                    + " ORDER BY object_id")
            .getValues(0, String.class));
    assertEquals(
        0, ScheduleJob.releaseStatement(dsl(), "rel", followers, 8).fetchOne(0, Integer.class));
    released = ScheduleJob.releaseStatement(dsl(), "rel", followers, 0).fetchOne(0, Integer.class);
    assertEquals(OBJECTS / 2 - 4, released);
    assertEquals(
        (long) OBJECTS / 2 * followers.size(),
        dsl()
            .fetchCount(
                dsl()
                    .selectFrom("tasks")
                    .where("job_id = 'rel' AND task_type = 'REPLICA_COPY' AND state = 'pending'")));
  }
}
