package io.mooncake.dist.worker.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.scheduler.metrics.PrometheusText;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The node worker's small HTTP endpoint: {@code GET /health} and {@code GET /metrics} (Prometheus
 * text 0.0.4). It only reads in-process state; it never touches the database.
 */
public final class ClientEndpoint implements AutoCloseable {
  /** What the endpoint reads from the worker. */
  public interface Source {
    String nodeId();

    /** {@code null} when healthy, else why not. */
    String unhealthyReason();

    long bytesServed();

    int tasksRunning();

    /** Seconds since the last successful heartbeat, NaN if none succeeded yet. */
    double heartbeatAgeSeconds();

    WorkerMetrics metrics();
  }

  private final HttpServer server;
  private final ExecutorService threads;
  private final Source source;

  private ClientEndpoint(HttpServer server, ExecutorService threads, Source source) {
    this.server = server;
    this.threads = threads;
    this.source = source;
  }

  /** Binds {@code host:port} (0 = an ephemeral port) and starts serving. */
  public static ClientEndpoint start(String host, int port, Source source) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
    ExecutorService threads =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "client-http");
              t.setDaemon(true);
              return t;
            });
    ClientEndpoint endpoint = new ClientEndpoint(server, threads, source);
    server.createContext("/health", endpoint::health);
    server.createContext("/metrics", endpoint::metrics);
    server.createContext("/", ex -> send(ex, 404, "text/plain; charset=utf-8", "not found\n"));
    server.setExecutor(threads);
    server.start();
    return endpoint;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private void health(HttpExchange ex) throws IOException {
    if (!allowed(ex, "/health")) {
      return;
    }
    String reason = source.unhealthyReason();
    if (reason == null) {
      send(
          ex,
          200,
          "application/json",
          "{\"status\":\"UP\",\"node_id\":\"" + jsonEscape(source.nodeId()) + "\"}");
    } else {
      send(
          ex,
          503,
          "application/json",
          "{\"status\":\"DOWN\",\"reason\":\"" + jsonEscape(reason) + "\"}");
    }
  }

  private void metrics(HttpExchange ex) throws IOException {
    if (!allowed(ex, "/metrics")) {
      return;
    }
    send(ex, 200, PrometheusText.CONTENT_TYPE, render());
  }

  /** The exposition text. */
  String render() {
    WorkerMetrics m = source.metrics();
    PrometheusText p = new PrometheusText();
    p.family(
            "mooncake_client_bytes_served_total",
            "counter",
            "Bytes this node's chunk server sent to peers.")
        .sample("mooncake_client_bytes_served_total", List.of(), source.bytesServed());
    p.family(
            "mooncake_client_bytes_received_total",
            "counter",
            "Bytes of replica copies that succeeded on this node.")
        .sample("mooncake_client_bytes_received_total", List.of(), m.bytesReceived());
    p.family(
        "mooncake_client_tasks_total",
        "counter",
        "Tasks this node finished, by type and outcome (succeeded, failed, retry).");
    for (Map.Entry<String, Map<String, Long>> byType : m.tasks().entrySet()) {
      for (Map.Entry<String, Long> e : byType.getValue().entrySet()) {
        p.sample(
            "mooncake_client_tasks_total",
            List.of("type", byType.getKey(), "outcome", e.getKey()),
            e.getValue());
      }
    }
    p.family("mooncake_client_tasks_running", "gauge", "Tasks executing on this node now.")
        .sample("mooncake_client_tasks_running", List.of(), source.tasksRunning());
    Map<String, double[]> durations = m.durations();
    p.family(
        "mooncake_client_task_duration_seconds", "summary", "Time spent executing tasks, by type.");
    for (Map.Entry<String, double[]> e : durations.entrySet()) {
      p.sample(
          "mooncake_client_task_duration_seconds_sum",
          List.of("type", e.getKey()),
          e.getValue()[0]);
      p.sample(
          "mooncake_client_task_duration_seconds_count",
          List.of("type", e.getKey()),
          e.getValue()[1]);
    }
    p.family(
            "mooncake_client_heartbeat_age_seconds",
            "gauge",
            "Seconds since the last successful heartbeat (NaN before the first).")
        .sample("mooncake_client_heartbeat_age_seconds", List.of(), source.heartbeatAgeSeconds());
    return p.text();
  }

  /** Only GET (and HEAD) of the exact path. */
  private static boolean allowed(HttpExchange ex, String path) throws IOException {
    if (!path.equals(ex.getRequestURI().getPath())) {
      send(ex, 404, "text/plain; charset=utf-8", "not found\n");
      return false;
    }
    String method = ex.getRequestMethod();
    if (!"GET".equals(method) && !"HEAD".equals(method)) {
      ex.getResponseHeaders().set("Allow", "GET, HEAD");
      send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
      return false;
    }
    return true;
  }

  private static void send(HttpExchange ex, int status, String contentType, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", contentType);
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equals(ex.getRequestMethod());
    ex.sendResponseHeaders(status, head ? -1 : bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }

  private static String jsonEscape(String s) {
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
  }

  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** Stops serving; idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    server.stop(0);
    threads.shutdownNow();
  }
}
