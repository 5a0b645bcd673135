package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.worker.NodeWorker;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The node worker's {@code --http-port} endpoint: /health and /metrics after a real copy job. */
class ClientEndpointTest {
  private static final long MIB = 1024 * 1024;
  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)");

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  static String follower;
  static NodeWorker followerWorker;
  static boolean followerClosed;
  static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
    NodeId id = new NodeId("127.0.0.1", TestFiles.freePort());
    followerWorker =
        new NodeWorker(
                new NodeWorker.Settings(
                    id,
                    tmp.resolve("follower"),
                    "127.0.0.1",
                    4,
                    Duration.ofMillis(500),
                    Duration.ofSeconds(10),
                    Duration.ofMillis(200)),
                pg.database())
            .httpPort(0)
            .start();
    follower = id.toString();
  }

  @AfterAll
  static void stop() {
    if (!followerClosed) {
      followerWorker.close();
    }
    cluster.close();
  }

  private static HttpResponse<String> get(int port, String path)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthAndMetricsReflectACopyJobAndTheEndpointStopsWithTheWorker() throws Exception {
    long size = 3 * MIB + 12345;
    int objects = 4;
    Path src = TestFiles.random(tmp.resolve("src/m.bin"), size, 11);
    String body =
        Requests.job(
            "ep-job",
            "model-ep",
            "r1",
            List.of(
                new FileSpec(
                    "m.bin", size, MIB, "sha256:" + TestFiles.sha256(src), src.toUri().toString())),
            seed,
            List.of(seed, follower));
    Api.Reply created = api.post("/api/v1/model-distribution/jobs", body);
    assertEquals(201, created.status(), String.valueOf(created.json()));
    JsonNode job = api.awaitTerminal("ep-job");
    assertEquals("completed", job.get("status").asText(), job.toString());

    int port = followerWorker.httpPort();
    assertTrue(port > 0);

    HttpResponse<String> health = get(port, "/health");
    assertEquals(200, health.statusCode(), health.body());
    JsonNode h = Json.MAPPER.readTree(health.body());
    assertEquals("UP", h.get("status").asText());
    assertEquals(follower, h.get("node_id").asText());

    HttpResponse<String> metrics = get(port, "/metrics");
    assertEquals(200, metrics.statusCode());
    assertTrue(
        metrics
            .headers()
            .firstValue("Content-Type")
            .orElse("")
            .startsWith("text/plain; version=0.0.4"));
    Map<String, Double> samples = parse(metrics.body());
    assertEquals(
        (double) size, samples.get("mooncake_client_bytes_received_total"), metrics.body());
    assertEquals(
        (double) objects,
        samples.get("mooncake_client_tasks_total{type=\"REPLICA_COPY\",outcome=\"succeeded\"}"),
        metrics.body());
    assertTrue(samples.containsKey("mooncake_client_bytes_served_total"));
    assertEquals(0.0, samples.get("mooncake_client_tasks_running"));
    assertTrue(
        samples.get("mooncake_client_task_duration_seconds_count{type=\"REPLICA_COPY\"}")
            >= objects);
    assertTrue(samples.get("mooncake_client_task_duration_seconds_sum{type=\"REPLICA_COPY\"}") > 0);
    double age = samples.get("mooncake_client_heartbeat_age_seconds");
    assertTrue(age >= 0 && age < 1.5, "heartbeat age " + age);

    assertEquals(404, get(port, "/nope").statusCode());

    followerWorker.close();
    followerClosed = true;
    try {
      HttpResponse<String> after = get(port, "/health");
      assertEquals(503, after.statusCode(), after.body());
      assertEquals("DOWN", Json.MAPPER.readTree(after.body()).get("status").asText());
    } catch (java.net.ConnectException e) {
      // not served any more: as good as DOWN
    } catch (IOException e) {
      if (!(e.getCause() instanceof java.net.ConnectException)
          && !String.valueOf(e.getMessage()).contains("refused")) {
        fail("unexpected error after close: " + e);
      }
    }
  }

  /**
   * Checks the exposition: every family has HELP then TYPE, every sample belongs to a declared
   * family (summaries via _sum/_count), and returns samples keyed by name plus labels.
   */
  private static Map<String, Double> parse(String text) {
    assertTrue(text.endsWith("\n"));
    Map<String, String> types = new HashMap<>();
    Set<String> helped = new HashSet<>();
    Map<String, Double> samples = new HashMap<>();
    for (String line : text.split("\n")) {
      assertFalse(line.isBlank(), "blank line in exposition");
      if (line.startsWith("# HELP ")) {
        String[] parts = line.split(" ", 4);
        assertEquals(4, parts.length, line);
        assertTrue(helped.add(parts[2]), "duplicate HELP " + line);
      } else if (line.startsWith("# TYPE ")) {
        String[] parts = line.split(" ");
        assertEquals(4, parts.length, line);
        assertTrue(helped.contains(parts[2]), "TYPE before HELP: " + line);
        assertTrue(Set.of("counter", "gauge", "summary").contains(parts[3]), line);
        assertTrue(types.put(parts[2], parts[3]) == null, "duplicate TYPE " + line);
      } else {
        Matcher m = SAMPLE.matcher(line);
        assertTrue(m.matches(), "bad sample line: " + line);
        String name = m.group(1);
        String family = types.containsKey(name) ? name : name.replaceFirst("_(sum|count)$", "");
        assertTrue(types.containsKey(family), "sample without TYPE: " + line);
        if (!family.equals(name)) {
          assertEquals("summary", types.get(family), line);
        }
        if (family.endsWith("_total")) {
          assertEquals("counter", types.get(family), line);
        }
        samples.put(name + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
      }
    }
    return samples;
  }
}
