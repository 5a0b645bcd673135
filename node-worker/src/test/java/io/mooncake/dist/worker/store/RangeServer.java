package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real HTTP/1.1 source on a raw socket (one response per connection) serving one file, with
 * {@code Range: bytes=<n>-} and {@code If-Range} like a CDN, or ignoring ranges like a plain
 * server; it counts every body byte it sends and can cut a response off after some bytes, as a
 * dropped connection would.
 */
final class RangeServer implements AutoCloseable {
  private final ServerSocket socket;
  private final Thread thread;
  volatile byte[] content;
  volatile String etag;
  volatile boolean honorRanges = true;

  /** Answers a range request with a 206 for the whole file (a broken cache, say). */
  volatile boolean wrongRange;

  /** The next response is cut off after this many body bytes (then reset to -1). */
  volatile long cutNextAfter = -1;

  final AtomicLong served = new AtomicLong();
  final List<String> ranges = Collections.synchronizedList(new ArrayList<>());
  final List<Integer> statuses = Collections.synchronizedList(new ArrayList<>());

  RangeServer(byte[] content, String etag) throws IOException {
    this.content = content;
    this.etag = etag;
    socket = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    thread =
        Thread.ofPlatform()
            .daemon()
            .start(
                () -> {
                  while (!socket.isClosed()) {
                    try (Socket s = socket.accept()) {
                      handle(s);
                    } catch (IOException e) {
                      // the client went away, or the server is closing
                    }
                  }
                });
  }

  private void handle(Socket s) throws IOException {
    Map<String, String> headers = readHeaders(s.getInputStream());
    byte[] body = content;
    String range = headers.get("range");
    ranges.add(range);
    String ifRange = headers.get("if-range");
    long from = 0;
    boolean partial = false;
    if (range != null
        && honorRanges
        && range.startsWith("bytes=")
        && range.endsWith("-")
        && (ifRange == null || ifRange.equals(etag))) {
      from = wrongRange ? 0 : Long.parseLong(range.substring(6, range.length() - 1));
      partial = true;
    }
    statuses.add(partial ? 206 : 200);
    StringBuilder head =
        new StringBuilder(partial ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n");
    head.append("Content-Length: ").append(body.length - from).append("\r\n");
    if (partial) {
      head.append("Content-Range: bytes ")
          .append(from)
          .append('-')
          .append(body.length - 1)
          .append('/')
          .append(body.length)
          .append("\r\n");
    }
    if (etag != null) {
      head.append("ETag: ").append(etag).append("\r\n");
    }
    head.append("Connection: close\r\n\r\n");
    OutputStream out = s.getOutputStream();
    out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
    long cut = cutNextAfter;
    cutNextAfter = -1;
    long sent = 0;
    for (long pos = from; pos < body.length; ) {
      int n = (int) Math.min(64 * 1024, body.length - pos);
      if (cut >= 0) {
        n = (int) Math.min(n, cut - sent);
        if (n == 0) {
          out.flush();
          return; // the connection closes with the body short
        }
      }
      out.write(body, (int) pos, n);
      served.addAndGet(n);
      sent += n;
      pos += n;
    }
    out.flush();
  }

  private static Map<String, String> readHeaders(InputStream in) throws IOException {
    StringBuilder text = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0) {
      text.append((char) b);
      if (text.length() >= 4 && text.substring(text.length() - 4).equals("\r\n\r\n")) {
        break;
      }
    }
    Map<String, String> headers = new HashMap<>();
    String[] lines = text.toString().split("\r\n");
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(
            lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).trim());
      }
    }
    return headers;
  }

  String url() {
    return "http://127.0.0.1:" + socket.getLocalPort() + "/model.bin";
  }

  @Override
  public void close() throws Exception {
    socket.close();
    thread.join(5_000);
  }
}
