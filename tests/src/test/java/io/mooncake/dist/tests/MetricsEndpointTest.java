package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jooq.DSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /metrics} over rows the test writes itself: a master's routes without a scheduler or
 * workers, so every value is known. The exposition is parsed as a scraper would.
 */
class MetricsEndpointTest {
  private static final String NODE_A = "127.0.0.1:7001";
  private static final String NODE_B = "127.0.0.1:7002";

  /**
   * Not a valid node id, but nothing stops a row from holding it: the label must still be escaped.
   */
  private static final String ODD_NODE = "odd\"node\\path\nnext";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  static WebServer server;
  static HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() {
    server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(r -> MasterRouting.routing(r, pg.database(), () -> {}))
            .build()
            .start();
    DSLContext dsl = pg.database().dsl();
    dsl.execute(
        "INSERT INTO nodes (node_id, host, port, data_dir, instance_id) VALUES (?, '127.0.0.1', 7001, '/d/a', 'i-a')",
        NODE_A);
    dsl.execute(
        "INSERT INTO nodes (node_id, host, port, data_dir, instance_id, heartbeat_at) "
            + "VALUES (?, '127.0.0.1', 7002, '/d/b', 'i-b', now() - interval '1 hour')",
        NODE_B);
    job(dsl, "m-done", "completed");
    job(dsl, "m-failed", "failed");
    job(dsl, "m-canceled", "canceled");
    long download = task(dsl, "m-done", NODE_A, "MODEL_DOWNLOAD", "", "succeeded", 1000, 10.0);
    long copy1 = task(dsl, "m-done", NODE_B, "REPLICA_COPY", "o1", "succeeded", 300, 1.5);
    long copy2 = task(dsl, "m-done", NODE_B, "REPLICA_COPY", "o2", "succeeded", 300, 2.5);
    task(dsl, "m-done", NODE_B, "MATERIALIZE", "", "succeeded", 600, 0.25);
    for (String o : List.of("a", "b", "c")) {
      task(dsl, "m-failed", NODE_B, "REPLICA_COPY", o, "pending", 100, null);
    }
    task(dsl, "m-failed", ODD_NODE, "REPLICA_COPY", "x", "pending", 100, null);
    long materialize = task(dsl, "m-failed", NODE_A, "MATERIALIZE", "", "failed", 600, null);
    task(dsl, "m-canceled", NODE_A, "REPLICA_COPY", "p", "processing", 100, null);
    // The succeeded tasks are the records of their succeeding attempts (V007); only the failing
    // attempts have rows of their own.
    attempt(dsl, copy1, 1, "retry");
    attempt(dsl, materialize, 1, "lease_expired");
    attempt(dsl, materialize, 2, "failed");
  }

  @AfterAll
  static void stop() {
    server.stop();
  }

  private static void job(DSLContext dsl, String jobId, String status) {
    dsl.execute(
        "INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id, "
            + "total_size_bytes, integrity, status) VALUES (?, 'x', '{}', 'm', 'r1', 'bin', 'local', ?, 1000, 'object_digests', ?)",
        jobId,
        NODE_A,
        status);
  }

  /**
   * A task row; {@code seconds} (when not null) is its attempt's duration, finished_at -
   * started_at.
   */
  private static long task(
      DSLContext dsl,
      String jobId,
      String node,
      String type,
      String objectId,
      String state,
      long bytes,
      Double seconds) {
    return dsl.resultQuery(
            "INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state, attempts, "
                + "bytes_total, started_at, finished_at, lease_expires_at) VALUES (?, ?, ?, ?, '{}', ?, 1, ?, "
                + "timestamptz '2024-05-01 10:00:00+00', timestamptz '2024-05-01 10:00:00+00' + make_interval(secs => ?), "
                + "now() + interval '1 hour') RETURNING task_id",
            jobId,
            node,
            type,
            objectId,
            state,
            bytes,
            seconds == null ? null : seconds)
        .fetchOne(0, Long.class);
  }

  private static void attempt(DSLContext dsl, long taskId, int attempt, String outcome) {
    dsl.execute(
        "INSERT INTO task_attempts (task_id, attempt, node_id, lease_owner, started_at, outcome) "
            + "VALUES (?, ?, 'n', 'n/i', now(), ?)",
        taskId,
        attempt,
        outcome);
  }

  /** One sample of the exposition: its name, labels and value. */
  record Sample(String name, Map<String, String> labels, double value) {}

