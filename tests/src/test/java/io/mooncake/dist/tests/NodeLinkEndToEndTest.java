package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.NodeSignature;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node link (issue 19), on real processes: two masters and two clients started with {@code
 * --master-url} (both masters), {@code --no-listen} and claim polls an hour apart, so every claim
 * that happens is caused by a wake-up a master forwarded. Jobs complete; the heartbeats and
 * long-polls are counted on the masters' {@code /metrics}; unsigned or forged node requests are
 * refused; after one master is SIGKILLed the nodes stay live and the next job completes through the
 * other; and an artifact deletion reaches the nodes through the other's wake-ups.
 */
class NodeLinkEndToEndTest {
  private static final long MIB = 1024 * 1024;
  private static final String HOUR_MS = "3600000";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void nodesOnTheLinkTakeWorkOnlyFromWakeUpsAndSurviveAMasterKill() throws Exception {
    int port1 = TestFiles.freePort();
    int port2 = TestFiles.freePort();
    String seed = "127.0.0.1:" + TestFiles.freePort();
    String follower = "127.0.0.1:" + TestFiles.freePort();
    String masters = "http://127.0.0.1:" + port1 + ",http://127.0.0.1:" + port2;
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      for (int port : new int[] {port1, port2}) {
        procs.start(
            "master-" + port,
            "mooncake_master",
            "--http-port",
            String.valueOf(port),
            "--allow-any-source",
            "--db-url",
            pg.url(),
            "--scheduler-tick-ms",
            "200",
            "--no-auth");
      }
      Api m1 = new Api("http://127.0.0.1:" + port1);
      Api m2 = new Api("http://127.0.0.1:" + port2);
      for (Api m : List.of(m1, m2)) {
        Processes.await(
            "master /health", Duration.ofSeconds(60), () -> m.get("/health").status() == 200);
      }
      for (String node : List.of(seed, follower)) {
        procs.start(
            node.equals(seed) ? "seed" : "follower",
            "mooncake_client",
            "--node-id",
            node,
            "--data-dir",
            tmp.resolve(node.replace(':', '_')).toString(),
            "--db-url",
            pg.url(),
            "--master-url",
            masters,
            "--no-listen",
            "--poll-ms",
            HOUR_MS,
            "--idle-poll-ms",
            HOUR_MS);
      }
      Processes.await("both nodes live", Duration.ofSeconds(60), () -> liveNodes(m1) == 2);

      // Every claim below follows a wake-up: the clients' own polls are an hour apart.
      assertEquals("completed", stage(m1, "model-a", seed, follower).get("status").asText());
      long heartbeats = count(port1, "heartbeat") + count(port2, "heartbeat");
      long wakeups = count(port1, "wakeups") + count(port2, "wakeups");
      assertTrue(heartbeats > 0, "no heartbeat reached a master");
      assertTrue(wakeups > 0, "no long-poll was answered");
      for (int port : new int[] {port1, port2}) {
        // Any status but 200, from one read of the metrics (two reads raced the heartbeats).
        assertEquals(0, count(port, "heartbeat", "(?!200\")[0-9]+"), "heartbeat refusals");
        assertEquals(0, count(port, "wakeups", "(?!200\")[0-9]+"), "wake-up refusals");
      }

      // The heartbeats through the masters carry the disk: capacity, free bytes and, once it
      // changed, the bytes each staged model holds (issue 22).
      Processes.await(
          "the follower's disk reported through the link",
          Duration.ofSeconds(60),
          () -> heldBytes(m1, follower, "model-a") == 4 * MIB + 123);
      JsonNode reported = node(m1, follower);
      assertTrue(reported.get("capacity_bytes").asLong() > 0, reported.toString());
      assertTrue(reported.get("free_bytes").asLong() > 0, reported.toString());
      assertEquals(90, reported.get("high_watermark_pct").asInt(), reported.toString());

      // Unsigned, bearer-authenticated and forged node requests are refused.
      HttpClient http = HttpClient.newHttpClient();
      String hb = "{\"node_id\":\"" + seed + "\"}";
      URI heartbeatUri = URI.create("http://127.0.0.1:" + port1 + "/api/v1/nodes/heartbeat");
      assertEquals(401, post(http, heartbeatUri, hb, null));
      assertEquals(401, post(http, heartbeatUri, hb, "Bearer whatever"));
      String forged =
          new NodeSignature(
                  "not the cluster secret, but long enough".getBytes(StandardCharsets.UTF_8))
              .header(
                  seed,
                  System.currentTimeMillis(),
                  "POST",
                  "/api/v1/nodes/heartbeat",
                  hb.getBytes(StandardCharsets.UTF_8));
      assertEquals(401, post(http, heartbeatUri, hb, forged));

      // One master dies; the nodes move to the other and go on.
      procs.kill("master-" + port1);
      Thread.sleep(12_000); // longer than the liveness window: a node heartbeating nowhere drops
      assertEquals(2, liveNodes(m2), "a node stopped heartbeating when its master died");
      assertEquals("completed", stage(m2, "model-b", seed, follower).get("status").asText());
      assertTrue(count(port2, "wakeups") > 0);

      // A deletion reaches the nodes as a wake-up of its own kind: task wake-ups no longer make
      // a node look at its deletions, and its own polls are an hour apart.
      Path followerModel =
          tmp.resolve(follower.replace(':', '_')).resolve("models/local/model-a/r1/bin");
      assertTrue(Files.exists(followerModel.resolve("model.bin")));
      assertEquals(
          202,
          m2.delete(
                  "/api/v1/model-distribution/artifacts"
                      + "?model_id=model-a&revision=r1&format=bin&provider=local")
              .status());
      Processes.await(
          "the follower freed model-a", Duration.ofSeconds(60), () -> !Files.exists(followerModel));
    }
  }

  private JsonNode stage(Api master, String modelId, String seed, String follower)
      throws Exception {
    Path model =
        TestFiles.random(tmp.resolve(modelId + "/model.bin"), 4 * MIB + 123, modelId.hashCode());
    String jobId = UUID.randomUUID().toString();
    String request =
        Requests.job(
            jobId,
            modelId,
            "r1",
            List.of(
                new FileSpec(
                    "model.bin",
                    java.nio.file.Files.size(model),
                    MIB,
                    "sha256:" + TestFiles.sha256(model),
                    model.toUri().toString())),
            seed,
            List.of(seed, follower));
    assertEquals(201, master.post("/api/v1/model-distribution/jobs", request).status());
    return master.awaitJob(
        jobId, j -> j.get("status").asText().matches("completed|failed"), Duration.ofSeconds(90));
  }

  private static JsonNode node(Api master, String nodeId) {
    for (JsonNode n : master.get("/api/v1/nodes").json().get("nodes")) {
      if (n.get("node_id").asText().equals(nodeId)) {
        return n;
      }
    }
    throw new AssertionError(nodeId + " not registered");
  }

  private static long heldBytes(Api master, String nodeId, String modelId) {
    for (JsonNode m : node(master, nodeId).get("models")) {
      if (m.get("model").get("model_id").asText().equals(modelId)) {
        return m.get("bytes").asLong();
      }
    }
    return -1;
  }

  private static int liveNodes(Api master) {
    int live = 0;
    for (JsonNode n : master.get("/api/v1/nodes").json().get("nodes")) {
      live += n.get("live").asBoolean() ? 1 : 0;
    }
    return live;
  }

  /** Node-link requests a master answered 200, from its {@code /metrics}. */
  private static long count(int port, String route) throws Exception {
    return count(port, route, "200");
  }

  /** Node-link requests a master answered with a status matching {@code status}. */
  private static long count(int port, String route, String status) throws Exception {
    String text =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Matcher m =
        Pattern.compile(
                "mooncake_http_requests_total\\{route=\"/api/v1/nodes/"
                    + route
                    + "\",status=\""
                    + status
                    + "\"\\} (\\d+)")
            .matcher(text);
    long n = 0;
    while (m.find()) {
      n += Long.parseLong(m.group(1));
    }
    return n;
  }

  private static int post(HttpClient http, URI uri, String body, String authorization)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }
}
