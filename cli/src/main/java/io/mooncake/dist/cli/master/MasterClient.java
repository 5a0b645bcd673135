package io.mooncake.dist.cli.master;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;
import javax.net.ssl.SSLContext;

/**
 * The master's HTTP API as the CLI uses it. Every call returns the status and JSON body for the
 * command to interpret (a 404 means something different to {@code status} and {@code cancel}); what
 * means the same everywhere is decided here: no connection or a 5xx is {@link
 * ExitCode#UNREACHABLE}, a body that is not JSON means we are not talking to a master.
 */
public final class MasterClient {
  /** The RFC's job resource. */
  public static final String JOBS = "/api/v1/model-distribution/jobs";

  /** Cancel a job: {@code POST ...?job_id=}. */
  public static final String CANCEL = JOBS + "/cancel";

  /** Registered nodes. */
  public static final String NODES = "/api/v1/nodes";

  /** Pins: GET lists them, POST pins, DELETE unpins. */
  public static final String PINS = "/api/v1/model-distribution/pins";

  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final URI base;
  private final HttpClient http;
  private final String token;

  public MasterClient(URI base) {
    this(base, null, null);
  }

  /**
   * A client sending {@code Authorization: Bearer <token>} when token is not null, trusting {@code
   * ssl} when given.
   */
  public MasterClient(URI base, String token, SSLContext ssl) {
    String s = base.toString();
    this.base = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT);
    if (ssl != null) {
      b.sslContext(ssl);
    }
    this.http = b.build();
    this.token = token;
  }

  /** {@code GET path?query}; query parameters with a null value are left out. */
  public MasterReply get(String path, Map<String, String> query) {
    return send(HttpRequest.newBuilder(uri(path, query)).GET());
  }

  /** {@code POST path} with a JSON body. */
  public MasterReply postJson(String path, JsonNode body) {
    String json;
    try {
      json = Json.MAPPER.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a JSON tree", e);
    }
    return send(
        HttpRequest.newBuilder(uri(path, Map.of()))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)));
  }

  /** {@code POST path?query} without a body. */
  public MasterReply post(String path, Map<String, String> query) {
    return send(HttpRequest.newBuilder(uri(path, query)).POST(HttpRequest.BodyPublishers.noBody()));
  }

  /** {@code DELETE path?query} without a body. */
  public MasterReply delete(String path, Map<String, String> query) {
    return send(HttpRequest.newBuilder(uri(path, query)).DELETE());
  }

  /** Query parameters in insertion order, for {@link #get} and {@link #post}. */
  public static Map<String, String> query(String... keyValues) {
    Map<String, String> q = new LinkedHashMap<>();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      q.put(keyValues[i], keyValues[i + 1]);
    }
    return q;
  }

  private URI uri(String path, Map<String, String> query) {
    StringJoiner params = new StringJoiner("&", "?", "").setEmptyValue("");
    query.forEach(
        (k, v) -> {
          if (v != null) {
            params.add(
                URLEncoder.encode(k, StandardCharsets.UTF_8)
                    + "="
                    + URLEncoder.encode(v, StandardCharsets.UTF_8));
          }
        });
    return URI.create(base + path + params);
  }

  private MasterReply send(HttpRequest.Builder request) {
    request.timeout(REQUEST_TIMEOUT).header("accept", "application/json");
    if (token != null) {
      request.header("authorization", "Bearer " + token);
    }
    HttpRequest req = request.build();
    HttpResponse<String> response;
    try {
      response = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new CliException(
          ExitCode.UNREACHABLE, "cannot reach the master at " + base + ": " + describe(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException(
          ExitCode.UNREACHABLE, "interrupted while waiting for the master at " + base, e);
    }
    MasterReply reply = new MasterReply(response.statusCode(), parse(req, response));
    if (reply.status() == 401) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          req.method()
              + " "
              + req.uri().getPath()
              + ": "
              + reply.errorMessage()
              + " (HTTP 401 from "
              + base
              + "); "
              + (token == null
                  ? "set MOONCAKE_API_TOKEN or pass --token-file <file>"
                  : "check the token"));
    }
    if (reply.status() == 403) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          req.method()
              + " "
              + req.uri().getPath()
              + ": "
              + reply.errorMessage()
              + " (HTTP 403 from "
              + base
              + ")");
    }
    if (reply.status() >= 500) {
      throw new CliException(
          ExitCode.UNREACHABLE,
          req.method()
              + " "
              + req.uri().getPath()
              + ": "
              + reply.errorMessage()
              + " (HTTP "
              + reply.status()
              + " from "
              + base
              + ")");
    }
    return reply;
  }

  private JsonNode parse(HttpRequest req, HttpResponse<String> response) {
    String body = response.body();
    if (body == null || body.isBlank()) {
      return MissingNode.getInstance();
    }
    try {
      return Json.MAPPER.readTree(body);
    } catch (JsonProcessingException e) {
      if (response.statusCode() >= 400) {
        // An error page from a proxy or a route this master does not have: the status says enough.
        return MissingNode.getInstance();
      }
      throw new CliException(
          ExitCode.UNREACHABLE,
          req.method()
              + " "
              + req.uri().getPath()
              + " answered HTTP "
              + response.statusCode()
              + " with a body that is not JSON; is "
              + base
              + " a Mooncake master?",
          e);
    }
  }

  // HttpClient's exceptions often carry no message; say what their type means.
  private static String describe(IOException e) {
    if (e instanceof HttpConnectTimeoutException) {
      return "no connection within " + CONNECT_TIMEOUT.toSeconds() + " s";
    }
    if (e instanceof HttpTimeoutException) {
      return "no answer within " + REQUEST_TIMEOUT.toSeconds() + " s";
    }
    if (e instanceof ConnectException) {
      return "connection refused or host unreachable";
    }
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      Throwable cause = e.getCause();
      message = cause != null && cause.getMessage() != null ? cause.getMessage() : "";
    }
    String kind = e.getClass().getSimpleName();
    return message.isBlank() ? kind : kind + " (" + message + ")";
  }
}
