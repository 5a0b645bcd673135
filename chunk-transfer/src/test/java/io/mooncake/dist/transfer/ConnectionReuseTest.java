package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection whose fetch succeeded serves the next fetch from that peer, over real sockets; one
 * whose fetch failed is closed; a kept connection the peer dropped is replaced without failing the
 * fetch; kept connections expire with the idle timeout.
 */
@Timeout(60)
class ConnectionReuseTest {
  @TempDir Path dir;

  private FetchResult fetch(
      ChunkClient client, ChunkServer server, String id, byte[] content, String name)
      throws Exception {
    Path target = dir.resolve(name);
    try (FileChannel out =
        FileChannel.open(
            target,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      FetchResult r =
          client.fetchBlocking(
              "127.0.0.1",
              server.port(),
              id,
              0,
              content.length,
              ByteSink.positional(out, 0),
              ObjectDigest.Algorithm.SHA256,
              null);
      assertArrayEquals(content, Files.readAllBytes(target));
      return r;
    }
  }

  /** A closed connection leaves the pool on its event loop, moments after it closed. */
  private static void awaitNoIdle(ChunkClient client, String peer) throws InterruptedException {
    for (int i = 0; i < 500 && !client.idleConnections(peer).isEmpty(); i++) {
      Thread.sleep(10);
    }
    assertEquals(List.of(), client.idleConnections(peer));
  }

  /**
   * The server counts a response's bytes when its write completes, which its event loop may learn
   * after the client has read them all: wait for the count, then check it.
   */
  private static void awaitServed(ChunkServer server, long expected) throws InterruptedException {
    for (int i = 0; i < 500 && server.bytesServed() < expected; i++) {
      Thread.sleep(10);
    }
    assertEquals(expected, server.bytesServed());
  }

  @Test
  void aSecondFetchFromThePeerGoesOverTheFirstOnesConnection() throws Exception {
    byte[] a = TestData.bytes(700_000, 1);
    byte[] b = TestData.bytes(300_000, 2);
    Path fa = TestData.file(dir, "a.bin", a);
    Path fb = TestData.file(dir, "b.bin", b);
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id ->
                    Optional.of(
                        id.equals("a")
                            ? new FileRange(fa, 0, a.length)
                            : new FileRange(fb, 0, b.length)),
                TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      String peer = "127.0.0.1:" + server.port();
      assertEquals(TestData.sha256(a), fetch(client, server, "a", a, "1").sha256Hex());
      List<Channel> kept = client.idleConnections(peer);
      assertEquals(1, kept.size());
      assertEquals(TestData.sha256(b), fetch(client, server, "b", b, "2").sha256Hex());
      assertSame(
          kept.get(0), client.idleConnections(peer).get(0), "the same connection, kept again");
      assertEquals(TestData.sha256(a), fetch(client, server, "a", a, "3").sha256Hex());
      awaitServed(server, a.length * 2L + b.length);
    }
  }

  @Test
  void aFailedFetchClosesItsConnectionInsteadOfKeepingIt() throws Exception {
    byte[] a = TestData.bytes(100_000, 3);
    Path fa = TestData.file(dir, "a.bin", a);
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id ->
                    id.equals("a") ? Optional.of(new FileRange(fa, 0, a.length)) : Optional.empty(),
                TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      String peer = "127.0.0.1:" + server.port();
      fetch(client, server, "a", a, "1");
      Channel first = client.idleConnections(peer).get(0);
      ChunkTransferException e =
          assertThrows(ChunkTransferException.class, () -> fetch(client, server, "gone", a, "2"));
      assertEquals(ChunkTransferException.Kind.NOT_FOUND, e.kind(), e.toString());
      first.closeFuture().await(5_000);
      assertTrue(!first.isActive(), "the failed fetch's connection is closed");
      awaitNoIdle(client, peer);
      fetch(client, server, "a", a, "3");
      assertNotSame(first, client.idleConnections(peer).get(0), "a new connection");
    }
  }

  @Test
  void aKeptConnectionThatBreaksBeforeTheAnswerIsReplacedWithoutFailingTheFetch() throws Exception {
    byte[] a = TestData.bytes(200_000, 4);
    Path fa = TestData.file(dir, "a.bin", a);
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id -> Optional.of(new FileRange(fa, 0, a.length)),
                TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      String peer = "127.0.0.1:" + server.port();
      fetch(client, server, "a", a, "1");
      Channel kept = client.idleConnections(peer).get(0);
      // The peer goes away exactly when the next request is sent on the kept connection.
      kept.pipeline()
          .addFirst(
              new ChannelOutboundHandlerAdapter() {
                @Override
                public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                  io.netty.util.ReferenceCountUtil.release(msg);
                  promise.setFailure(new java.io.IOException("connection reset by peer"));
                  ctx.close();
                }
              });
      assertEquals(TestData.sha256(a), fetch(client, server, "a", a, "2").sha256Hex());
      assertNotSame(kept, client.idleConnections(peer).get(0));
      awaitServed(server, 2L * a.length);
    }
  }

  @Test
  void keptConnectionsCloseAfterTheIdleTimeout() throws Exception {
    byte[] a = TestData.bytes(50_000, 5);
    Path fa = TestData.file(dir, "a.bin", a);
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id -> Optional.of(new FileRange(fa, 0, a.length)),
                TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY, Duration.ofMillis(300))) {
      String peer = "127.0.0.1:" + server.port();
      fetch(client, server, "a", a, "1");
      Channel kept = client.idleConnections(peer).get(0);
      kept.closeFuture().await(10_000);
      assertTrue(!kept.isActive());
      awaitNoIdle(client, peer);
      fetch(client, server, "a", a, "2");
    }
  }
}
