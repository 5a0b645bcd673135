package io.mooncake.dist.transfer;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The client side of the cluster handshake: answers the server's CHALLENGE with a PROOF, checks the
 * server's ACCEPT, then fires {@link #AUTHENTICATED} (on which the fetch sends its request) and
 * removes itself. The request, and with it the object id, is only sent to a peer that proved it
 * holds the cluster secret.
 *
 * <p>Failures are thrown as {@link HandshakeFailure}: {@link Kind#AUTHENTICATION} when either side
 * is not a member, {@link Kind#PROTOCOL} when the peer speaks something else.
 */
final class ClientHandshakeHandler extends ByteToMessageDecoder {

  /** User event fired once the server has proven membership; the fetch may send its request. */
  static final Object AUTHENTICATED =
      new Object() {
        @Override
        public String toString() {
          return "AUTHENTICATED";
        }
      };

  private enum State {
    CHALLENGE,
    ACCEPT,
    FAILED
  }

  private final byte[] secret;
  private final Duration timeout;
  private ScheduledFuture<?> timer;
  private State state = State.CHALLENGE;
  private byte[] serverNonce;
  private byte[] clientNonce;

  ClientHandshakeHandler(byte[] secret, Duration timeout) {
    this.secret = secret;
    this.timeout = timeout;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    // Covers TLS too: a TLS client facing a plaintext server (or the reverse) waits on both sides.
    timer =
        ctx.executor()
            .schedule(
                () -> {
                  if (state != State.FAILED && !ctx.isRemoved()) {
                    state = State.FAILED;
                    ctx.fireExceptionCaught(
                        new HandshakeFailure(
                            Kind.TIMEOUT,
                            "no handshake with the peer within "
                                + timeout.toMillis()
                                + " ms (TLS on one side only looks like this)"));
                  }
                },
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
    super.channelActive(ctx);
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    cancelTimer();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancelTimer();
    super.channelInactive(ctx);
  }

  private void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (state == State.FAILED) {
      in.skipBytes(in.readableBytes());
      return;
    }
    int start = in.readerIndex();
    int available = in.readableBytes();
    if (available < Protocol.FRAME_PREFIX_BYTES) {
      if (available >= 4) {
        checkMagic(in.getInt(start));
      }
      return;
    }
    int magic = in.getInt(start);
    checkMagic(magic);
    int version = in.getUnsignedByte(start + 4);
    if (version != Protocol.VERSION) {
      throw fail(
          in,
          Kind.PROTOCOL,
          "peer speaks chunk protocol version "
              + version
              + ", this node "
              + Protocol.VERSION
              + " (a mooncake_client of another release?)");
    }
    if (magic == Protocol.MAGIC) {
      readRefusal(in);
      return;
    }
    if (state == State.CHALLENGE) {
      if (available < Protocol.CHALLENGE_BYTES) {
        return;
      }
      in.skipBytes(Protocol.FRAME_PREFIX_BYTES);
      serverNonce = Handshake.read(in, Protocol.NONCE_BYTES);
      clientNonce = Handshake.nonce();
      ByteBuf proof = ctx.alloc().buffer(Protocol.PROOF_BYTES);
      Handshake.writePrefix(proof);
      proof.writeBytes(clientNonce);
      proof.writeBytes(Handshake.proof(secret, Handshake.CLIENT_LABEL, serverNonce, clientNonce));
      ctx.writeAndFlush(proof);
      state = State.ACCEPT;
      return;
    }
    if (available < Protocol.ACCEPT_BYTES) {
      return;
    }
    in.skipBytes(Protocol.FRAME_PREFIX_BYTES);
    byte[] serverProof = Handshake.read(in, Protocol.MAC_BYTES);
    if (!Handshake.matches(
        Handshake.proof(secret, Handshake.SERVER_LABEL, serverNonce, clientNonce), serverProof)) {
      throw fail(
          in,
          Kind.AUTHENTICATION,
          "peer is not a cluster member: its handshake proof does not match our cluster secret");
    }
    cancelTimer();
    ctx.fireUserEventTriggered(AUTHENTICATED);
    ctx.pipeline().remove(this);
  }

  private void checkMagic(int magic) {
    if (magic != Protocol.HANDSHAKE_MAGIC && magic != Protocol.MAGIC) {
      state = State.FAILED;
      throw new HandshakeFailure(
          Kind.PROTOCOL,
          String.format("peer did not start a chunk handshake: bad magic 0x%08x", magic));
    }
  }

  /** An error frame instead of a handshake frame: the server refused us. */
  private void readRefusal(ByteBuf in) {
    int start = in.readerIndex();
    if (in.readableBytes() < Protocol.ERROR_HEADER_FIXED_BYTES) {
      return;
    }
    Status status = Status.fromCode(in.getUnsignedByte(start + 9));
    int messageLength = in.getUnsignedShort(start + Protocol.RESPONSE_PREFIX_BYTES);
    if (status == null || status == Status.OK || messageLength > Protocol.MAX_ERROR_MESSAGE_BYTES) {
      throw fail(
          in,
          Kind.PROTOCOL,
          "peer answered the handshake with a response frame (status "
              + in.getUnsignedByte(start + 9)
              + ")");
    }
    if (in.readableBytes() < Protocol.ERROR_HEADER_FIXED_BYTES + messageLength) {
      return;
    }
    String message =
        in.toString(
            start + Protocol.ERROR_HEADER_FIXED_BYTES, messageLength, StandardCharsets.UTF_8);
    throw fail(in, status.failureKind(), "peer refused the handshake: " + status + ": " + message);
  }

  private HandshakeFailure fail(ByteBuf in, Kind kind, String message) {
    state = State.FAILED;
    in.skipBytes(in.readableBytes());
    return new HandshakeFailure(kind, message);
  }
}
