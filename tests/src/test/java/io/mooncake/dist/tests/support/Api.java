package io.mooncake.dist.tests.support;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;

/** The master's HTTP API as a control plane calls it: real HTTP, JSON in and out. */
public final class Api {
  private final HttpClient http;
  private final String base;
  private final String token;

  public Api(String base) {
    this(base, null, null);
  }

  /**
   * An API client sending {@code Authorization: Bearer <token>} (when not null), trusting {@code
   * ssl} for https.
   */
  public Api(String base, String token, SSLContext ssl) {
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    if (ssl != null) {
      b.sslContext(ssl);
    }
    this.http = b.build();
    this.base = base;
    this.token = token;
  }

  /** The same master with another token (null: none). */
  /** The master's base URL, e.g. {@code http://127.0.0.1:8080}. */
  public String base() {
    return base;
  }

  public Api withToken(String otherToken) {
    return new Api(base, otherToken, http.sslContext());
  }

  /** A status code and the parsed JSON body. */
  public record Reply(int status, JsonNode json) {}

  public Reply post(String path, byte[] body) {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build());
  }

  public Reply post(String path, String body) {
    return post(path, body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  public Reply get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET().build());
  }

  public Reply delete(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE().build());
  }

  public Reply job(String jobId) {
    return get(
        "/api/v1/model-distribution/jobs?job_id="
            + java.net.URLEncoder.encode(jobId, java.nio.charset.StandardCharsets.UTF_8));
  }

  /**
   * Polls the job until {@code done} holds; fails with the last snapshot after {@code timeout} (a
   * hang guard).
   */
  public JsonNode awaitJob(String jobId, Predicate<JsonNode> done, Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    JsonNode last = null;
    while (Instant.now().isBefore(deadline)) {
      Reply r = job(jobId);
      if (r.status() == 200) {
        last = r.json();
        if (done.test(last)) {
          return last;
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return fail("job " + jobId + " did not reach the expected state; last snapshot: " + last);
  }

  public JsonNode awaitTerminal(String jobId) {
    return awaitJob(
        jobId,
        j -> j.get("status").asText().matches("completed|failed|canceled"),
        Duration.ofSeconds(90));
  }

  private Reply send(HttpRequest unsigned) {
    HttpRequest request =
        token == null
            ? unsigned
            : HttpRequest.newBuilder(unsigned, (k, v) -> true)
                .header("Authorization", "Bearer " + token)
                .build();
    try {
      HttpResponse<byte[]> res = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      JsonNode json = res.body().length == 0 ? null : Json.MAPPER.readTree(res.body());
      return new Reply(res.statusCode(), json);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
