package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.EVICTIONS;
import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.SmallDisk;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.worker.disk.DiskKeeper.Watermarks;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disks that never fill (issue 22), on followers whose data directory is a small tmpfs (needs root
 * to mount; CI runs as root): capacity checked before a byte moves, eviction of the least recently
 * used model to make room, pins that hold under pressure, watermark eviction after the disk is
 * filled from outside the product, and no eviction of a model active copies read or write.
 */
class DiskCapacityTest {
  private static final long MIB = 1024 * 1024;

  /** Each model: one 8 MiB file in 1 MiB objects. A 20 MiB disk holds two. */
  private static final long MODEL = 8 * MIB;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  private final List<SmallDisk> disks = new ArrayList<>();
  private final List<String> nodes = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  @AfterEach
  void unmount() throws Exception {
    // Stopped first: a node left running would go on with the directory under the mount.
    nodes.forEach(cluster::stopNode);
    for (SmallDisk d : disks) {
      d.close();
    }
  }

  private String node(Path dir, Watermarks w) throws Exception {
    String id = cluster.addNode(dir, w);
    nodes.add(id);
    return id;
  }

  private Path smallDisk(String name, long mib) throws Exception {
    SmallDisk d = SmallDisk.mount(tmp.resolve(name), mib);
    Assumptions.assumeTrue(d != null, "needs root to mount a small tmpfs (CI runs as root)");
    disks.add(d);
    return d.dir();
  }

  private static Path source(String model) throws Exception {
    Path p = tmp.resolve("src/" + model + ".bin");
    return Files.exists(p) ? p : TestFiles.random(p, MODEL, model.hashCode());
  }

  private static Path staged(Path dataDir, String model) {
    return dataDir.resolve("models/local").resolve(model).resolve("r1/bin/" + model + ".bin");
  }

  /** Stages {@code model} from the shared seed onto {@code targets}; returns the final snapshot. */
  private static JsonNode stage(String jobId, String model, String seedNode, String... targets)
      throws Exception {
    List<String> all = new ArrayList<>(List.of(seedNode));
    all.addAll(List.of(targets));
    List<FileSpec> files =
        List.of(new FileSpec(model + ".bin", MODEL, MIB, "dummy", source(model).toString()));
    var created =
        api.post(
            "/api/v1/model-distribution/jobs",
            Requests.job(jobId, model, "r1", files, seedNode, all));
    assertEquals(201, created.status(), String.valueOf(created.json()));
    return api.awaitTerminal(jobId);
  }

  private static JsonNode placement(JsonNode job, String node) {
    for (JsonNode p : job.get("placements")) {
      if (p.get("node_id").asText().equals(node)) {
        return p;
      }
    }
    throw new AssertionError(node + " not in " + job);
  }

  private static int replicas(String node, String model) {
    return pg.database()
        .dsl()
        .fetchCount(
            OBJECT_REPLICAS,
            OBJECT_REPLICAS
                .NODE_ID
                .eq(node)
                .and(OBJECT_REPLICAS.OBJECT_ID.startsWith(model + "/")));
  }

  private static List<String> evicted(String node) {
    return pg.database()
        .dsl()
        .select(EVICTIONS.MODEL_ID)
        .from(EVICTIONS)
        .where(EVICTIONS.NODE_ID.eq(node))
        .orderBy(EVICTIONS.EVICTION_ID)
        .fetch(EVICTIONS.MODEL_ID);
  }

  private static String pinQuery(String model, String node) {
    return "/api/v1/model-distribution/pins?model_id="
        + model
        + "&revision=r1&format=bin&provider=local&nodes="
        + node;
  }

  @Test
  void aNodeWithRoomForTwoModelsEvictsTheLeastRecentlyUsedToStageAThirdAndReStagesItLater()
      throws Exception {
    Path dir = smallDisk("lru", 20);
    // Watermarks out of the way: only room for a job evicts here.
    String node = node(dir, new Watermarks(99, 95));
    assertEquals("completed", stage("lru-a", "lru-a", seed, node).get("status").asText());
    assertEquals("completed", stage("lru-b", "lru-b", seed, node).get("status").asText());

    JsonNode third = stage("lru-c", "lru-c", seed, node);
    assertEquals("completed", third.get("status").asText(), third.toString());
    assertEquals("staged", placement(third, node).get("state").asText());
    assertTrue(TestFiles.sameBytes(source("lru-c"), staged(dir, "lru-c")));
    // The least recently used one went, whole, with its replica rows; the other stayed.
    assertFalse(Files.exists(staged(dir, "lru-a").getParent()), "lru-a must be evicted");
    assertEquals(0, replicas(node, "lru-a"), "an evicted model is no longer a copy source");
    assertTrue(TestFiles.sameBytes(source("lru-b"), staged(dir, "lru-b")));
    assertEquals(8, replicas(node, "lru-b"));
    assertEquals(List.of("lru-a"), evicted(node));
    String reason =
        pg.database()
            .dsl()
            .select(EVICTIONS.REASON)
            .from(EVICTIONS)
            .where(EVICTIONS.NODE_ID.eq(node))
            .fetchOne(EVICTIONS.REASON);
    assertTrue(reason.startsWith("making room for job lru-c"), reason);
    assertEquals(
        MODEL,
        pg.database()
            .dsl()
            .select(EVICTIONS.BYTES)
            .from(EVICTIONS)
            .where(EVICTIONS.NODE_ID.eq(node))
            .fetchOne(EVICTIONS.BYTES));

    // A later job of the evicted model stages it again, evicting the now least recently used one.
    JsonNode again = stage("lru-a2", "lru-a", seed, node);
    assertEquals("completed", again.get("status").asText(), again.toString());
    assertTrue(TestFiles.sameBytes(source("lru-a"), staged(dir, "lru-a")));
    assertEquals(8, replicas(node, "lru-a"));
    assertEquals(List.of("lru-a", "lru-b"), evicted(node));
  }

