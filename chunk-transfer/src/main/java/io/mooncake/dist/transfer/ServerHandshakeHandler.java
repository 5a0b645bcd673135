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

  private final byte[] secret;
  private final Duration timeout;
  private byte[] serverNonce;
  private ScheduledFuture<?> timer;
  private boolean failed;

  ServerHandshakeHandler(byte[] secret, Duration timeout) {
    this.secret = secret;
    this.timeout = timeout;
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
    cancelTimer();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancelTimer();
    super.channelInactive(ctx);
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
      log.warn(
          "refused chunk connection from {}: its proof does not match the cluster secret",
          ctx.channel().remoteAddress());
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