  /** A parsed scrape: samples in order, and each family's HELP and TYPE. */
  record Scrape(
      List<Sample> samples,
      Map<String, String> types,
      Map<String, String> helps,
      String contentType) {
    double value(String name, String... labels) {
      Map<String, String> want = new HashMap<>();
      for (int i = 0; i < labels.length; i += 2) {
        want.put(labels[i], labels[i + 1]);
      }
      return samples.stream()
          .filter(s -> s.name().equals(name) && s.labels().equals(want))
          .mapToDouble(Sample::value)
          .findFirst()
          .orElseThrow(() -> new AssertionError("no sample " + name + want + " in " + samples));
    }

    boolean has(String name, String... labels) {
      try {
        value(name, labels);
        return true;
      } catch (AssertionError e) {
        return false;
      }
    }
  }

  private static HttpResponse<String> get(String path) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static Scrape scrape() {
    HttpResponse<String> res = get("/metrics");
    assertEquals(200, res.statusCode(), res.body());
    return parse(res.body(), res.headers().firstValue("content-type").orElse(""));
  }

  /**
   * Parses text format 0.0.4 strictly enough to catch malformed output: a sample before its TYPE
   * fails.
   */
  static Scrape parse(String text, String contentType) {
    List<Sample> samples = new ArrayList<>();
    Map<String, String> types = new LinkedHashMap<>();
    Map<String, String> helps = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      if (line.startsWith("# HELP ")) {
        String[] p = line.substring(7).split(" ", 2);
        helps.put(p[0], p[1]);
      } else if (line.startsWith("# TYPE ")) {
        String[] p = line.substring(7).split(" ", 2);
        assertTrue(helps.containsKey(p[0]), "TYPE before HELP for " + p[0]);
        assertTrue(p[1].matches("gauge|counter|summary"), line);
        types.put(p[0], p[1]);
      } else if (!line.isEmpty()) {
        Sample s = sample(line);
        String family =
            types.containsKey(s.name()) ? s.name() : s.name().replaceFirst("_(sum|count)$", "");
        assertTrue(types.containsKey(family), "sample without a TYPE line: " + line);
        samples.add(s);
      }
    }
    assertTrue(text.endsWith("\n"), "the exposition ends with a line feed");
    return new Scrape(samples, types, helps, contentType);
  }

  private static Sample sample(String line) {
    int i = 0;
    while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
      i++;
    }
    String name = line.substring(0, i);
    assertTrue(name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*"), "bad metric name in " + line);
    Map<String, String> labels = new HashMap<>();
    if (line.charAt(i) == '{') {
      i++;
      while (line.charAt(i) != '}') {
        int eq = line.indexOf("=\"", i);
        String key = line.substring(i, eq);
        StringBuilder value = new StringBuilder();
        int j = eq + 2;
        for (; line.charAt(j) != '"'; j++) {
          char c = line.charAt(j);
          if (c == '\\') {
            char e = line.charAt(++j);
            value.append(
                switch (e) {
                  case 'n' -> '\n';
                  case '\\' -> '\\';
                  case '"' -> '"';
                  default -> throw new AssertionError("bad escape \\" + e + " in " + line);
                });
          } else {
            value.append(c);
          }
        }
        labels.put(key, value.toString());
        i = j + 1;
        if (line.charAt(i) == ',') {
          i++;
        }
      }
      i++;
    }
    assertEquals(' ', line.charAt(i), "a space separates the value in " + line);
    return new Sample(name, labels, Double.parseDouble(line.substring(i + 1)));
  }

  @Test
  void theExpositionIsTextFormat004WithHelpAndTypeForEveryFamily() {
    Scrape s = scrape();
    assertTrue(s.contentType().startsWith("text/plain; version=0.0.4"), s.contentType());
    assertEquals(
        Map.ofEntries(
            Map.entry("mooncake_jobs", "gauge"),
            Map.entry("mooncake_tasks", "gauge"),
            Map.entry("mooncake_queue_depth", "gauge"),
            Map.entry("mooncake_nodes", "gauge"),
            Map.entry("mooncake_bytes_staged_total", "counter"),
            Map.entry("mooncake_task_attempts_total", "counter"),
            Map.entry("mooncake_task_duration_seconds", "summary"),
            Map.entry("mooncake_node_capacity_bytes", "gauge"),
            Map.entry("mooncake_node_free_bytes", "gauge"),
            Map.entry("mooncake_node_held_bytes", "gauge"),
            Map.entry("mooncake_evictions_total", "counter"),
            Map.entry("mooncake_evicted_bytes_total", "counter"),
            Map.entry("mooncake_http_requests_total", "counter")),
        s.types());
    assertEquals(s.types().keySet(), s.helps().keySet());
  }

  @Test
  void jobTaskAndNodeGaugesCountTheRows() {
    Scrape s = scrape();
    assertEquals(1, s.value("mooncake_jobs", "state", "completed"));
    assertEquals(1, s.value("mooncake_jobs", "state", "failed"));
    assertEquals(1, s.value("mooncake_jobs", "state", "canceled"));
    assertEquals(0, s.value("mooncake_jobs", "state", "planned"), "empty states are exposed at 0");
    assertEquals(1, s.value("mooncake_tasks", "type", "MODEL_DOWNLOAD", "state", "succeeded"));
    assertEquals(2, s.value("mooncake_tasks", "type", "REPLICA_COPY", "state", "succeeded"));
    assertEquals(4, s.value("mooncake_tasks", "type", "REPLICA_COPY", "state", "pending"));
    assertEquals(1, s.value("mooncake_tasks", "type", "REPLICA_COPY", "state", "processing"));
    assertEquals(1, s.value("mooncake_tasks", "type", "MATERIALIZE", "state", "failed"));
    assertEquals(0, s.value("mooncake_tasks", "type", "MODEL_VERIFY", "state", "pending"));
    assertEquals(
        0, s.value("mooncake_queue_depth", "node_id", NODE_A), "an idle registered node shows 0");
    assertEquals(3, s.value("mooncake_queue_depth", "node_id", NODE_B));
    assertEquals(1, s.value("mooncake_nodes", "live", "true"));
    assertEquals(1, s.value("mooncake_nodes", "live", "false"));
  }

  @Test
  void bytesAttemptsAndDurationsComeFromFinishedWork() {
    Scrape s = scrape();
    assertEquals(
        1000,
        s.value("mooncake_bytes_staged_total", "node_id", NODE_A),
        "materialize moves no bytes");
    assertEquals(600, s.value("mooncake_bytes_staged_total", "node_id", NODE_B));
    assertEquals(
        1,
        s.value("mooncake_task_attempts_total", "type", "MODEL_DOWNLOAD", "outcome", "succeeded"));
    assertEquals(
        2, s.value("mooncake_task_attempts_total", "type", "REPLICA_COPY", "outcome", "succeeded"));
    assertEquals(
        1, s.value("mooncake_task_attempts_total", "type", "REPLICA_COPY", "outcome", "retry"));
    assertEquals(
        1,
        s.value("mooncake_task_attempts_total", "type", "MATERIALIZE", "outcome", "lease_expired"));
    assertEquals(
        1, s.value("mooncake_task_attempts_total", "type", "MATERIALIZE", "outcome", "failed"));
    assertEquals(1, s.value("mooncake_task_duration_seconds_count", "type", "MODEL_DOWNLOAD"));
    assertEquals(
        10.0, s.value("mooncake_task_duration_seconds_sum", "type", "MODEL_DOWNLOAD"), 1e-9);
    assertEquals(2, s.value("mooncake_task_duration_seconds_count", "type", "REPLICA_COPY"));
    assertEquals(4.0, s.value("mooncake_task_duration_seconds_sum", "type", "REPLICA_COPY"), 1e-9);
    assertEquals(0.25, s.value("mooncake_task_duration_seconds_sum", "type", "MATERIALIZE"), 1e-9);
  }

  @Test
  void labelValuesAreEscapedAndReadBackUnchanged() {
    HttpResponse<String> res = get("/metrics");
    assertTrue(
        res.body().contains("mooncake_queue_depth{node_id=\"odd\\\"node\\\\path\\nnext\"} 1\n"),
        res.body());
    assertEquals(1, parse(res.body(), "").value("mooncake_queue_depth", "node_id", ODD_NODE));
  }

  @Test
  void httpRequestsAreCountedByRouteAndStatusWithUnroutedPathsPooled() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      assertEquals(200, get("/api/v1/nodes").statusCode());
    }
    assertEquals(400, get("/api/v1/model-distribution/jobs?state=bogus").statusCode());
    assertEquals(404, get("/no/such/path").statusCode());
    assertEquals(404, get("/another/unknown").statusCode());
    // The filter counts a request once its response is written, so the scrape may briefly lag.
    Scrape s =
        awaitScrape(
            x ->
                x.has("mooncake_http_requests_total", "route", "unmatched", "status", "404")
                    && x.value(
                            "mooncake_http_requests_total", "route", "unmatched", "status", "404")
                        == 2
                    && x.value(
                            "mooncake_http_requests_total",
                            "route",
                            "/api/v1/nodes",
                            "status",
                            "200")
                        == 3);
    assertEquals(
        1,
        s.value(
            "mooncake_http_requests_total",
            "route",
            "/api/v1/model-distribution/jobs",
            "status",
            "400"));
    assertTrue(
        s.samples().stream()
            .noneMatch(x -> x.labels().getOrDefault("route", "").contains("no/such")));
  }

  private static Scrape awaitScrape(Predicate<Scrape> done) throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(10));
    Scrape last;
    do {
      last = scrape();
      if (done.test(last)) {
        return last;
      }
      TimeUnit.MILLISECONDS.sleep(50);
    } while (Instant.now().isBefore(deadline));
    return fail("metrics never showed the expected counts: " + last.samples());
  }
}
