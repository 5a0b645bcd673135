package io.mooncake.dist.transfer;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chunk port admits cluster members only: a real server, real clients and raw sockets on
 * 127.0.0.1.
 */
@Timeout(60)
class ClusterAuthTest {
  /**
   * Short, so the silent-connection test does not wait 10 s; long enough that a client's handshake
   * on a loaded machine arrives in time (300 ms was not, with two other builds on the 2 cores).
   */
  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);

  private static final ChunkSecurity STRANGER =
      ChunkSecurity.of("some other cluster's secret, 32+ bytes long");

  @TempDir Path dir;

  private byte[] content;
  private ChunkServer server;

  @BeforeEach
  void start() throws Exception {
    content = TestData.bytes(200_000, 50);
    Path file = TestData.file(dir, "obj.bin", content);
    server =
        ChunkServer.start(
            "127.0.0.1",
            0,
            id ->
                id.equals("obj")
                    ? Optional.of(new FileRange(file, 0, content.length))
                    : Optional.empty(),
            TestData.SECURITY.withHandshakeTimeout(HANDSHAKE_TIMEOUT));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void aMemberWithTheClusterSecretFetchesTheObject() throws Exception {
    Path target = dir.resolve("copy");
    try (ChunkClient member = new ChunkClient(ChunkSecurity.of(TestData.SECRET));
        FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      FetchResult result =
          member.fetchBlocking("127.0.0.1", server.port(), "obj", 0, content.length, out, 0, null);

      assertEquals(TestData.sha256(content), result.sha256Hex());
    }
    assertArrayEquals(content, Files.readAllBytes(target));
  }

  @Test
  void aClientWithAnotherSecretIsRefusedAsNotAMemberAndGetsNoBytes() throws Exception {
    Path target = dir.resolve("copy");
    try (ChunkClient stranger = new ChunkClient(STRANGER);
        FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  stranger.fetchBlocking(
                      "127.0.0.1", server.port(), "obj", 0, content.length, out, 0, null));

      assertEquals(Kind.AUTHENTICATION, e.kind(), e.toString());
      assertTrue(
          e.getMessage().contains("not a cluster member: authentication failed"), e.getMessage());
      assertTrue(e.getMessage().contains("127.0.0.1:" + server.port()), e.getMessage());
    }
    assertEquals(0, Files.size(target));
    assertEquals(0, server.bytesServed());
  }

  @Test
  void aRawRequestWithoutTheHandshakeIsRefusedWithNothingAboutTheObject() throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      RawWire.readChallenge(in);

      socket.getOutputStream().write(RawWire.request(1, "obj", 0, 100));

      RawWire.Response refusal = RawWire.readResponse(in);
      assertEquals(0, refusal.requestId());
      assertEquals(6, refusal.status());
      assertEquals(
          "not a cluster member: a request arrived before the handshake", refusal.message());
      assertClosed(in);
    }
    assertEquals(0, server.bytesServed());
  }

  @Test
  void aRawProofWithAnotherSecretIsRefusedAndClosed() throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      byte[] serverNonce = RawWire.readChallenge(in);
      byte[] clientNonce = TestData.bytes(32, 51);
      byte[] wrong = "some other cluster's secret, 32+ bytes long".getBytes();

      socket
          .getOutputStream()
          .write(
              RawWire.concat(
                  RawWire.proofFrame(
                      clientNonce,
                      RawWire.mac(wrong, RawWire.CLIENT_LABEL, serverNonce, clientNonce)),
                  RawWire.request(2, "obj", 0, 100)));

      assertEquals(
          new RawWire.Response(0, 6, -1, "not a cluster member: authentication failed"),
          RawWire.readResponse(in));
      assertClosed(in);
    }
  }

  @Test
  void aSilentConnectionIsRefusedAndClosedAfterTheHandshakeTimeout() throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      RawWire.readChallenge(in);

      // Send nothing: the server gives up on its own (the timeout is 2 s here, 10 s by default).
      RawWire.Response refusal = RawWire.readResponse(in);

      assertEquals(6, refusal.status());
      assertTrue(
          refusal.message().contains("no handshake within " + HANDSHAKE_TIMEOUT.toMillis() + " ms"),
          refusal.message());
      assertClosed(in);
    }
  }

  @Test
  void anAuthenticatedConnectionIsNotCutByTheHandshakeTimeout() throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      DataInputStream in = new DataInputStream(socket.getInputStream());
      RawWire.clientHandshake(in, socket.getOutputStream(), TestData.secretBytes());
      // Stay idle past the handshake timeout: it must no longer apply once authenticated.
      Thread.sleep(2 * HANDSHAKE_TIMEOUT.toMillis());

      socket.getOutputStream().write(RawWire.request(3, "obj", 10, 1_000));

      assertEquals(new RawWire.Response(3, 0, 1_000, null), RawWire.readResponse(in));
      assertArrayEquals(java.util.Arrays.copyOfRange(content, 10, 1_010), in.readNBytes(1_000));
    }
  }

  @Test
  void aClientRefusedByOneServerStillFetchesFromAnother() throws Exception {
    // The refusal is per connection: the refused client's own state stays usable.
    try (ChunkClient stranger = new ChunkClient(STRANGER);
        ChunkServer strangers =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id ->
                    Optional.of(
                        new FileRange(TestData.file(dir, "s.bin", content), 0, content.length)),
                STRANGER);
        FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      assertThrows(
          ChunkTransferException.class,
          () -> stranger.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 10, out, 0, null));

      FetchResult ok =
          stranger.fetchBlocking(
              "127.0.0.1", strangers.port(), "obj", 0, content.length, out, 0, null);

      assertEquals(TestData.sha256(content), ok.sha256Hex());
    }
  }

  @Test
  void aSecretShorterThan32BytesIsRejected() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ChunkSecurity.of("short"));

    assertTrue(e.getMessage().contains("at least 32"), e.getMessage());
    assertTrue(!ChunkSecurity.of(TestData.SECRET).toString().contains(TestData.SECRET));
  }

  /** End of stream, or a reset when the server closed with our bytes unread: both mean closed. */
  private static void assertClosed(InputStream in) throws IOException {
    try {
      assertEquals(-1, in.read());
    } catch (SocketException reset) {
      // closed
    }
  }
}
