package io.mooncake.dist.worker.http;

import io.mooncake.dist.scheduler.metrics.PrometheusText;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

    /** Models this client evicted since it started (issue 22). */
    default long evictions() {
      return 0;
    }

    /** Their bytes. */
    default long evictedBytes() {
      return 0;
    }
  }

  /** Connections served at once; more are closed on arrival. */
  static final int MAX_CONNECTIONS = 32;

  /** Time a client has to send its whole request head; then the connection is closed. */
  static final int REQUEST_TIMEOUT_MS = 5_000;

  /** Longest request head read; a longer one is refused. */
  private static final int MAX_HEAD_BYTES = 8 * 1024;

  private static final Logger log = LoggerFactory.getLogger(ClientEndpoint.class);

  private final ServerSocket server;
  private final Source source;
  private final Semaphore slots = new Semaphore(MAX_CONNECTIONS);
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Thread acceptor;

  private ClientEndpoint(ServerSocket server, Source source) {
    this.server = server;
    this.source = source;
    this.acceptor = Thread.ofPlatform().daemon().name("client-http-accept").unstarted(this::accept);
  }

  /**
   * Binds {@code host:port} (0 = an ephemeral port) and starts serving. Each connection gets a
   * virtual thread, {@value #REQUEST_TIMEOUT_MS} ms to send its request head and one answer ({@code
   * Connection: close}); at most {@value #MAX_CONNECTIONS} are served at once. So clients that open
   * connections and send half a request cannot keep {@code /health} from answering.
   */
  public static ClientEndpoint start(String host, int port, Source source) throws IOException {
    ServerSocket server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress(host, port), 64);
    ClientEndpoint endpoint = new ClientEndpoint(server, source);
    endpoint.acceptor.start();
    return endpoint;
  }

  public int port() {
    return server.getLocalPort();
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (IOException e) {
        if (!server.isClosed()) {
          log.warn("client HTTP endpoint: accept failed: {}", e.getMessage());
        }
        continue;
      }
      if (!slots.tryAcquire()) {
        closeQuietly(socket); // full: the caller retries; the connections in hand time out soon
        continue;
      }
      open.add(socket);
      Thread.ofVirtual()
          .name("client-http")
          .start(
              () -> {
                try {
                  serve(socket);
                } finally {
                  open.remove(socket);
                  closeQuietly(socket);
                  slots.release();
                }
              });
    }
  }

  private void serve(Socket socket) {
    try {
      socket.setSoTimeout(REQUEST_TIMEOUT_MS);
      String requestLine = readHead(new java.io.BufferedInputStream(socket.getInputStream(), 1024));
      OutputStream out = socket.getOutputStream();
      if (requestLine == null) {
        send(out, false, 400, "text/plain; charset=utf-8", "bad request\n", null);
        return;
      }
      String[] parts = requestLine.split(" ");
      if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
        send(out, false, 400, "text/plain; charset=utf-8", "bad request\n", null);
        return;
      }
      String method = parts[0];
      String target = parts[1];
      int q = target.indexOf('?');
      String path = q >= 0 ? target.substring(0, q) : target;
      boolean head = "HEAD".equals(method);
      if (!path.equals("/health") && !path.equals("/metrics")) {
        send(out, head, 404, "text/plain; charset=utf-8", "not found\n", null);
      } else if (!"GET".equals(method) && !head) {
        send(out, false, 405, "text/plain; charset=utf-8", "method not allowed\n", "GET, HEAD");
      } else if (path.equals("/health")) {
        health(out, head);
      } else {
        send(out, head, 200, PrometheusText.CONTENT_TYPE, render(), null);
      }
    } catch (java.net.SocketTimeoutException e) {
      log.debug("client HTTP endpoint: request from {} timed out", socket.getRemoteSocketAddress());
    } catch (IOException | RuntimeException e) {
      log.debug(
          "client HTTP endpoint: {} failed: {}", socket.getRemoteSocketAddress(), e.toString());
    }
  }

  /**
   * Reads the request head (up to the blank line) within {@value #REQUEST_TIMEOUT_MS} ms in all;
   * returns its first line, or null when it is too long or not HTTP.
   */
  private static String readHead(InputStream in) throws IOException {
    long deadline = System.nanoTime() + REQUEST_TIMEOUT_MS * 1_000_000L;
    byte[] buf = new byte[MAX_HEAD_BYTES];
    int n = 0;
    while (true) {
      if (System.nanoTime() > deadline) {
        throw new java.net.SocketTimeoutException("request head not complete in time");
      }
      int b = in.read();
      if (b < 0) {
        return null;
      }
      if (n == buf.length) {
        return null;
      }
      buf[n++] = (byte) b;
      if (n >= 4
          && buf[n - 4] == '\r'
          && buf[n - 3] == '\n'
          && buf[n - 2] == '\r'
          && buf[n - 1] == '\n') {
        break;
      }
      if (n >= 2 && buf[n - 2] == '\n' && buf[n - 1] == '\n') {
        break;
      }
    }
    String text = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
    int eol = text.indexOf('\n');
    return text.substring(0, eol).strip();
  }

  private void health(OutputStream out, boolean head) throws IOException {
    String reason = source.unhealthyReason();
    if (reason == null) {
      send(
          out,
          head,
          200,
          "application/json",
          "{\"status\":\"UP\",\"node_id\":\"" + jsonEscape(source.nodeId()) + "\"}",
          null);
    } else {
      send(
          out,
          head,
          503,
          "application/json",
          "{\"status\":\"DOWN\",\"reason\":\"" + jsonEscape(reason) + "\"}",
          null);
    }
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
    p.family(
            "mooncake_client_evictions_total",
            "counter",
            "Models this client evicted from its data directory (watermarks or room for a job).")
        .sample("mooncake_client_evictions_total", List.of(), source.evictions());
    p.family("mooncake_client_evicted_bytes_total", "counter", "Bytes those evictions freed.")
        .sample("mooncake_client_evicted_bytes_total", List.of(), source.evictedBytes());
    return p.text();
  }

  private static void send(
      OutputStream out, boolean head, int status, String contentType, String body, String allow)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder h = new StringBuilder();
    h.append("HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
    h.append("Content-Type: ").append(contentType).append("\r\n");
    h.append("Content-Length: ").append(bytes.length).append("\r\n");
    h.append("Cache-Control: no-store\r\n");
    if (allow != null) {
      h.append("Allow: ").append(allow).append("\r\n");
    }
    h.append("Connection: close\r\n\r\n");
    out.write(h.toString().getBytes(StandardCharsets.ISO_8859_1));
    if (!head) {
      out.write(bytes);
    }
    out.flush();
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing a connection we are done with
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
    try {
      server.close();
    } catch (IOException e) {
      log.debug("closing the client HTTP endpoint: {}", e.toString());
    }
    open.forEach(ClientEndpoint::closeQuietly);
  }
}
