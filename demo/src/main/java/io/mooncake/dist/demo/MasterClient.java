package io.mooncake.dist.demo;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The master's HTTP API as the demo calls it, the way any control plane would: JSON over HTTP. */
final class MasterClient {
  static final String JOBS = "/api/v1/model-distribution/jobs";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final ObjectMapper json;
  private final String base;
  private final String token;

  /** A client sending {@code Authorization: Bearer <token>} with every request. */
  MasterClient(ObjectMapper json, String base, String token) {
    this.json = json;
    this.base = base;
    this.token = token;
  }

  /**
   * A status code, the raw body, and the body parsed as JSON ({@code null} when it is not JSON).
   */
  record Reply(int status, String body, JsonNode json) {}

  String base() {
    return base;
  }

  Reply get(String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  Reply job(String jobId) throws IOException, InterruptedException {
    return get(JOBS + "?job_id=" + URLEncoder.encode(jobId, StandardCharsets.UTF_8));
  }

  Reply post(String path, JsonNode body) throws IOException, InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body))));
  }

  private Reply send(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpResponse<String> res =
        http.send(
            request
                .timeout(Duration.ofSeconds(10))
                .header("Authorization", "Bearer " + token)
                .build(),
            HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    JsonNode parsed;
    try {
      parsed = res.body().isEmpty() ? null : json.readTree(res.body());
    } catch (JsonProcessingException e) {
      parsed = null;
    }
    return new Reply(res.statusCode(), res.body(), parsed);
  }
}
