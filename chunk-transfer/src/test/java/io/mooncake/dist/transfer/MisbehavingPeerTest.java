package io.mooncake.dist.transfer;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The client against raw-socket fake servers that break the protocol in every way that matters. */
@Timeout(60)
class MisbehavingPeerTest {

  private static final String OBJECT = "models/test/shard-0001";

  @TempDir Path dir;

  private ChunkClient client;
  private FileChannel target;

  @BeforeEach
  void open() throws Exception {
    client = new ChunkClient(TestData.SECURITY);
    target = FileChannel.open(dir.resolve("target"), CREATE, WRITE);
  }

  @AfterEach
  void close() throws Exception {
    target.close();
    client.close();
  }

  @Test
  void aPeerThatDiesMidChunkAfterTheOkHeaderCausesShortTransfer() throws Exception {
    CountDownLatch bytesArrived = new CountDownLatch(1);
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId(), request.length()),
                      new byte[64 * 1024]));
              out.flush();
              bytesArrived.await();
              // Abortive close: the peer's process died, the kernel answers with a reset.
              socket.setSoLinger(true, 0);
              socket.close();
            })) {
      LongConsumer progress = n -> bytesArrived.countDown();

      ChunkTransferException e = assertFails(peer, 0, 1 << 20, progress);

      assertEquals(Kind.SHORT_TRANSFER, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("of 1048576"), e.getMessage());
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatSendsFewerBytesThanPromisedAndClosesCausesShortTransfer() throws Exception {
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId(), request.length()), new byte[999]));
              out.flush();
            })) {
      ChunkTransferException e = assertFails(peer, 0, 1_000, null);

      assertEquals(Kind.SHORT_TRANSFER, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("999 of 1000"), e.getMessage());
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatSendsWrongBytesCompletesButTheDigestGivesItAway() throws Exception {
    byte[] expected = TestData.bytes(8_192, 30);
    byte[] corrupted = expected.clone();
    corrupted[4_000] ^= 0x01;
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId(), request.length()), corrupted));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      FetchResult result =
          client.fetchBlocking(
              "127.0.0.1", peer.port(), OBJECT, 0, expected.length, target, 0, null);

      // The client reports what it received; rejecting it is the caller's call, made on this
      // digest.
      assertNotEquals(TestData.sha256(expected), result.sha256Hex());
      assertEquals(TestData.sha256(corrupted), result.sha256Hex());
      assertEquals(expected.length, result.bytes());
      assertArrayEquals(corrupted, Files.readAllBytes(dir.resolve("target")));
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatSendsMoreThanItPromisedCausesProtocol() throws Exception {
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              // One write, so the surplus arrives together with the payload it follows.
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId(), request.length()),
                      new byte[(int) request.length()],
                      "SURPLUS!".getBytes(StandardCharsets.US_ASCII)));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 512, null);

      assertEquals(Kind.PROTOCOL, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("8 bytes beyond"), e.getMessage());
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatAnnouncesADifferentLengthThanRequestedCausesProtocol() throws Exception {
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId(), request.length() * 2),
                      new byte[(int) request.length() * 2]));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 100, null);

      assertEquals(Kind.PROTOCOL, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("announced 200"), e.getMessage());
    }
  }

  @Test
  void aPeerThatAnswersAnotherRequestIdCausesProtocol() throws Exception {
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.concat(
                      RawWire.okHeader(request.requestId() + 1, request.length()), new byte[10]));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      assertEquals(Kind.PROTOCOL, assertFails(peer, 0, 10, null).kind());
    }
  }

  @Test
  void aPeerSpeakingAnotherProtocolCausesProtocol() throws Exception {
    try (FakePeer peer =
        FakePeer.raw(
            (socket, in, out) -> {
              out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.PROTOCOL, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
    }
  }

  @Test
  void aPeerErrorFrameMapsToItsKindAndCarriesThePeersMessage() throws Exception {
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(
                  RawWire.errorFrame(
                      request.requestId(), 3, "cannot read object file: /data/x: EIO"));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.SOURCE_ERROR, e.kind());
      assertTrue(e.getMessage().contains("cannot read object file: /data/x: EIO"), e.getMessage());
    }
  }

  @Test
  void aPeerThatNeverAnswersCausesTimeoutAfterTheIdleTimeout() throws Exception {
    client.close();
    client = new ChunkClient(TestData.SECURITY, Duration.ofMillis(200));
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.readRequest(in);
              // Silent: blocks until the client gives up and closes.
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("200 ms"), e.getMessage());
    }
  }

  @Test
  void aPeerThatClosesWithoutAnsweringCausesConnection() throws Exception {
    try (FakePeer peer = new FakePeer((socket, in, out) -> RawWire.readRequest(in))) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.CONNECTION, e.kind(), e.toString());
    }
  }

  @Test
  void cancellingAFetchClosesItsConnection() throws Exception {
    CountDownLatch headerSent = new CountDownLatch(1);
    try (FakePeer peer =
        new FakePeer(
            (socket, in, out) -> {
              RawWire.Request request = RawWire.readRequest(in);
              out.write(RawWire.okHeader(request.requestId(), request.length()));
              out.flush();
              headerSent.countDown();
              FakePeer.awaitClientClose(in);
            })) {
      CompletableFuture<FetchResult> fetch =
          client.fetch("127.0.0.1", peer.port(), OBJECT, 0, 1_000, target, 0, null);
      headerSent.await();

      assertTrue(fetch.cancel(true));

      // The script only ends once the client's side of the connection is gone.
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatCannotProveTheSecretIsNeverSentTheRequest() throws Exception {
    try (FakePeer peer =
        FakePeer.raw(
            (socket, in, out) -> {
              byte[] serverNonce = TestData.bytes(32, 41);
              out.write(RawWire.challengeFrame(serverNonce));
              out.flush();
              in.readNBytes(5 + 32 + 32);
              // A non-member cannot compute the proof; it answers with a guess.
              out.write(RawWire.acceptFrame(new byte[32]));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.AUTHENTICATION, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("peer is not a cluster member"), e.getMessage());
      // awaitClientClose fails the script if the client sent anything after its proof.
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatRefusesOurProofCausesAuthenticationWithItsMessage() throws Exception {
    try (FakePeer peer =
        FakePeer.raw(
            (socket, in, out) -> {
              out.write(RawWire.challengeFrame(TestData.bytes(32, 42)));
              out.flush();
              in.readNBytes(5 + 32 + 32);
              out.write(RawWire.errorFrame(0, 6, "not a cluster member: authentication failed"));
              out.flush();
              FakePeer.awaitClientClose(in);
            })) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.AUTHENTICATION, e.kind(), e.toString());
      assertTrue(
          e.getMessage().contains("not a cluster member: authentication failed"), e.getMessage());
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aPeerThatNeverSendsTheChallengeCausesTimeoutDuringTheHandshake() throws Exception {
    client.close();
    client = new ChunkClient(TestData.SECURITY, Duration.ofMillis(200));
    try (FakePeer peer = FakePeer.raw((socket, in, out) -> FakePeer.awaitClientClose(in))) {
      ChunkTransferException e = assertFails(peer, 0, 10, null);

      assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("during the handshake"), e.getMessage());
      assertNull(peer.awaitScriptEnd());
    }
  }

  @Test
  void aRefusedConnectionCausesConnection() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }

    ChunkTransferException e =
        assertThrows(
            ChunkTransferException.class,
            () -> client.fetchBlocking("127.0.0.1", port, OBJECT, 0, 10, target, 0, null));

    assertEquals(Kind.CONNECTION, e.kind(), e.toString());
    assertTrue(e.getMessage().contains(OBJECT), e.getMessage());
    assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
  }

  private ChunkTransferException assertFails(
      FakePeer peer, long offset, long length, LongConsumer progress) {
    ChunkTransferException e =
        assertThrows(
            ChunkTransferException.class,
            () ->
                client.fetchBlocking(
                    "127.0.0.1", peer.port(), OBJECT, offset, length, target, 0, progress));
    assertTrue(e.getMessage().contains(OBJECT), "message names the object: " + e.getMessage());
    assertTrue(
        e.getMessage().contains("127.0.0.1:" + peer.port()),
        "message names the peer: " + e.getMessage());
    return e;
  }
}
