package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Both sides of the handshake on {@link EmbeddedChannel}s, against frames written by hand from
 * PROTOCOL.md.
 */
class HandshakeCodecTest {

  private static final byte[] SECRET = TestData.secretBytes();
  private static final byte[] OTHER_SECRET =
      "another cluster's secret, also 32 bytes long".getBytes();

  private final List<EmbeddedChannel> channels = new ArrayList<>();

  @AfterEach
  void close() {
    channels.forEach(EmbeddedChannel::finishAndReleaseAll);
  }

  // --- server side ---------------------------------------------------------------------------

  @Test
  void theServerChallengesAsSoonAsTheConnectionIsUp() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));

    byte[] challenge = outbound(server);

    assertEquals(5 + 32, challenge.length);
    assertNotNull(RawWire.readChallenge(in(challenge)));
  }

  @Test
  void aCorrectProofIsAcceptedWithTheServersOwnProofAndLaterBytesReachTheRequestDecoder()
      throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    byte[] serverNonce = RawWire.readChallenge(in(outbound(server)));
    byte[] clientNonce = TestData.bytes(32, 1);
    byte[] request = RawWire.request(3, "obj", 0, 10);

    // The proof and a first request in one read, as a pipelining client would send them.
    server.writeInbound(
        Unpooled.wrappedBuffer(
            RawWire.concat(
                RawWire.proofFrame(
                    clientNonce,
                    RawWire.mac(SECRET, RawWire.CLIENT_LABEL, serverNonce, clientNonce)),
                request)));

    assertArrayEquals(
        RawWire.acceptFrame(RawWire.mac(SECRET, RawWire.SERVER_LABEL, serverNonce, clientNonce)),
        outbound(server));
    assertNull(
        server.pipeline().get(ServerHandshakeHandler.class),
        "the handshake handler removed itself");
    assertEquals(new ChunkRequest(3, "obj", 0, 10), server.readInbound());
    assertTrue(server.isActive());
  }

  @Test
  void aProofMadeWithAnotherSecretIsRefusedWithAnErrorFrameAndTheConnectionClosed()
      throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    byte[] serverNonce = RawWire.readChallenge(in(outbound(server)));
    byte[] clientNonce = TestData.bytes(32, 2);

    server.writeInbound(
        Unpooled.wrappedBuffer(
            RawWire.concat(
                RawWire.proofFrame(
                    clientNonce,
                    RawWire.mac(OTHER_SECRET, RawWire.CLIENT_LABEL, serverNonce, clientNonce)),
                RawWire.request(4, "obj", 0, 10))));

    RawWire.Response refusal = RawWire.readResponse(in(outbound(server)));
    assertEquals(
        new RawWire.Response(0, 6, -1, "not a cluster member: authentication failed"), refusal);
    assertFalse(server.isActive());
    assertNull(server.readInbound(), "nothing reaches the request handler");
  }

  @Test
  void theServersOwnProofReplayedAsAClientProofIsRefused() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    byte[] serverNonce = RawWire.readChallenge(in(outbound(server)));
    byte[] clientNonce = TestData.bytes(32, 3);

    // Reflection: the label differs, so the server's kind of proof does not pass as a client's.
    server.writeInbound(
        Unpooled.wrappedBuffer(
            RawWire.proofFrame(
                clientNonce, RawWire.mac(SECRET, RawWire.SERVER_LABEL, serverNonce, clientNonce))));

    assertEquals(6, RawWire.readResponse(in(outbound(server))).status());
    assertFalse(server.isActive());
  }

  @Test
  void aRequestBeforeTheHandshakeIsRefusedAsSoonAsItsVersionArrives() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    outbound(server);

    server.writeInbound(Unpooled.wrappedBuffer(RawWire.request(5, "obj", 0, 10), 0, 5));

    RawWire.Response refusal = RawWire.readResponse(in(outbound(server)));
    assertEquals(6, refusal.status());
    assertTrue(refusal.message().startsWith("not a cluster member"), refusal.message());
    assertFalse(server.isActive());
    assertNull(server.readInbound());
  }

  @Test
  void aVersionOneClientIsToldTheVersionIsUnsupported() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    outbound(server);
    byte[] oldRequest = RawWire.request(5, "obj", 0, 10);
    oldRequest[4] = 1;

    server.writeInbound(Unpooled.wrappedBuffer(oldRequest));

    RawWire.Response refusal = RawWire.readResponse(in(outbound(server)));
    assertEquals(5, refusal.status());
    assertTrue(refusal.message().contains("version 1"), refusal.message());
  }

  @Test
  void aPeerSilentForTheHandshakeTimeoutIsRefusedAndClosed() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    outbound(server);

    server.advanceTimeBy(9, TimeUnit.SECONDS);
    server.runScheduledPendingTasks();
    assertTrue(server.isActive());
    server.advanceTimeBy(2, TimeUnit.SECONDS);
    server.runScheduledPendingTasks();

    RawWire.Response refusal = RawWire.readResponse(in(outbound(server)));
    assertEquals(6, refusal.status());
    assertTrue(refusal.message().contains("no handshake within 10000 ms"), refusal.message());
    assertFalse(server.isActive());
  }

  @Test
  void aTruncatedProofAtEndOfStreamIsRefused() throws IOException {
    EmbeddedChannel server = server(Duration.ofSeconds(10));
    outbound(server);
    server.writeInbound(
        Unpooled.wrappedBuffer(RawWire.proofFrame(new byte[32], new byte[32]), 0, 40));

    server
        .pipeline()
        .fireUserEventTriggered(io.netty.channel.socket.ChannelInputShutdownEvent.INSTANCE);

    RawWire.Response refusal = RawWire.readResponse(in(outbound(server)));
    assertEquals(6, refusal.status());
    assertTrue(refusal.message().contains("40 bytes into the handshake"), refusal.message());
  }

  // --- client side ---------------------------------------------------------------------------

  @Test
  void theClientAnswersTheChallengeWithAProofOverBothNonces() throws IOException {
    Events events = new Events();
    EmbeddedChannel client = client(events);
    byte[] serverNonce = TestData.bytes(32, 10);

    client.writeInbound(Unpooled.wrappedBuffer(RawWire.challengeFrame(serverNonce)));

    DataInputStream proof = in(outbound(client));
    assertEquals(RawWire.HANDSHAKE_MAGIC, proof.readInt());
    assertEquals(2, proof.readUnsignedByte());
    byte[] clientNonce = proof.readNBytes(32);
    assertArrayEquals(
        RawWire.mac(SECRET, RawWire.CLIENT_LABEL, serverNonce, clientNonce), proof.readNBytes(32));
    assertEquals(-1, proof.read());
    assertTrue(events.seen.isEmpty(), "not authenticated before the server's proof");

    client.writeInbound(
        Unpooled.wrappedBuffer(
            RawWire.acceptFrame(
                RawWire.mac(SECRET, RawWire.SERVER_LABEL, serverNonce, clientNonce))));

    assertEquals(List.of(ClientHandshakeHandler.AUTHENTICATED), events.seen);
    assertNull(client.pipeline().get(ClientHandshakeHandler.class));
  }

  @Test
  void aChallengeArrivingOneByteAtATimeIsAnswered() {
    EmbeddedChannel client = client(new Events());
    ByteBuf challenge = Unpooled.wrappedBuffer(RawWire.challengeFrame(TestData.bytes(32, 11)));

    while (challenge.isReadable()) {
      client.writeInbound(challenge.readRetainedSlice(1));
    }
    challenge.release();

    assertEquals(5 + 32 + 32, outbound(client).length);
  }

  @Test
  void aServerProofMadeWithAnotherSecretFailsWithAuthentication() throws IOException {
    Events events = new Events();
    EmbeddedChannel client = client(events);
    byte[] serverNonce = TestData.bytes(32, 12);
    client.writeInbound(Unpooled.wrappedBuffer(RawWire.challengeFrame(serverNonce)));
    DataInputStream proof = in(outbound(client));
    proof.skipNBytes(5);
    byte[] clientNonce = proof.readNBytes(32);

    HandshakeFailure e =
        assertThrows(
            HandshakeFailure.class,
            () ->
                client.writeInbound(
                    Unpooled.wrappedBuffer(
                        RawWire.acceptFrame(
                            RawWire.mac(
                                OTHER_SECRET, RawWire.SERVER_LABEL, serverNonce, clientNonce)))));

    assertEquals(Kind.AUTHENTICATION, e.kind());
    assertTrue(e.getMessage().contains("not a cluster member"), e.getMessage());
    assertTrue(events.seen.isEmpty());
  }

  @Test
  void aRefusalFrameFailsWithAuthenticationAndThePeersMessage() {
    EmbeddedChannel client = client(new Events());
    client.writeInbound(Unpooled.wrappedBuffer(RawWire.challengeFrame(TestData.bytes(32, 13))));
    outbound(client);

    HandshakeFailure e =
        assertThrows(
            HandshakeFailure.class,
            () ->
                client.writeInbound(
                    Unpooled.wrappedBuffer(
                        RawWire.errorFrame(0, 6, "not a cluster member: authentication failed"))));

    assertEquals(Kind.AUTHENTICATION, e.kind());
    assertTrue(
        e.getMessage().contains("not a cluster member: authentication failed"), e.getMessage());
  }

  @Test
  void aPeerThatDoesNotStartWithAChallengeIsAProtocolFailure() {
    EmbeddedChannel client = client(new Events());

    HandshakeFailure e =
        assertThrows(
            HandshakeFailure.class,
            () -> client.writeInbound(Unpooled.wrappedBuffer("SSH-2.0-OpenSSH".getBytes())));

    assertEquals(Kind.PROTOCOL, e.kind());
    assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
    assertEquals(0, outbound(client).length, "no proof for a stranger");
  }

  @Test
  void aClientWhoseServerStaysSilentForTheHandshakeTimeoutFailsWithTimeout() {
    EmbeddedChannel client = client(new Events());
    List<Throwable> failures = new ArrayList<>();
    client
        .pipeline()
        .addLast(
            new ChannelInboundHandlerAdapter() {
              @Override
              public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                failures.add(cause);
              }
            });

    client.advanceTimeBy(11, TimeUnit.SECONDS);
    client.runScheduledPendingTasks();

    assertEquals(1, failures.size());
    HandshakeFailure e = (HandshakeFailure) failures.get(0);
    assertEquals(Kind.TIMEOUT, e.kind());
    assertTrue(e.getMessage().contains("within 10000 ms"), e.getMessage());
  }

  private EmbeddedChannel server(Duration timeout) {
    EmbeddedChannel ch =
        new EmbeddedChannel(new ServerHandshakeHandler(SECRET, timeout), new RequestDecoder());
    channels.add(ch);
    return ch;
  }

  private EmbeddedChannel client(Events events) {
    EmbeddedChannel ch =
        new EmbeddedChannel(new ClientHandshakeHandler(SECRET, Duration.ofSeconds(10)), events);
    channels.add(ch);
    return ch;
  }

  /** Everything written so far, as one array. */
  private static byte[] outbound(EmbeddedChannel ch) {
    List<byte[]> parts = new ArrayList<>();
    for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
      parts.add(ByteBufUtil.getBytes(b));
      b.release();
    }
    return RawWire.concat(parts.toArray(byte[][]::new));
  }

  private static DataInputStream in(byte[] bytes) {
    return new DataInputStream(new ByteArrayInputStream(bytes));
  }

  /** Records the user events that pass the handshake handler. */
  private static final class Events extends ChannelInboundHandlerAdapter {
    final List<Object> seen = new ArrayList<>();

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      seen.add(evt);
    }
  }
}
