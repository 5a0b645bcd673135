package io.mooncake.dist.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.scheduler.domain.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * Task done → next task claimed, through the real processes: a master (scheduler loop, NOTIFY
 * mooncake_job) and two clients (claim loops, NOTIFY mooncake_node). Each job is one 4 KiB
 * object; the follower's MATERIALIZE is enqueued once both its REPLICA_COPY and the seed's
 * MODEL_DOWNLOAD have succeeded, and the follower then claims it. The figure is
 * {@code materialize.started_at - greatest(copy.finished_at, download.finished_at)}: from the
 * success that unblocked it to its claim, both set by Postgres's now() at the start of their
 * transactions (so the success transaction's own commit is included); median over the jobs after
 * a warm-up.
 */
final class WakeupLatency {
  private static final int WARMUP = 5;
  private static final int SIZE = 4096;

  private WakeupLatency() {}

  static void run(String api, String url, String seed, String follower, int jobs, String dir) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    Path work = Files.createDirectories(Path.of(dir));
    Random random = new Random(7);
    for (int i = 0; i < WARMUP + jobs; i++) {
      String jobId = (i < WARMUP ? "warm-" : "lat-") + i;
      byte[] bytes = new byte[SIZE];
      random.nextBytes(bytes);
      Path file = Files.write(work.resolve(jobId + ".bin"), bytes);
      String body = Json.write(request(jobId, file, seed, follower));
      HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(api + "/api/v1/model-distribution/jobs"))
          .header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (created.statusCode() != 201) {
        throw new IllegalStateException("POST " + jobId + ": " + created.statusCode() + " " + created.body());
      }
      awaitTerminal(http, api, jobId);
    }
    try (Database db = Database.open(url, 2, "queue-bench")) {
      List<Double> ms = db.dsl().resultQuery("""
              SELECT extract(epoch FROM m.started_at - greatest(c.finished_at, d.finished_at)) * 1000
                FROM tasks c
                JOIN tasks m ON m.job_id = c.job_id AND m.node_id = c.node_id AND m.task_type = 'MATERIALIZE'
                JOIN tasks d ON d.job_id = c.job_id AND d.task_type = 'MODEL_DOWNLOAD'
               WHERE c.task_type = 'REPLICA_COPY' AND c.job_id LIKE 'lat-%' AND c.state = 'succeeded'
               ORDER BY 1
              """)
          .fetch(0, Double.class);
      if (ms.size() != jobs) {
        throw new IllegalStateException("expected " + jobs + " copy -> materialize pairs, found " + ms.size());
      }
      System.out.printf("notify_n=%d notify_p50_ms=%.1f notify_p90_ms=%.1f notify_max_ms=%.1f%n", ms.size(),
          ms.get(ms.size() / 2), ms.get((int) (ms.size() * 0.9)), ms.get(ms.size() - 1));
    }
  }

  private static void awaitTerminal(HttpClient http, String api, String jobId) throws Exception {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(
          URI.create(api + "/api/v1/model-distribution/jobs?job_id=" + jobId)).build(), HttpResponse.BodyHandlers.ofString());
      String status = Json.MAPPER.readTree(r.body()).path("status").asText();
      if (status.equals("completed")) {
        return;
      }
      if (status.equals("failed") || status.equals("canceled")) {
        throw new IllegalStateException("job " + jobId + " " + status + ": " + r.body());
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("job " + jobId + " not done after 60 s");
  }

  static ObjectNode request(String jobId, Path file, String seed, String follower) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("job_id", jobId);
    ObjectNode model = root.putObject("model");
    model.put("model_id", "bench-" + jobId).put("revision", "r1").put("format", "bin").put("provider", "local");
    ObjectNode manifest = root.putObject("manifest");
    manifest.setAll(model.deepCopy());
    manifest.put("total_size_bytes", SIZE).put("file_manifest_version", "v1");
    ObjectNode f = manifest.putArray("files").addObject();
    f.put("path", "model.bin").put("size_bytes", SIZE).put("checksum", "dummy").put("download_url", file.toString());
    String prefix = "bench-" + jobId + "/r1/model.bin";
    ObjectNode artifact = f.putObject("artifact");
    artifact.put("artifact_key", "bench-" + jobId);
    artifact.putArray("object_ids").add(prefix + "/chunk-0");
    f.putObject("chunk_layout").put("chunk_size_bytes", SIZE).put("chunk_count", 1).put("object_prefix", prefix);
    root.put("seed_node_id", seed);
    ArrayNode targets = root.putArray("target_nodes");
    targets.add(seed).add(follower);
    return root;
  }
}
