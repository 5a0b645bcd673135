package io.mooncake.dist.cli.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A stand-in for {@code mooncake_master}: canned JSON answers per route (a queue, the last answer
 * repeating), every request recorded for the test to assert on.
 */
public final class FakeMaster implements AutoCloseable {
  /** A request as the master received it. */
  public record Request(
      String method, String path, String query, String body, String authorization) {}

  /** A canned answer. */
  public record Answer(int status, String json) {}

  private final HttpServer server;
  private final Map<String, Deque<Answer>> answers = new HashMap<>();
  private final List<Request> requests = new ArrayList<>();

  public FakeMaster() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Answers {@code method path} (query ignored) with these, in turn; the last one repeats. */
  public FakeMaster on(String method, String path, Answer... inTurn) {
    synchronized (answers) {
      answers.put(method + " " + path, new ArrayDeque<>(List.of(inTurn)));
    }
    return this;
  }

  public static Answer answer(int status, String json) {
    return new Answer(status, json);
  }

  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public List<Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String path = exchange.getRequestURI().getPath();
    synchronized (requests) {
      requests.add(
          new Request(
              exchange.getRequestMethod(),
              path,
              exchange.getRequestURI().getRawQuery(),
              body,
              exchange.getRequestHeaders().getFirst("Authorization")));
    }
    Answer answer;
    synchronized (answers) {
      Deque<Answer> queue = answers.get(exchange.getRequestMethod() + " " + path);
      answer =
          queue == null
              ? new Answer(404, "")
              : queue.size() > 1 ? queue.removeFirst() : queue.getFirst();
    }
    byte[] bytes = answer.json().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("content-type", "application/json");
    exchange.sendResponseHeaders(answer.status(), bytes.length == 0 ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
