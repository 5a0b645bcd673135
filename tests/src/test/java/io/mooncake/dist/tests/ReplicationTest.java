package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.transfer.ObjectDigest;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * MODEL_DOWNLOAD on a seed and copy tasks on followers, over real Postgres, Netty and files: file,
 * absolute-path and HTTP sources, sharded manifests, checksums, seed reuse and failures.
 */
class ReplicationTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  static String f1;
  static String f2;
  static HttpServer http;

  /** Holds the second half of /gated/ downloads until a test releases it. */
  static final java.util.concurrent.CountDownLatch gate =
      new java.util.concurrent.CountDownLatch(1);

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
    f1 = cluster.addNode(tmp.resolve("f1"));
    f2 = cluster.addNode(tmp.resolve("f2"));
    http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext(
        "/gated/",
        ex -> {
          Path file =
              tmp.resolve("http")
                  .resolve(ex.getRequestURI().getPath().substring("/gated/".length()));
          byte[] bytes = Files.readAllBytes(file);
          ex.sendResponseHeaders(200, bytes.length);
          try (var out = ex.getResponseBody()) {
            out.write(bytes, 0, bytes.length / 2);
            out.flush();
            gate.await(60, java.util.concurrent.TimeUnit.SECONDS);
            out.write(bytes, bytes.length / 2, bytes.length - bytes.length / 2);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    http.createContext(
        "/",
        ex -> {
          Path file = tmp.resolve("http").resolve(ex.getRequestURI().getPath().substring(1));
          if (!Files.isRegularFile(file)) {
            ex.sendResponseHeaders(404, -1);
            ex.close();
            return;
          }
          ex.sendResponseHeaders(200, Files.size(file));
          try (var out = ex.getResponseBody()) {
            Files.copy(file, out);
          }
        });
    http.start();
  }

  @AfterAll
  static void stop() {
    http.stop(0);
    cluster.close();
  }

  private static Path staged(String node, String modelId, String path) {
    String dir = node.equals(seed) ? "seed" : node.equals(f1) ? "f1" : "f2";
    return tmp.resolve(dir)
        .resolve("models/local")
        .resolve(modelId)
        .resolve("r1/bin")
        .resolve(path);
  }

  /** Copy tasks that ever ran (blocked copies of an object that was never published did not). */
  private static int copiesStarted(String jobId) {
    return pg.database()
        .dsl()
        .fetchCount(
            TASKS,
            TASKS
                .JOB_ID
                .eq(jobId)
                .and(TASKS.TASK_TYPE.eq("REPLICA_COPY"))
                .and(TASKS.ATTEMPTS.gt(0)));
  }

  private static int tasks(String jobId, String type) {
    return pg.database()
        .dsl()
        .fetchCount(TASKS, TASKS.JOB_ID.eq(jobId).and(TASKS.TASK_TYPE.eq(type)));
  }

  private static JsonNode submit(String body) {
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", body);
    assertEquals(201, r.status(), String.valueOf(r.json()));
    return r.json();
  }

  private static void assertCompleted(JsonNode job, long size) {
    assertEquals("completed", job.get("status").asText(), job.toString());
    assertTrue(job.get("last_error").isNull());
    for (JsonNode p : job.get("placements")) {
      assertEquals("staged", p.get("state").asText(), p.toString());
      assertEquals(size, p.get("staged_bytes").asLong());
      assertTrue(p.get("checksum_verified").asBoolean());
      assertTrue(p.get("last_error").isNull());
      assertTrue(p.get("local_path").isTextual());
    }
  }

  @Test
  void aFileUrlModelIsSeededAndCopiedToEveryFollowerByteForByte() {
    Path src = TestFiles.random(tmp.resolve("src/a.bin"), 3 * MIB + 12345, 1);
    String sha = "sha256:" + TestFiles.sha256(src);
    String body =
        Requests.job(
            "rep-file",
            "model-a",
            "r1",
            List.of(
                new FileSpec(
                    "a.bin",
                    Files.exists(src) ? 3 * MIB + 12345 : 0,
                    MIB,
                    sha,
                    src.toUri().toString())),
            seed,
            List.of(seed, f1, f2));
    submit(body);
    JsonNode job = api.awaitTerminal("rep-file");
    assertCompleted(job, 3 * MIB + 12345);
    assertEquals("manifest_sha256", job.get("integrity").asText());
    for (String node : List.of(seed, f1, f2)) {
      Path file = staged(node, "model-a", "a.bin");
      assertTrue(TestFiles.sameBytes(src, file), "bytes differ on " + node);
      assertTrue(!Files.exists(file.resolveSibling("a.bin.partial")));
      JsonNode placement = find(job, node);
      assertEquals(file.getParent().toString(), placement.get("local_path").asText());
    }
    assertEquals(1, tasks("rep-file", "MODEL_DOWNLOAD"));
    assertEquals(2 * 4, tasks("rep-file", "REPLICA_COPY"));
    assertEquals(
        3 * 4,
        digestsLike("model-a/r1/a.bin/%", "crc32c-crc32:%"),
        "by default every replica carries the 64-bit CRC pair the seed published");
    assertEquals(2, tasks("rep-file", "MATERIALIZE"));

    // What lets a follower's MATERIALIZE skip re-hashing the file: its objects carry the digests of
    // the seed, whose placement is staged with its checksum verified. Anything less does not count.
    var catalog = new io.mooncake.dist.scheduler.store.ReplicaCatalog(pg.database().dsl());
    List<String> objects =
        java.util.stream.IntStream.range(0, 4)
            .mapToObj(i -> String.format("model-a/r1/a.bin/chunk-%03d", i))
            .toList();
    assertTrue(catalog.matchesVerifiedSeed("rep-file", f1, objects));
    assertTrue(!catalog.matchesVerifiedSeed("rep-file", f1, List.of()));
    assertTrue(
        !catalog.matchesVerifiedSeed(
            "rep-file", f1, List.of(objects.get(0), "model-a/r1/a.bin/chunk-999")));
    assertTrue(
        !catalog.matchesVerifiedSeed("rep-other", f1, objects),
        "another job's seed proves nothing");
  }

  private static int digestsLike(String objectPattern, String digestPattern) {
    return pg.database()
        .dsl()
        .fetchCount(
            OBJECT_REPLICAS,
            OBJECT_REPLICAS
                .OBJECT_ID
                .like(objectPattern)
                .and(OBJECT_REPLICAS.DIGEST.like(digestPattern)));
  }

  @Test
  void aSeedPublishingSha256IsVerifiedWithSha256ByEveryFollower() throws Exception {
    String shaSeed =
        cluster.addNode(
            tmp.resolve("sha-seed"), TestFiles.freePort(), ObjectDigest.Algorithm.SHA256);
    Path src = TestFiles.random(tmp.resolve("src/s.bin"), 2 * MIB + 3, 9);
    String body =
        Requests.job(
            "rep-sha-objects",
            "model-s",
            "r1",
            List.of(new FileSpec("s.bin", 2 * MIB + 3, MIB, "dummy", src.toUri().toString())),
            shaSeed,
            List.of(shaSeed, f1, f2));
    submit(body);
    JsonNode job = api.awaitTerminal("rep-sha-objects");
    assertCompleted(job, 2 * MIB + 3);
    assertEquals("object_digests", job.get("integrity").asText());
    assertEquals(
        3 * 3,
        digestsLike("model-s/r1/s.bin/%", "sha256:%"),
        "followers keep the seed's SHA-256 digests");
    for (String node : List.of(f1, f2)) {
      assertTrue(
          TestFiles.sameBytes(src, staged(node, "model-s", "s.bin")), "bytes differ on " + node);
    }
  }

  @Test
  void anHttpSourceAndAShardedManifestWithAnAbsolutePathWork() {
    Path shard1 = TestFiles.random(tmp.resolve("http/shard-1.safetensors"), 2 * MIB, 2);
    Path shard2 = TestFiles.random(tmp.resolve("src/shard-2.safetensors"), MIB / 2 + 7, 3);
    String body =
        Requests.job(
            "rep-http",
            "model-b",
            "r1",
            List.of(
                new FileSpec(
                    "shard-1.safetensors",
                    2 * MIB,
                    MIB / 2,
                    "dummy",
                    "http://127.0.0.1:" + http.getAddress().getPort() + "/shard-1.safetensors"),
                new FileSpec(
                    "sub/shard-2.safetensors", MIB / 2 + 7, MIB / 2, "dummy", shard2.toString())),
            seed,
            List.of(seed, f1));
    submit(body);
    JsonNode job = api.awaitTerminal("rep-http");
    assertCompleted(job, 2 * MIB + MIB / 2 + 7);
    assertEquals("object_digests", job.get("integrity").asText());
    for (String node : List.of(seed, f1)) {
      assertTrue(TestFiles.sameBytes(shard1, staged(node, "model-b", "shard-1.safetensors")));
      assertTrue(TestFiles.sameBytes(shard2, staged(node, "model-b", "sub/shard-2.safetensors")));
    }
  }

  @Test
  void followersCopyPublishedObjectsWhileTheSeedIsStillDownloading() {
    Path src = TestFiles.random(tmp.resolve("http/pipelined.bin"), 4 * MIB, 8);
    submit(
        Requests.job(
            "rep-pipeline",
            "model-p",
            "r1",
            List.of(
                new FileSpec(
                    "pipelined.bin",
                    4 * MIB,
                    MIB / 2,
                    "dummy",
                    "http://127.0.0.1:" + http.getAddress().getPort() + "/gated/pipelined.bin")),
            seed,
            List.of(seed, f1, f2)));
    // The source has delivered half the file and is held: the seed is still acquiring, yet both
    // followers must already be copying the objects it published.
    JsonNode during =
        api.awaitJob(
            "rep-pipeline",
            j ->
                find(j, f1).get("staged_bytes").asLong() >= MIB
                    && find(j, f2).get("staged_bytes").asLong() >= MIB,
            java.time.Duration.ofSeconds(60));
    assertEquals("seeding", during.get("status").asText(), during.toString());
    assertEquals("acquiring", find(during, seed).get("state").asText());
    assertEquals("acquiring", find(during, f1).get("state").asText());
    assertTrue(find(during, f1).get("staged_bytes").asLong() <= 2 * MIB, during.toString());
    gate.countDown();
    JsonNode job = api.awaitTerminal("rep-pipeline");
    assertCompleted(job, 4 * MIB);
    for (String node : List.of(seed, f1, f2)) {
      assertTrue(TestFiles.sameBytes(src, staged(node, "model-p", "pipelined.bin")));
    }
  }

  @Test
  void aSeedThatAlreadyHoldsTheModelSkipsTheDownloadEvenWhenTheSourceIsGone() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/reuse.bin"), 2 * MIB, 4);
    submit(
        Requests.job(
            "rep-reuse-1",
            "model-c",
            "r1",
            List.of(new FileSpec("reuse.bin", 2 * MIB, MIB, "dummy", src.toUri().toString())),
            seed,
            List.of(seed)));
    assertCompleted(api.awaitTerminal("rep-reuse-1"), 2 * MIB);
    Files.delete(src);

    submit(
        Requests.job(
            "rep-reuse-2",
            "model-c",
            "r1",
            List.of(new FileSpec("reuse.bin", 2 * MIB, MIB, "dummy", src.toUri().toString())),
            seed,
            List.of(seed, f1)));
    JsonNode job = api.awaitTerminal("rep-reuse-2");
    assertCompleted(job, 2 * MIB);
    assertEquals(0, tasks("rep-reuse-2", "MODEL_DOWNLOAD"), "seed reuse must not download");
    assertEquals(1, tasks("rep-reuse-2", "MODEL_VERIFY"));
    assertTrue(Files.exists(staged(f1, "model-c", "reuse.bin")));
  }

  @Test
  void aCorruptedSeedReplicaIsNotReusedButDownloadedAgain() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/corrupt.bin"), MIB, 5);
    submit(
        Requests.job(
            "rep-corrupt-1",
            "model-d",
            "r1",
            List.of(new FileSpec("corrupt.bin", MIB, MIB / 4, "dummy", src.toUri().toString())),
            seed,
            List.of(seed)));
    assertCompleted(api.awaitTerminal("rep-corrupt-1"), MIB);
    Path onSeed = staged(seed, "model-d", "corrupt.bin");
    byte[] bytes = Files.readAllBytes(onSeed);
    bytes[300_000] ^= 0x5A;
    Files.write(onSeed, bytes);

    submit(
        Requests.job(
            "rep-corrupt-2",
            "model-d",
            "r1",
            List.of(new FileSpec("corrupt.bin", MIB, MIB / 4, "dummy", src.toUri().toString())),
            seed,
            List.of(seed, f2)));
    JsonNode job = api.awaitTerminal("rep-corrupt-2");
    assertCompleted(job, MIB);
    assertEquals(1, tasks("rep-corrupt-2", "MODEL_VERIFY"));
    assertEquals(
        1,
        tasks("rep-corrupt-2", "MODEL_DOWNLOAD"),
        "a failed verification falls back to a download");
    assertTrue(TestFiles.sameBytes(src, onSeed));
    assertTrue(TestFiles.sameBytes(src, staged(f2, "model-d", "corrupt.bin")));
  }

  @Test
  void aMissingSourceFailsTheSeedAndTheJobAndStartsNoCopy() {
    String missing = tmp.resolve("src/does-not-exist.bin").toString();
    submit(
        Requests.job(
            "rep-missing",
            "model-e",
            "r1",
            List.of(new FileSpec("m.bin", MIB, MIB, "dummy", "file://" + missing)),
            seed,
            List.of(seed, f1)));
    JsonNode job = api.awaitTerminal("rep-missing");
    assertEquals("failed", job.get("status").asText());
    assertTrue(job.get("last_error").asText().contains(missing), job.toString());
    JsonNode seedP = find(job, seed);
    assertEquals("failed", seedP.get("state").asText());
    assertTrue(seedP.get("last_error").asText().contains("not found"), seedP.toString());
    assertEquals("failed", find(job, f1).get("state").asText());
    assertEquals(0, copiesStarted("rep-missing"));
  }

  @Test
  void anHttp404AndASizeMismatchAndAChecksumMismatchNameTheirCause() {
    String url404 = "http://127.0.0.1:" + http.getAddress().getPort() + "/nope.bin";
    submit(
        Requests.job(
            "rep-404",
            "model-f",
            "r1",
            List.of(new FileSpec("x.bin", MIB, MIB, "dummy", url404)),
            seed,
            List.of(seed, f1)));
    JsonNode j404 = api.awaitTerminal("rep-404");
    assertEquals("failed", j404.get("status").asText());
    assertTrue(find(j404, seed).get("last_error").asText().contains("HTTP 404"), j404.toString());

    Path small = TestFiles.random(tmp.resolve("src/small.bin"), MIB, 6);
    submit(
        Requests.job(
            "rep-size",
            "model-g",
            "r1",
            List.of(new FileSpec("x.bin", 2 * MIB, MIB, "dummy", small.toUri().toString())),
            seed,
            List.of(seed, f1)));
    JsonNode jSize = api.awaitTerminal("rep-size");
    assertEquals("failed", jSize.get("status").asText());
    assertTrue(
        find(jSize, seed).get("last_error").asText().contains(String.valueOf(MIB)),
        jSize.toString());

    submit(
        Requests.job(
            "rep-sha",
            "model-h",
            "r1",
            List.of(
                new FileSpec(
                    "x.bin", MIB, MIB, "sha256:" + "0".repeat(64), small.toUri().toString())),
            seed,
            List.of(seed, f1)));
    JsonNode jSha = api.awaitTerminal("rep-sha");
    assertEquals("failed", jSha.get("status").asText());
    assertTrue(
        find(jSha, seed).get("last_error").asText().contains("checksum mismatch"), jSha.toString());
    // The whole-file checksum is known only at the end of the file, after objects were already
    // published and perhaps copied: no follower stages, its copies stop, its partial is removed.
    assertEquals("failed", find(jSha, f1).get("state").asText());
    assertEquals(
        0,
        pg.database()
            .dsl()
            .fetchCount(TASKS, TASKS.JOB_ID.eq("rep-sha").and(TASKS.STATE.eq("pending"))));
    assertEquals(
        0,
        pg.database()
            .dsl()
            .fetchCount(OBJECT_REPLICAS, OBJECT_REPLICAS.OBJECT_ID.like("model-h/%")),
        "a failed download leaves no replica published, on the seed or on a follower that copied early");
    assertEquals(
        0, copiesStarted("rep-size"), "a size mismatch is refused before any object is published");
  }

  @Test
  void aFollowerThatCannotStageFailsAloneAndTheJobFailsOnceTheOthersFinish() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/ff.bin"), MIB, 7);
    // A directory where f1 must create its file: f1 cannot materialize; f2 can.
    Files.createDirectories(staged(f1, "model-i", "ff.bin").resolve("blocker"));
    submit(
        Requests.job(
            "rep-follower-fail",
            "model-i",
            "r1",
            List.of(new FileSpec("ff.bin", MIB, MIB / 2, "dummy", src.toUri().toString())),
            seed,
            List.of(seed, f1, f2)));
    JsonNode job = api.awaitTerminal("rep-follower-fail");
    assertEquals("failed", job.get("status").asText(), job.toString());
    assertEquals("staged", find(job, seed).get("state").asText());
    assertEquals("staged", find(job, f2).get("state").asText());
    JsonNode bad = find(job, f1);
    assertEquals("failed", bad.get("state").asText());
    assertTrue(bad.get("last_error").asText().contains("ff.bin"), bad.toString());
    assertTrue(job.get("last_error").asText().contains(f1), job.toString());
    assertTrue(TestFiles.sameBytes(src, staged(f2, "model-i", "ff.bin")));
  }

  private static JsonNode find(JsonNode job, String node) {
    for (JsonNode p : job.get("placements")) {
      if (p.get("node_id").asText().equals(node)) {
        return p;
      }
    }
    throw new AssertionError("no placement for " + node + " in " + job);
  }
}