  @Test
  void aPinnedModelSurvivesThePressureAndTheJobFailsThatPlacementAtOnceNamingThePin()
      throws Exception {
    Path dir = smallDisk("pins", 20);
    String node = node(dir, new Watermarks(99, 95));
    assertEquals("completed", stage("pin-a", "pin-a", seed, node).get("status").asText());
    assertEquals("completed", stage("pin-b", "pin-b", seed, node).get("status").asText());
    assertEquals(200, api.post(pinQuery("pin-a", node), "").status());
    assertEquals(200, api.post(pinQuery("pin-b", node), "").status());
    JsonNode pins = api.get("/api/v1/model-distribution/pins").json();
    assertEquals(2, pins.get("pins").size(), pins.toString());

    JsonNode job = stage("pin-c", "pin-c", seed, node);
    assertEquals("failed", job.get("status").asText(), job.toString());
    JsonNode p = placement(job, node);
    assertEquals("failed", p.get("state").asText());
    String error = p.get("last_error").asText();
    assertTrue(
        error.startsWith("not enough disk on node " + node + " for local/pin-c@r1 (bin)"), error);
    assertTrue(error.contains("needs " + MODEL + " bytes"), error);
    assertTrue(error.contains("0 evictable"), error);
    assertTrue(error.contains("pinned: local/pin-a@r1 (bin)"), error);
    assertTrue(error.contains("local/pin-b@r1 (bin)"), error);
    assertEquals(0, p.get("staged_bytes").asLong(), "refused before a byte moved");
    assertFalse(Files.exists(staged(dir, "pin-c").getParent()), "nothing of pin-c written");
    assertTrue(TestFiles.sameBytes(source("pin-a"), staged(dir, "pin-a")));
    assertTrue(TestFiles.sameBytes(source("pin-b"), staged(dir, "pin-b")));
    assertEquals(List.of(), evicted(node));

    // Unpinned, the least recently used pinned one may go again.
    JsonNode unpinned = api.delete(pinQuery("pin-a", node)).json();
    assertEquals(List.of(node), List.of(unpinned.get("nodes").get(0).asText()));
    assertEquals("completed", stage("pin-c2", "pin-c", seed, node).get("status").asText());
    assertEquals(List.of("pin-a"), evicted(node));
    assertTrue(Files.exists(staged(dir, "pin-b")));
  }

