package io.mooncake.dist.worker.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's {@code /health} over a real socket while other connections hold half-sent requests:
 * it still answers, and the server closes the half-sent ones once their time is up.
 */
class ClientEndpointTimeoutTest {
  private static final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private ClientEndpoint endpoint;
  private int port;

  @BeforeEach
  void start() throws IOException {
    WorkerMetrics metrics = new WorkerMetrics();
    endpoint =
        ClientEndpoint.start(
            "127.0.0.1",
            0,
            new ClientEndpoint.Source() {
              @Override
              public String nodeId() {
                return "127.0.0.1:1";
              }

              @Override
              public String unhealthyReason() {
                return null;
              }

              @Override
              public long bytesServed() {
                return 0;
              }

              @Override
              public int tasksRunning() {
                return 0;
              }

              @Override
              public double heartbeatAgeSeconds() {
                return 0.5;
              }

              @Override
              public WorkerMetrics metrics() {
                return metrics;
              }
            });
    port = endpoint.port();
  }

  @AfterEach
  void stop() {
    endpoint.close();
  }

  @Test
  void halfSentRequestsNeitherBlockHealthNorStayOpen() throws Exception {
    List<java.net.Socket> stalled = new java.util.ArrayList<>();
    try {
      // More than the old fixed pool of two threads, and more than the connection cap.
      for (int i = 0; i < 40; i++) {
        java.net.Socket s = new java.net.Socket("127.0.0.1", port);
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes());
        s.getOutputStream().flush();
        stalled.add(s);
      }
      long started = System.nanoTime();
      HttpResponse<String> health = null;
      while (health == null && System.nanoTime() - started < Duration.ofSeconds(20).toNanos()) {
        try {
          health =
              http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                      .timeout(Duration.ofSeconds(2))
                      .GET()
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
          Thread.sleep(100); // refused at the cap or timed out: try again
        }
      }
      assertTrue(health != null, "GET /health never answered while requests were half-sent");
      assertTrue(health.body().contains("\"status\""), health.body());
      assertTrue(
          System.nanoTime() - started < Duration.ofSeconds(15).toNanos(),
          "answered while the half-sent requests were pending");
      // The server closes every half-sent request once its time is up.
      for (java.net.Socket s : stalled) {
        s.setSoTimeout(15_000);
        try {
          assertEquals(-1, s.getInputStream().read(), "the server closes a half-sent request");
        } catch (java.net.SocketException reset) {
          // closed with our unread bytes in its buffer: a reset, which is a close too
        }
      }
    } finally {
      for (java.net.Socket s : stalled) {
        s.close();
      }
    }
  }

  @Test
  void anUnknownPathIs404AndAPostIs405() throws Exception {
    HttpResponse<String> missing =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/nope")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(404, missing.statusCode());
    HttpResponse<String> post =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                .POST(HttpRequest.BodyPublishers.ofString("x"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(405, post.statusCode());
    assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElse(""));
    HttpResponse<String> metrics =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics?x=1")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, metrics.statusCode());
    assertTrue(
        metrics.body().contains("mooncake_client_heartbeat_age_seconds 0.5"), metrics.body());
  }
}
