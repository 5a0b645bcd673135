package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.SmallDisk;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 22 on real processes, as an operator runs it: {@code bin/mooncake_master} and two {@code
 * bin/mooncake_client}s, the follower's data directory a 40 MiB tmpfs (needs root to mount) and its
 * watermarks given as flags. Three staged models; a pin through {@code bin/mooncake pin}; then a
 * file from outside the product takes the disk to 95%, and the follower evicts the least recently
 * used unpinned model until the disk is under its low watermark, which {@code bin/mooncake nodes}
 * and {@code bin/mooncake ops evictions} show.
 */
class DiskEvictionEndToEndTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aDiskFilledFromOutsideTo95PercentIsReclaimedByTheClientAndOperatorsSeeIt() throws Exception {
    Path dir = tmp.resolve("follower");
    SmallDisk disk = SmallDisk.mount(dir, 40);
    Assumptions.assumeTrue(disk != null, "needs root to mount a small tmpfs (CI runs as root)");
    int port = TestFiles.freePort();
    String master = "http://127.0.0.1:" + port;
    String seed = "127.0.0.1:" + TestFiles.freePort();
    String follower = "127.0.0.1:" + TestFiles.freePort();
    int followerHttp = TestFiles.freePort();
    try (disk;
        Processes procs = new Processes(tmp.resolve("logs"))) {
      procs.start(
          "master",
          "mooncake_master",
          "--http-port",
          String.valueOf(port),
          "--allow-any-source",
          "--no-auth",
          "--db-url",
          pg.url(),
          "--scheduler-tick-ms",
          "200");
      Api api = new Api(master);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      procs.start(
          "seed",
          "mooncake_client",
          "--node-id",
          seed,
          "--data-dir",
          tmp.resolve("seed").toString(),
          "--db-url",
          pg.url(),
          "--heartbeat-ms",
          "500");
      procs.start(
          "follower",
          "mooncake_client",
          "--node-id",
          follower,
          "--data-dir",
          dir.toString(),
          "--db-url",
          pg.url(),
          "--heartbeat-ms",
          "500",
          "--evict-high-watermark",
          "90",
          "--evict-low-watermark",
          "80",
          "--http-port",
          String.valueOf(followerHttp));
      for (String m : List.of("e2e-a", "e2e-b", "e2e-c")) {
        Path src = TestFiles.random(tmp.resolve("src/" + m + ".bin"), 8 * MIB, m.hashCode());
        String request =
            Requests.job(
                m,
                m,
                "r1",
                List.of(new FileSpec(m + ".bin", 8 * MIB, MIB, "dummy", src.toString())),
                seed,
                List.of(seed, follower));
        assertEquals(201, api.post("/api/v1/model-distribution/jobs", request).status());
        assertEquals("completed", api.awaitTerminal(m).get("status").asText());
      }
      // The oldest is pinned: it must survive, so the next oldest goes.
      Processes.Run pin =
          Processes.run(
              "mooncake",
              "--master",
              master,
              "pin",
              "--model-id",
              "e2e-a",
              "--revision",
              "r1",
              "--format",
              "bin",
              "--provider",
              "local",
              "--nodes",
              follower);
      assertEquals(0, pin.exitCode(), pin.output());

      FileStore fs = Files.getFileStore(dir);
      long capacity = fs.getTotalSpace();
      TestFiles.random(
          dir.resolve("not-ours.bin"), capacity * 95 / 100 - (capacity - fs.getUsableSpace()), 3);
      assertTrue(usedPct(fs) >= 95, "used " + usedPct(fs));
      long filled = System.nanoTime();
      Processes.await("the follower under 80%", Duration.ofSeconds(60), () -> usedPct(fs) <= 80);
      System.out.printf(
          "real client: 95%% -> %d%% used in %d ms (heartbeat 500 ms)%n",
          usedPct(fs), (System.nanoTime() - filled) / 1_000_000);
      assertTrue(Files.exists(modelFile(dir, "e2e-a")), "the pinned model must stay");
      assertFalse(Files.exists(modelFile(dir, "e2e-b")), "the least recently used unpinned goes");
      assertTrue(Files.exists(modelFile(dir, "e2e-c")));
      assertTrue(Files.exists(dir.resolve("not-ours.bin")));

      // Operators see it: the node's disk and models, and the eviction with its reason.
      Processes.await(
          "the follower's report of its models",
          Duration.ofSeconds(30),
          () -> models(api, follower).equals(List.of("e2e-c", "e2e-a")));
      Processes.Run nodes = Processes.run("mooncake", "--master", master, "nodes");
      assertEquals(0, nodes.exitCode(), nodes.output());
      assertTrue(nodes.output().contains("e2e-a@r1 (pinned)"), nodes.output());
      Processes.Run evictions = Processes.run("mooncake", "--db-url", pg.url(), "ops", "evictions");
      assertEquals(0, evictions.exitCode(), evictions.output());
      assertTrue(evictions.output().contains("local/e2e-b@r1 (bin)"), evictions.output());
      assertTrue(
          evictions.output().contains("above the high watermark of 90%"), evictions.output());
      String clientMetrics =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create("http://127.0.0.1:" + followerHttp + "/metrics"))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
      assertTrue(clientMetrics.contains("mooncake_client_evictions_total 1"), clientMetrics);
      assertTrue(
          clientMetrics.contains("mooncake_client_evicted_bytes_total " + 8 * MIB), clientMetrics);
    }
  }

  private static Path modelFile(Path dataDir, String model) {
    return dataDir.resolve("models/local").resolve(model).resolve("r1/bin/" + model + ".bin");
  }

  /** The models {@code node} reported, most recently used first. */
  private static List<String> models(Api api, String node) {
    for (JsonNode n : api.get("/api/v1/nodes").json().get("nodes")) {
      if (n.get("node_id").asText().equals(node)) {
        List<String> ids = new java.util.ArrayList<>();
        n.get("models").forEach(m -> ids.add(m.get("model").get("model_id").asText()));
        return ids;
      }
    }
    return List.of();
  }

  private static long usedPct(FileStore fs) {
    try {
      long total = fs.getTotalSpace();
      return (total - fs.getUsableSpace()) * 100 / total;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
