package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of the cluster handshake; sits in front of the request decoder until the peer has
 * proven it holds the cluster secret, then removes itself (handing on any bytes that came after the
 * proof).
 *
 * <p>Sends CHALLENGE as soon as the connection is up (inside TLS when TLS is on: the TLS handler
 * holds the write until its own handshake is done), reads PROOF, and answers ACCEPT or an {@link
 * Status#UNAUTHENTICATED} error frame before closing. Until then nothing reaches the request
 * handler, so a non-member learns nothing about the objects held here. A connection that has not
 * completed the handshake within the timeout is refused the same way.
 */
final class ServerHandshakeHandler extends ByteToMessageDecoder {

  private static final Logger log = LoggerFactory.getLogger(ServerHandshakeHandler.class);

  static final String REFUSED = "not a cluster member: authentication failed";

  /** At most one WARN line per this many ms for refused proofs, and one for refusals at a cap. */
  static final long WARN_EVERY_MS = 10_000;

  private static final RateLimitedWarning BAD_PROOF = new RateLimitedWarning(WARN_EVERY_MS);
  private static final RateLimitedWarning AT_CAP = new RateLimitedWarning(WARN_EVERY_MS);

  private final byte[] secret;
  private final Duration timeout;
  private final Unauthenticated.Slot slot;
  private byte[] serverNonce;
  private ScheduledFuture<?> timer;
  private boolean failed;

  ServerHandshakeHandler(byte[] secret, Duration timeout) {
    this(secret, timeout, null);
  }

  /**
   * @param slot this connection's hold on the unauthenticated-connection caps, given back once the
   *     peer authenticates or the connection ends; null when not capped
   */
  ServerHandshakeHandler(byte[] secret, Duration timeout, Unauthenticated.Slot slot) {
    this.secret = secret;
    this.timeout = timeout;
    this.slot = slot;
  }

  /** Logs (rate-limited) that a connection was closed on arrival at an unauthenticated cap. */
  static void refusedAtCap(java.net.SocketAddress remote) {
    long suppressed = AT_CAP.tryWarn();
    if (suppressed >= 0) {
      log.warn(
          "closed chunk connection from {} on arrival: too many unauthenticated connections"
              + " (at most {} in all, {} per address){}",
          remote,
          Unauthenticated.MAX_TOTAL,
          Unauthenticated.MAX_PER_ADDRESS,
          suppressed > 0 ? "; " + suppressed + " more since the last such line" : "");
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    serverNonce = Handshake.nonce();
    ByteBuf challenge = ctx.alloc().buffer(Protocol.CHALLENGE_BYTES);
    Handshake.writePrefix(challenge);
    challenge.writeBytes(serverNonce);
    ctx.writeAndFlush(challenge);
    timer =
        ctx.executor()
            .schedule(
                () ->
                    refuse(
                        ctx,
                        Status.UNAUTHENTICATED,
                        "not a cluster member: no handshake within " + timeout.toMillis() + " ms"),
                timeout.toMillis(),
                TimeUnit.MILLISECONDS);
    super.channelActive(ctx);
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    // Removed after the proof, or with the whole pipeline when the connection closes.
    cancelTimer();
    releaseSlot();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancelTimer();
    releaseSlot();
    super.channelInactive(ctx);
  }

  private void releaseSlot() {
    if (slot != null) {
      slot.release();
    }
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    int start = in.readerIndex();
    int available = in.readableBytes();
    if (available < 4) {
      return;
    }
    int magic = in.getInt(start);
    if (magic != Protocol.HANDSHAKE_MAGIC && magic != Protocol.MAGIC) {
      in.skipBytes(available);
      refuse(
          ctx,
          Status.UNAUTHENTICATED,
          String.format(
              "not a cluster member: expected a handshake frame, got bad magic 0x%08x", magic));
      return;
    }
    if (available < 5) {
      return;
    }
    // The version first, so a client of another release is told what is wrong.
    int version = in.getUnsignedByte(start + 4);
    if (version != Protocol.VERSION) {
      in.skipBytes(available);
      refuse(
          ctx,
          Status.UNSUPPORTED_VERSION,
          "unsupported protocol version " + version + ", this server speaks " + Protocol.VERSION);
      return;
    }
    if (magic == Protocol.MAGIC) {
      in.skipBytes(available);
      refuse(
          ctx,
          Status.UNAUTHENTICATED,
          "not a cluster member: a request arrived before the handshake");
      return;
    }
    if (available < Protocol.PROOF_BYTES) {
      return;
    }
    in.skipBytes(Protocol.FRAME_PREFIX_BYTES);
    byte[] clientNonce = Handshake.read(in, Protocol.NONCE_BYTES);
    byte[] clientProof = Handshake.read(in, Protocol.MAC_BYTES);
    byte[] expected = Handshake.proof(secret, Handshake.CLIENT_LABEL, serverNonce, clientNonce);
    if (!Handshake.matches(expected, clientProof)) {
      long suppressed = BAD_PROOF.tryWarn();
      if (suppressed >= 0) {
        log.warn(
            "refused chunk connection from {}: its proof does not match the cluster secret{}",
            ctx.channel().remoteAddress(),
            suppressed > 0 ? " (" + suppressed + " more refused since the last such line)" : "");
      } else {
        log.debug(
            "refused chunk connection from {}: its proof does not match the cluster secret",
            ctx.channel().remoteAddress());
      }
      in.skipBytes(in.readableBytes());
      refuse(ctx, Status.UNAUTHENTICATED, REFUSED);
      return;
    }
    cancelTimer();
    ByteBuf accept = ctx.alloc().buffer(Protocol.ACCEPT_BYTES);
    Handshake.writePrefix(accept);
    accept.writeBytes(Handshake.proof(secret, Handshake.SERVER_LABEL, serverNonce, clientNonce));
    ctx.writeAndFlush(accept);
    log.debug("chunk connection from {} authenticated", ctx.channel().remoteAddress());
    // Bytes after the proof (a pipelined request) go on to the request decoder.
    ctx.pipeline().remove(this);
  }

  @Override
  protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
      throws Exception {
    decode(ctx, in, out);
    if (!failed && !ctx.isRemoved() && in.isReadable()) {
      int partial = in.readableBytes();
      in.skipBytes(partial);
      refuse(
          ctx,
          Status.UNAUTHENTICATED,
          "not a cluster member: stream ended " + partial + " bytes into the handshake");
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (ctx.isRemoved()) {
      ctx.fireExceptionCaught(cause);
      return;
    }
    // Before authentication every failure ends the connection; a TLS one is the usual refusal
    // of a peer without a certificate from our CA, or one that does not speak TLS at all.
    failed = true;
    cancelTimer();
    Throwable tls =
        cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (tls instanceof SSLException) {
      log.info(
          "refused chunk connection from {}: TLS handshake failed: {}",
          ctx.channel().remoteAddress(),
          tls.getMessage());
    } else {
      log.debug(
          "chunk connection from {} failed before authentication: {}",
          ctx.channel().remoteAddress(),
          cause.toString());
    }
    ctx.close();
  }

  private void refuse(ChannelHandlerContext ctx, Status status, String message) {
    if (failed || ctx.isRemoved() || !ctx.channel().isActive()) {
      return;
    }
    failed = true;
    cancelTimer();
    log.debug("refusing chunk connection from {}: {}", ctx.channel().remoteAddress(), message);
    ByteBuf frame = ctx.alloc().buffer();
    ResponseHeaderEncoder.encodeTo(ResponseHeader.Failure.of(0, status, message), frame);
    ctx.writeAndFlush(frame).addListener(ChannelFutureListener.CLOSE);
  }

  private void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
