package io.mooncake.dist.transfer;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives one fetch on a connection of its own: once the handshake has authenticated the peer (or at
 * once, on a kept connection that did so for an earlier fetch), sends the request, checks the
 * header against what was asked, streams the payload into the {@link ChunkSink} and completes the
 * future exactly once. After a success the connection goes to {@code keep} for the next fetch from
 * that peer; after a failure it is closed. On a kept connection a failure before any byte of the
 * answer means the peer had closed it meanwhile: the fetch starts over elsewhere ({@code retry})
 * instead of failing.
 *
 * <p>Success is declared at the end of a read batch rather than the moment the last promised byte
 * arrives, so bytes the peer sent beyond its promise in the same burst are caught as a protocol
 * violation instead of being silently ignored. Disk writes happen on the I/O thread on purpose:
 * while the disk is busy the socket is not read, and TCP flow control slows the peer down.
 */
final class FetchHandler extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(FetchHandler.class);

  private final FetchSpec spec;
  private final ChunkSink sink;
  private final LongConsumer progress;
  private final CompletableFuture<FetchResult> result;
  private final Duration idleTimeout;
  private Channel channel;
  private boolean authenticated;
  private boolean headerSeen;
  private boolean payloadComplete;
  private boolean finished;
  private final java.util.function.Consumer<Channel> keep;

  /** Set on a kept connection: where the fetch starts over if the peer closed it meanwhile. */
  private final Runnable retry;

  FetchHandler(
      FetchSpec spec,
      ChunkSink sink,
      LongConsumer progress,
      CompletableFuture<FetchResult> result,
      Duration idleTimeout,
      java.util.function.Consumer<Channel> keep,
      Runnable retry) {
    this.keep = keep;
    this.retry = retry;
    this.spec = spec;
    this.sink = sink;
    this.progress = progress;
    this.result = result;
    this.idleTimeout = idleTimeout;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    if (retry != null) {
      // A kept connection: the peer proved its membership for an earlier fetch.
      authenticated = true;
      ResponseDecoder decoder = ctx.pipeline().get(ResponseDecoder.class);
      try {
        decoder.expectNext();
        // The idle time so far was the pool's, not this fetch's: the timeout starts now.
        ctx.pipeline()
            .replace(
                "read-timeout",
                "read-timeout",
                new io.netty.handler.timeout.ReadTimeoutHandler(
                    idleTimeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
      } catch (RuntimeException e) {
        fail(Kind.CONNECTION, "kept connection not reusable: " + e, e);
        return;
      }
      sendRequest(ctx);
    }
  }

  private void sendRequest(ChannelHandlerContext ctx) {
    ctx.writeAndFlush(spec.toRequest())
        .addListener(
            (ChannelFutureListener)
                f -> {
                  if (!f.isSuccess()) {
                    fail(Kind.CONNECTION, "cannot send request: " + f.cause(), f.cause());
                  }
                });
  }

  /** Called by the client when the connection could not be made at all. */
  void connectFailed(Throwable cause) {
    fail(Kind.CONNECTION, "cannot connect: " + cause.getMessage(), cause);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt == ClientHandshakeHandler.AUTHENTICATED) {
      // Only now: a peer that has not proven membership never learns what we ask for.
      authenticated = true;
      sendRequest(ctx);
      return;
    }
    if (evt instanceof SslHandshakeCompletionEvent tls && !tls.isSuccess()) {
      fail(Kind.AUTHENTICATION, "TLS handshake failed: " + tls.cause().getMessage(), tls.cause());
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (finished) {
        return;
      }
      switch (msg) {
        case ResponseHeader.Ok ok -> onOk(ok);
        case ResponseHeader.Failure failure -> onFailure(failure);
        case ByteBuf payload -> onPayload(payload);
        default -> fail(Kind.PROTOCOL, "unexpected message " + msg.getClass().getName(), null);
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (payloadComplete) {
      succeed(true);
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    if (payloadComplete) {
      succeed(false);
    } else if (headerSeen) {
      fail(
          Kind.SHORT_TRANSFER,
          "connection closed after " + sink.written() + " of " + spec.length() + " payload bytes",
          null);
    } else if (!authenticated) {
      fail(
          Kind.CONNECTION,
          "connection closed before the handshake completed (the peer died, or refused"
              + " us without a word: TLS on one side only does that)",
          null);
    } else {
      fail(Kind.CONNECTION, "connection closed before a response header arrived", null);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof ReadTimeoutException) {
      fail(
          Kind.TIMEOUT,
          "no bytes from peer for "
              + idleTimeout.toMillis()
              + " ms ("
              + (authenticated
                  ? "received " + sink.written() + " of " + spec.length() + " payload bytes)"
                  : "during the handshake)"),
          cause);
    } else if (cause instanceof HandshakeFailure handshake) {
      fail(handshake.kind(), handshake.getMessage(), cause);
    } else if (tlsFailure(cause) != null) {
      fail(Kind.AUTHENTICATION, "TLS failed: " + tlsFailure(cause).getMessage(), cause);
    } else if (cause instanceof DecoderException) {
      // Covers ProtocolViolationException: the peer broke the framing.
      fail(Kind.PROTOCOL, "malformed response: " + cause.getMessage(), cause);
    } else if (payloadComplete) {
      // Every promised byte is in place; a reset after that does not make them wrong.
      succeed(false);
    } else if (cause instanceof IOException && headerSeen) {
      fail(
          Kind.SHORT_TRANSFER,
          "connection lost after "
              + sink.written()
              + " of "
              + spec.length()
              + " payload bytes: "
              + cause,
          cause);
    } else if (cause instanceof IOException) {
      fail(Kind.CONNECTION, "connection lost before a response header arrived: " + cause, cause);
    } else {
      log.warn("unexpected error in {}", spec.describe(), cause);
      fail(Kind.PROTOCOL, "unexpected error: " + cause, cause);
    }
  }

  /** The TLS error behind {@code cause}, if it is one (a refused certificate, a plaintext peer). */
  private static SSLException tlsFailure(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof SSLException ssl) {
        return ssl;
      }
    }
    return null;
  }

  private void onOk(ResponseHeader.Ok ok) {
    if (ok.requestId() != spec.requestId()) {
      fail(
          Kind.PROTOCOL,
          "response answers request " + ok.requestId() + ", expected " + spec.requestId(),
          null);
    } else if (ok.length() != spec.length()) {
      fail(
          Kind.PROTOCOL,
          "peer announced " + ok.length() + " payload bytes, requested " + spec.length(),
          null);
    } else {
      headerSeen = true;
      payloadComplete = ok.length() == 0;
    }
  }

  private void onFailure(ResponseHeader.Failure failure) {
    // Id 0 means the server could not parse our request far enough to learn its id.
    if (failure.requestId() != spec.requestId() && failure.requestId() != 0) {
      fail(
          Kind.PROTOCOL,
          "error response answers request "
              + failure.requestId()
              + ", expected "
              + spec.requestId()
              + ": "
              + failure.message(),
          null);
      return;
    }
    fail(
        failure.status().failureKind(),
        "peer answered " + failure.status() + ": " + failure.message(),
        null);
  }

  private void onPayload(ByteBuf payload) {
    long total;
    try {
      total = sink.write(payload);
    } catch (IOException e) {
      fail(
          Kind.LOCAL_IO,
          "cannot write to local target after "
              + sink.written()
              + " of "
              + spec.length()
              + " bytes: "
              + e,
          e);
      return;
    }
    payloadComplete = total == spec.length();
    if (progress != null) {
      try {
        progress.accept(total);
      } catch (RuntimeException e) {
        // Progress is advisory; a broken listener must not corrupt or abort the transfer.
        log.warn("progress callback of {} failed", spec.describe(), e);
      }
    }
  }

  /**
   * @param reusable whether the connection is fit for another fetch (it ended cleanly, not in an
   *     error)
   */
  private void succeed(boolean reusable) {
    if (finished) {
      return;
    }
    try {
      sink.finish();
    } catch (IOException e) {
      fail(Kind.LOCAL_IO, "cannot write the last bytes to the local target: " + e, e);
      return;
    }
    finished = true;
    if (reusable && channel.isActive()) {
      keep.accept(channel);
    } else {
      channel.close();
    }
    result.complete(new FetchResult(sink.written(), sink.digest()));
  }

  private void fail(Kind kind, String detail, Throwable cause) {
    if (finished) {
      return;
    }
    finished = true;
    if (retry != null && kind == Kind.CONNECTION && !headerSeen) {
      // The kept connection was closed by the peer (idle, restarted) before it answered:
      // nothing was written, so the same fetch goes out again on a new connection.
      log.debug("{}: kept connection unusable ({}); reconnecting", spec.describe(), detail);
      if (channel != null) {
        channel.close();
      }
      retry.run();
      return;
    }
    sink.abort();
    if (channel != null) {
      channel.close();
    }
    result.completeExceptionally(
        new ChunkTransferException(kind, spec.describe() + ": " + detail, cause));
  }
}
