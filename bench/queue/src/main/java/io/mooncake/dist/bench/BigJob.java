package io.mooncake.dist.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.TaskQueue;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A job with OBJECTS objects (10 files) and FOLLOWERS + 1 targets through a real master process,
 * timed from the POST (t0) until every follower's copies (OBJECTS x FOLLOWERS rows) exist, are
 * claimable and the job is replicating (t1). In between, a stand-in seed claims the MODEL_DOWNLOAD
 * as soon as the master has enqueued it, lists every object as a replica and succeeds, in one
 * transaction (it takes well under a second; a real seed would take as long as the download).
 * Whether the master creates the copies when the job starts or as objects are published, t1 - t0
 * covers all of it. Meanwhile the master's resident memory is sampled from /proc; then the
 * snapshot is fetched over HTTP twenty times.
 */
final class BigJob {
  private static final int FILES = 10;
  private static final long CHUNK = 1 << 20;
  private static final int SNAPSHOTS = 20;

  private BigJob() {}

  static void run(String api, String url, long masterPid, int objects, int followers) throws Exception {
    String jobId = "big-" + System.currentTimeMillis();
    String seed = "10.9.0.0:25000";
    List<String> targets = new ArrayList<>(List.of(seed));
    for (int i = 1; i <= followers; i++) {
      targets.add("10.9." + (i / 250) + "." + (i % 250 + 1) + ":25000");
    }
    AtomicLong maxRssKiB = new AtomicLong();
    Thread sampler = Thread.ofPlatform().daemon().start(() -> {
      Path status = Path.of("/proc/" + masterPid + "/status");
      while (!Thread.currentThread().isInterrupted()) {
        try {
          for (String line : Files.readAllLines(status)) {
            if (line.startsWith("VmRSS:")) {
              maxRssKiB.accumulateAndGet(Long.parseLong(line.replaceAll("[^0-9]", "")), Math::max);
            }
          }
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          return;
        }
      }
    });
    HttpClient http = HttpClient.newHttpClient();
    try (Database db = Database.open(url, 4, "queue-bench")) {
      String body = Json.write(request(jobId, objects, seed, targets));
      long t0 = System.nanoTime();
      HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(api + "/api/v1/model-distribution/jobs"))
          .header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (created.statusCode() != 201) {
        throw new IllegalStateException("POST " + jobId + ": " + created.statusCode() + " " + created.body());
      }
      TaskQueue queue = new TaskQueue(db.dsl());
      ClaimedTask download = null;
      while (download == null) {
        List<ClaimedTask> claimed = queue.claim(seed, seed + "/bench", 1, Duration.ofMinutes(10));
        download = claimed.isEmpty() ? null : claimed.get(0);
        if (download == null) {
          Thread.sleep(10);
          deadline(t0);
        }
      }
      ClaimedTask task = download;
      db.dsl().transaction(cfg -> {
        cfg.dsl().execute("""
            INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
            SELECT jo.object_id, ?, jo.length_bytes, 'sha256:' || md5(jo.object_id) || md5(jo.object_id),
                   '/data/' || jf.path, jo.offset_bytes
              FROM job_objects jo JOIN job_files jf ON jf.job_id = jo.job_id AND jf.file_index = jo.file_index
             WHERE jo.job_id = ?
            """, seed, jobId);
        if (!new TaskQueue(cfg.dsl()).succeed(task.taskId(), seed + "/bench", objects * CHUNK, null, List.of())) {
          throw new IllegalStateException("lost the download's lease");
        }
      });
      double seedAt = (System.nanoTime() - t0) / 1e9;
      String status = "";
      while (!status.equals("replicating")) {
        Thread.sleep(10);
        deadline(t0);
        status = db.dsl().resultQuery("SELECT status FROM jobs WHERE job_id = ?", jobId).fetchOne(0, String.class);
        if (status.equals("failed")) {
          throw new IllegalStateException("job " + jobId + " failed");
        }
      }
      double enqueueS = (System.nanoTime() - t0) / 1e9;
      long copies = db.dsl().resultQuery("""
          SELECT count(*) FROM tasks
           WHERE job_id = ? AND task_type = 'REPLICA_COPY' AND state = 'pending' AND run_after <= now()""", jobId)
          .fetchOne(0, Long.class);
      if (copies != (long) objects * followers) {
        throw new IllegalStateException("expected " + (long) objects * followers + " claimable copy tasks, found " + copies);
      }
      List<Double> ms = new ArrayList<>();
      for (int i = 0; i < SNAPSHOTS; i++) {
        long a = System.nanoTime();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
            URI.create(api + "/api/v1/model-distribution/jobs?job_id=" + jobId)).build(), HttpResponse.BodyHandlers.ofString());
        ms.add((System.nanoTime() - a) / 1e6);
        JsonNode snap = Json.MAPPER.readTree(r.body());
        if (r.statusCode() != 200 || snap.path("placements").size() != followers + 1) {
          throw new IllegalStateException("bad snapshot: " + r.statusCode() + " " + r.body().substring(0, 300));
        }
      }
      sampler.interrupt();
      Collections.sort(ms);
      // Stop the master from evaluating the big job again (its scheduler skips terminal jobs).
      db.dsl().execute("UPDATE jobs SET status = 'canceled', finished_at = now() WHERE job_id = ?", jobId);
      System.out.printf("enqueue_tasks=%d enqueue_1M_s=%.2f seed_done_at_s=%.2f master_rss_MiB=%d snapshot_p50_ms=%.1f"
          + " snapshot_max_ms=%.1f%n", copies, enqueueS, seedAt, maxRssKiB.get() / 1024, ms.get(ms.size() / 2), ms.get(ms.size() - 1));
    }
  }

  private static void deadline(long t0) {
    if (System.nanoTime() - t0 > 600_000_000_000L) {
      throw new IllegalStateException("the large job was not enqueued within 10 minutes");
    }
  }

  private static ObjectNode request(String jobId, int objects, String seed, List<String> targets) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("job_id", jobId);
    ObjectNode model = root.putObject("model");
    model.put("model_id", "bench-" + jobId).put("revision", "r1").put("format", "safetensors").put("provider", "local");
    ObjectNode manifest = root.putObject("manifest");
    manifest.setAll(model.deepCopy());
    int perFile = objects / FILES;
    manifest.put("total_size_bytes", objects * CHUNK).put("file_manifest_version", "v1");
    ArrayNode files = manifest.putArray("files");
    for (int f = 0; f < FILES; f++) {
      ObjectNode file = files.addObject();
      String path = "model-" + f + ".safetensors";
      file.put("path", path).put("size_bytes", perFile * CHUNK).put("checksum", "dummy")
          .put("download_url", "/nonexistent/" + path);
      String prefix = "bench-" + jobId + "/" + path;
      ObjectNode artifact = file.putObject("artifact");
      artifact.put("artifact_key", "bench-" + jobId);
      ArrayNode ids = artifact.putArray("object_ids");
      for (int c = 0; c < perFile; c++) {
        ids.add(prefix + "/chunk-" + c);
      }
      file.putObject("chunk_layout").put("chunk_size_bytes", CHUNK).put("chunk_count", perFile).put("object_prefix", prefix);
    }
    root.put("seed_node_id", seed);
    ArrayNode t = root.putArray("target_nodes");
    targets.forEach(t::add);
    return root;
  }
}