  @Test
  void aDiskFilledFromOutsideTo95PercentIsBroughtUnderTheLowWatermarkByEviction() throws Exception {
    Path dir = smallDisk("fill", 40);
    String node = node(dir, Watermarks.DEFAULT);
    assertEquals("completed", stage("fill-a", "fill-a", seed, node).get("status").asText());
    assertEquals("completed", stage("fill-b", "fill-b", seed, node).get("status").asText());
    assertEquals("completed", stage("fill-c", "fill-c", seed, node).get("status").asText());
    FileStore fs = Files.getFileStore(dir);
    long capacity = fs.getTotalSpace();
    // Someone else's file takes the disk to 95% used.
    long fill = capacity * 95 / 100 - (capacity - fs.getUsableSpace());
    assertTrue(fill > 0, "the three models alone must stay under 95%");
    TestFiles.random(dir.resolve("not-ours.bin"), fill, 7);
    long filledAt = System.nanoTime();
    assertTrue(usedPct(fs) >= 95, "used " + usedPct(fs));

    while (usedPct(fs) > Watermarks.DEFAULT.lowPct()) {
      Thread.sleep(50);
    }
    long tookMs = (System.nanoTime() - filledAt) / 1_000_000;
    System.out.printf(
        "disk filled to 95%% was back at %d%% used after %d ms (heartbeat 500 ms)%n",
        usedPct(fs), tookMs);
    // Least recently used first, whole models only, and no more than needed: 95% - 80% of 40 MiB
    // is 6 MiB, one 8 MiB model.
    assertEquals(List.of("fill-a"), evicted(node));
    assertTrue(
        Files.exists(dir.resolve("not-ours.bin")), "files outside the models are never touched");
    assertTrue(TestFiles.sameBytes(source("fill-b"), staged(dir, "fill-b")));
    assertTrue(TestFiles.sameBytes(source("fill-c"), staged(dir, "fill-c")));
    String reason =
        pg.database()
            .dsl()
            .select(EVICTIONS.REASON)
            .from(EVICTIONS)
            .where(EVICTIONS.NODE_ID.eq(node))
            .fetchOne(EVICTIONS.REASON);
    assertTrue(reason.contains("above the high watermark of 90%"), reason);
    // Operators see it: the node's figures, the metrics and the report.
    JsonNode nodes = api.get("/api/v1/nodes").json();
    JsonNode me = null;
    for (JsonNode n : nodes.get("nodes")) {
      if (n.get("node_id").asText().equals(node)) {
        me = n;
      }
    }
    assertEquals(capacity, me.get("capacity_bytes").asLong(), me.toString());
    assertEquals(90, me.get("high_watermark_pct").asInt());
    String metrics =
        new String(
            java.net.http.HttpClient.newHttpClient()
                .send(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(api.base() + "/metrics"))
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofByteArray())
                .body());
    assertTrue(metrics.contains("mooncake_evictions_total{node_id=\"" + node + "\"} 1"), metrics);
    assertTrue(
        metrics.contains("mooncake_evicted_bytes_total{node_id=\"" + node + "\"} " + MODEL),
        metrics);
  }

  private static long usedPct(FileStore fs) throws Exception {
    long total = fs.getTotalSpace();
    return (total - fs.getUsableSpace()) * 100 / total;
  }

  @Test
  void noEvictionTouchesAModelThatActiveCopiesReadOrWrite() throws Exception {
    Path dir = smallDisk("busy", 40);
    // Eviction pressure all along: one 8 MiB model is 20% of the disk, above the 15% mark.
    String node = node(dir, new Watermarks(15, 10));
    Path otherDir = tmp.resolve("busy-other");
    String other = cluster.addNode(otherDir);
    // Pinned while it is staged, so the pressure cannot take it before the jobs below exist.
    assertEquals(200, api.post(pinQuery("busy-a", node), "").status());
    assertEquals("completed", stage("busy-a", "busy-a", seed, node).get("status").asText());
    // Two jobs at once: this node reads busy-a as the seed of one (the other node's copies read
    // from here) while it writes busy-b as a follower of the other.
    List<FileSpec> a =
        List.of(new FileSpec("busy-a.bin", MODEL, MIB, "dummy", source("busy-a").toString()));
    List<FileSpec> b =
        List.of(new FileSpec("busy-b.bin", MODEL, MIB, "dummy", source("busy-b").toString()));
    assertEquals(
        201,
        api.post(
                "/api/v1/model-distribution/jobs",
                Requests.job("busy-read", "busy-a", "r1", a, node, List.of(node, other)))
            .status());
    assertEquals(
        201,
        api.post(
                "/api/v1/model-distribution/jobs",
                Requests.job("busy-write", "busy-b", "r1", b, seed, List.of(seed, node)))
            .status());
    // From here only the active jobs protect busy-a.
    assertEquals(200, api.delete(pinQuery("busy-a", node)).status());
    JsonNode read = api.awaitTerminal("busy-read");
    JsonNode write = api.awaitTerminal("busy-write");
    assertEquals("completed", read.get("status").asText(), read.toString());
    assertEquals("completed", write.get("status").asText(), write.toString());
    assertTrue(TestFiles.sameBytes(source("busy-a"), staged(otherDir, "busy-a")));
    assertTrue(placement(write, node).get("checksum_verified").asBoolean(), write.toString());
    // While each job was active, its model was not evicted, whatever the pressure: each
    // eviction came after the job that used the model had finished.
    for (String[] modelJob : new String[][] {{"busy-a", "busy-read"}, {"busy-b", "busy-write"}}) {
      java.time.OffsetDateTime finished =
          pg.database()
              .dsl()
              .select(io.mooncake.dist.db.jooq.Tables.JOBS.FINISHED_AT)
              .from(io.mooncake.dist.db.jooq.Tables.JOBS)
              .where(io.mooncake.dist.db.jooq.Tables.JOBS.JOB_ID.eq(modelJob[1]))
              .fetchOne()
              .value1();
      int early =
          pg.database()
              .dsl()
              .fetchCount(
                  EVICTIONS,
                  EVICTIONS
                      .NODE_ID
                      .eq(node)
                      .and(EVICTIONS.MODEL_ID.eq(modelJob[0]))
                      .and(EVICTIONS.EVICTED_AT.le(finished)));
      assertEquals(0, early, modelJob[0] + " evicted while " + modelJob[1] + " used it");
    }
    // Once they ended, the pressure evicts both (20% each, down to 10%).
    while (evicted(node).size() < 2) {
      Thread.sleep(50);
    }
    assertEquals(List.of("busy-a", "busy-b"), evicted(node).stream().sorted().toList());
    assertFalse(Files.exists(staged(dir, "busy-a").getParent()));
    assertEquals(0, replicas(node, "busy-a"));
  }
}
