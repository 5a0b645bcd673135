package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.master.ServerLimits;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master drops requests that stop half-way instead of keeping them open, and a master that
 * cannot bind its port exits instead of running without a listener.
 */
class MasterConnectionLimitsTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void idleKeepAliveConnectionsAreClosedAfterTheIdleTimeout() throws Exception {
    WebServer server =
        ServerLimits.apply(
                WebServer.builder()
                    .host("127.0.0.1")
                    .port(0)
                    .routing(r -> MasterRouting.routing(r, pg.database(), () -> {})))
            .build()
            .start();
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
        s.getOutputStream().flush();
        idle.add(s);
      }
      long limitMs = ServerLimits.IDLE_TIMEOUT.toMillis() + ServerLimits.IDLE_CHECK.toMillis();
      long started = System.nanoTime();
      for (Socket s : idle) {
        s.setSoTimeout((int) limitMs + 10_000);
        byte[] buf = new byte[4096];
        int n;
        boolean answered = false;
        try {
          while ((n = s.getInputStream().read(buf)) >= 0) {
            answered |= new String(buf, 0, n).startsWith("HTTP/1.1 200");
          }
        } catch (java.net.SocketException reset) {
          // a reset is a close too
        }
        assertTrue(answered, "the request itself was served");
      }
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertTrue(waitedMs < limitMs + 10_000, "idle connections closed after " + waitedMs + " ms");
    } finally {
      for (Socket s : idle) {
        s.close();
      }
      server.stop();
    }
  }

  @Test
  void aRequestStoppedInsideItsHeadersIsClosedAfterTheHeadDeadline() throws Exception {
    WebServer server =
        ServerLimits.apply(
                WebServer.builder()
                    .host("127.0.0.1")
                    .port(0)
                    .routing(r -> MasterRouting.routing(r, pg.database(), () -> {})))
            .build()
            .start();
    List<Socket> halfSent = new ArrayList<>();
    try {
      long closedBefore = ServerLimits.REQUEST_HEADS.closedCount();
      for (int i = 0; i < 5; i++) {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
        // A request line and one header, then nothing: the head never ends.
        s.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n".getBytes());
        s.getOutputStream().flush();
        halfSent.add(s);
      }
      // Meanwhile a whole request on another connection is served.
      try (Socket ok = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
        ok.setSoTimeout(10_000);
        ok.getOutputStream()
            .write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes());
        String statusLine =
            new java.io.BufferedReader(
                    new java.io.InputStreamReader(
                        ok.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))
                .readLine();
        assertEquals("HTTP/1.1 200 OK", statusLine);
      }
      long limitMs = ServerLimits.REQUEST_HEAD_TIMEOUT.toMillis();
      for (Socket s : halfSent) {
        // Well past the deadline but short of the idle timeout plus its check: only the head
        // deadline can have closed it by then.
        s.setSoTimeout((int) limitMs + 4_000);
        int read;
        try {
          read = s.getInputStream().read();
        } catch (java.net.SocketException reset) {
          read = -1; // a reset is a close too
        }
        assertEquals(-1, read, "the server closed the half-sent request without answering it");
      }
      assertTrue(
          ServerLimits.REQUEST_HEADS.closedCount() - closedBefore >= 5,
          "each was closed by the head deadline");
    } finally {
      for (Socket s : halfSent) {
        s.close();
      }
      server.stop();
    }
  }

  @Test
  void aMasterWhosePortIsTakenExitsWith4NamingIt() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Processes procs = new Processes(tmp)) {
      Process p =
          procs.start(
              "master",
              "mooncake_master",
              "--http-port",
              String.valueOf(taken.getLocalPort()),
              "--bind-host",
              "127.0.0.1",
              "--db-url",
              pg.url(),
              "--no-auth",
              "--allow-any-source");
      assertTrue(p.waitFor(90, TimeUnit.SECONDS), "the master must exit, not run without a port");
      String log = Files.readString(tmp.resolve("master.log"));
      assertEquals(4, p.exitValue(), log);
      assertTrue(log.contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()), log);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
