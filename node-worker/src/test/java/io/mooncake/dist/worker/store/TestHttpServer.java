package io.mooncake.dist.worker.store;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A real HTTP server on 127.0.0.1 (ephemeral port) serving fixed responses, for source tests. */
final class TestHttpServer implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();

  TestHttpServer() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(executor);
    server.start();
  }

  /** Serves {@code body} with status 200 and its exact Content-Length. */
  TestHttpServer serve(String path, byte[] body) {
    return respond(path, 200, body);
  }

  TestHttpServer respond(String path, int status, byte[] body) {
    server.createContext(
        path,
        exchange -> {
          exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    return this;
  }

  /** Serves {@code body} with chunked transfer encoding, so no Content-Length is sent. */
  TestHttpServer serveChunked(String path, byte[] body) {
    server.createContext(
        path,
        exchange -> {
          exchange.sendResponseHeaders(200, 0);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    return this;
  }

  /**
   * Serves {@code body} only to requests carrying {@code header: value} (401 otherwise), and
   * records every value of {@code header} any request to {@code path} carried.
   */
  TestHttpServer protect(
      String path, String header, String value, byte[] body, java.util.List<String> seen) {
    server.createContext(
        path,
        exchange -> {
          String got = exchange.getRequestHeaders().getFirst(header);
          seen.add(String.valueOf(got));
          int status = value.equals(got) ? 200 : 401;
          byte[] out = status == 200 ? body : new byte[0];
          exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
          try (OutputStream o = exchange.getResponseBody()) {
            o.write(out);
          }
        });
    return this;
  }

  /** Answers with a redirect to {@code location}. */
  TestHttpServer redirect(String path, String location) {
    server.createContext(
        path,
        exchange -> {
          exchange.getResponseHeaders().add("Location", location);
          exchange.sendResponseHeaders(302, -1);
          exchange.close();
        });
    return this;
  }

  String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }

  /**
   * A raw-socket server that declares {@code declaredLength} bytes, sends only {@code sent}, then
   * closes the connection: a connection dropped mid-body, as a flaky upstream would.
   */
  static final class DroppingServer implements AutoCloseable {
    private final ServerSocket socket;
    private final Thread thread;

    DroppingServer(byte[] sent, long declaredLength) throws IOException {
      socket = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"));
      thread =
          Thread.ofPlatform()
              .daemon()
              .start(
                  () -> {
                    while (!socket.isClosed()) {
                      try (Socket s = socket.accept()) {
                        drainRequestHeaders(s);
                        OutputStream out = s.getOutputStream();
                        out.write(
                            ("HTTP/1.1 200 OK\r\nContent-Length: "
                                    + declaredLength
                                    + "\r\nContent-Type: application/octet-stream\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        out.write(sent);
                        out.flush();
                      } catch (IOException e) {
                        return;
                      }
                    }
                  });
    }

    private static void drainRequestHeaders(Socket s) throws IOException {
      var in = s.getInputStream();
      int matched = 0;
      byte[] end = {'\r', '\n', '\r', '\n'};
      int b;
      while (matched < 4 && (b = in.read()) >= 0) {
        matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      }
    }

    String url(String path) {
      return "http://127.0.0.1:" + socket.getLocalPort() + path;
    }

    @Override
    public void close() throws Exception {
      socket.close();
      thread.join(5_000);
    }
  }
}
