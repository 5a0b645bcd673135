package io.mooncake.dist.transfer;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelProgressiveFuture;
import io.netty.channel.ChannelProgressiveFutureListener;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the requests of one connection, strictly one at a time and in order. Sits behind the
 * handshake, so it only ever sees requests of an authenticated peer.
 *
 * <p>All state lives on the channel's event loop; only the lookup and file open, which may block,
 * run on the {@code blocking} executor, so a slow {@link ObjectLocator} never stalls other
 * connections. Backpressure: while a request is in flight the channel stops reading, so a client
 * cannot queue up work faster than the socket drains; the next request is only taken once the
 * previous payload is fully handed to the kernel and the channel is writable again. Requests that
 * arrived in the same read are queued and served afterwards.
 */
final class ChunkRequestHandler extends ChannelInboundHandlerAdapter {

  private static final Logger log = LoggerFactory.getLogger(ChunkRequestHandler.class);

  /** Queued when the peer half-closed: answer what came before, then close. */
  private static final Object END_OF_INPUT = new Object();

  private final SourceResolver resolver;
  private final Executor blocking;
  private final LongAdder bytesServed;

  /** TLS on: payloads are read and encrypted in chunks instead of sent with sendfile. */
  /**
   * Send payloads as file chunks through user space (TLS, or an upload limit) instead of sendfile.
   */
  private final boolean chunked;

  private final ArrayDeque<Object> queue = new ArrayDeque<>();
  private boolean busy;
  private boolean closing;

  /**
   * The stream of an arriving object being sent, if any (its file is closed with the connection).
   */
  private Streamer streaming;

  ChunkRequestHandler(
      SourceResolver resolver, Executor blocking, LongAdder bytesServed, boolean chunked) {
    this.chunked = chunked;
    this.resolver = resolver;
    this.blocking = blocking;
    this.bytesServed = bytesServed;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ChunkRequest request) {
      enqueue(ctx, request);
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ProtocolViolationException violation = violation(cause);
    if (violation != null) {
      log.debug(
          "protocol violation from {}: {}", ctx.channel().remoteAddress(), violation.getMessage());
      enqueue(ctx, violation);
    } else if (cause instanceof IOException) {
      log.debug("connection to {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
      closeNow(ctx);
    } else {
      log.warn("unexpected error on connection to {}", ctx.channel().remoteAddress(), cause);
      closeNow(ctx);
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof IdleStateEvent) {
      // Idle counts payload progress too, so this fires only for a silent or stalled peer.
      log.debug("closing idle or stalled connection to {}", ctx.channel().remoteAddress());
      closeNow(ctx);
    } else if (evt == ChannelInputShutdownEvent.INSTANCE) {
      enqueue(ctx, END_OF_INPUT);
    }
    ReferenceCountUtil.release(evt);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    drain(ctx);
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    closing = true;
    queue.clear();
    if (streaming != null) {
      streaming.end();
    }
    ctx.fireChannelInactive();
  }

  private void enqueue(ChannelHandlerContext ctx, Object item) {
    if (closing) {
      return;
    }
    queue.add(item);
    ctx.channel().config().setAutoRead(false);
    drain(ctx);
  }

  private void drain(ChannelHandlerContext ctx) {
    while (!busy && !closing && ctx.channel().isWritable() && !queue.isEmpty()) {
      process(ctx, queue.poll());
    }
    if (!busy && !closing && queue.isEmpty() && ctx.channel().isActive()) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  private void process(ChannelHandlerContext ctx, Object item) {
    if (item == END_OF_INPUT) {
      closeNow(ctx);
    } else if (item instanceof ProtocolViolationException violation) {
      closing = true;
      ResponseHeader.Failure failure =
          ResponseHeader.Failure.of(
              violation.requestId(), violation.status(), violation.getMessage());
      ctx.writeAndFlush(failure).addListener(ChannelFutureListener.CLOSE);
    } else {
      serve(ctx, (ChunkRequest) item);
    }
  }

  private void serve(ChannelHandlerContext ctx, ChunkRequest request) {
    busy = true;
    log.debug(
        "request {} from {}: object {} offset {} length {}",
        request.requestId(),
        ctx.channel().remoteAddress(),
        request.objectId(),
        request.offset(),
        request.length());
    try {
      blocking.execute(
          () -> {
            SourceResolver.Outcome outcome = resolver.resolve(request);
            try {
              ctx.executor().execute(() -> respond(ctx, request, outcome));
            } catch (RejectedExecutionException e) {
              // The server is shutting down and the connection with it.
              SourceResolver.discard(outcome);
            }
          });
    } catch (RejectedExecutionException e) {
      busy = false;
      closeNow(ctx);
    }
  }

  private void respond(
      ChannelHandlerContext ctx, ChunkRequest request, SourceResolver.Outcome outcome) {
    if (closing) {
      busy = false;
      SourceResolver.discard(outcome);
      return;
    }
    boolean sendsBytes =
        outcome instanceof SourceResolver.Stream
            || (outcome instanceof SourceResolver.Send send && send.length() > 0);
    if (sendsBytes && !resolver.readers().tryAcquire(request.objectId())) {
      SourceResolver.discard(outcome);
      refuseBusy(ctx, request);
      return;
    }
    switch (outcome) {
      case SourceResolver.Reject reject -> {
        log.debug(
            "rejecting request {} for object {}: {}",
            request.requestId(),
            request.objectId(),
            reject.message());
        ctx.writeAndFlush(
                ResponseHeader.Failure.of(request.requestId(), reject.status(), reject.message()))
            .addListener((ChannelFutureListener) f -> responseWritten(ctx, request, f));
      }
      case SourceResolver.Send send -> {
        ResponseHeader.Ok header = new ResponseHeader.Ok(request.requestId(), send.length());
        if (send.length() == 0) {
          SourceResolver.closeQuietly(send.file());
          ctx.writeAndFlush(header)
              .addListener((ChannelFutureListener) f -> responseWritten(ctx, request, f));
          return;
        }
        ctx.write(header);
        ChannelProgressivePromise promise = ctx.newProgressivePromise();
        promise.addListener(new PayloadListener(ctx, request, send.length()));
        // Region and chunks own the file channel and close it when done, on success or failure.
        Object payload =
            chunked
                ? new FileRangeChunks(send.file(), send.position(), send.length())
                : new DefaultFileRegion(send.file(), send.position(), send.length());
        ctx.writeAndFlush(payload, promise);
      }
      case SourceResolver.Stream stream -> {
        // Flushed at once: the reader learns it is served even while nothing has landed yet.
        ctx.writeAndFlush(new ResponseHeader.Ok(request.requestId(), stream.length()));
        streaming = new Streamer(ctx, request, stream);
        streaming.next();
      }
    }
  }

  /** The object already has as many readers here as one object may: the reader asks elsewhere. */
  private void refuseBusy(ChannelHandlerContext ctx, ChunkRequest request) {
    String message =
        "busy: object "
            + request.objectId()
            + " is being sent to "
            + resolver.readers().limit()
            + " readers here already";
    log.debug("rejecting request {}: {}", request.requestId(), message);
    ctx.writeAndFlush(ResponseHeader.Failure.of(request.requestId(), Status.BUSY, message))
        .addListener((ChannelFutureListener) f -> responseWritten(ctx, request, f));
  }

  private void responseWritten(
      ChannelHandlerContext ctx, ChunkRequest request, ChannelFuture future) {
    busy = false;
    if (!future.isSuccess()) {
      log.debug(
          "sending object {} to {} failed: {}",
          request.objectId(),
          ctx.channel().remoteAddress(),
          String.valueOf(future.cause()));
      closeNow(ctx);
      return;
    }
    drain(ctx);
  }

  private void closeNow(ChannelHandlerContext ctx) {
    closing = true;
    queue.clear();
    ctx.close();
  }

  private static ProtocolViolationException violation(Throwable cause) {
    if (cause instanceof ProtocolViolationException v) {
      return v;
    }
    if (cause instanceof DecoderException
        && cause.getCause() instanceof ProtocolViolationException v) {
      return v;
    }
    return null;
  }

  /**
   * Sends a range of an object that is still arriving, piece by piece as its bytes land: each piece
   * is what landed beyond the last one (sendfile, or chunks with TLS or an upload limit), and when
   * none has, it waits for the arrival to advance. A failed arrival closes the connection
   * mid-payload, so the reader sees a short payload and takes the object elsewhere; a stalled one
   * trips the idle timeout like any stalled send.
   */
  private final class Streamer {
    private final ChannelHandlerContext ctx;
    private final ChunkRequest request;
    private final SourceResolver.Stream stream;
    private long sent;
    private boolean ended;

    Streamer(ChannelHandlerContext ctx, ChunkRequest request, SourceResolver.Stream stream) {
      this.ctx = ctx;
      this.request = request;
      this.stream = stream;
    }

    /** On the event loop: send what has landed, or wait for more. */
    void next() {
      if (ended) {
        return;
      }
      if (closing) {
        end();
        return;
      }
      Arrival arrival = stream.arrival();
      if (arrival.failed()) {
        log.debug(
            "object {} stopped arriving; cutting off the stream to {}",
            request.objectId(),
            ctx.channel().remoteAddress());
        end();
        closeNow(ctx);
        return;
      }
      long ready = Math.min(arrival.landed() - stream.objectOffset(), stream.length());
      if (ready <= sent) {
        if (sent >= stream.length()) {
          // A zero-length range: the header was all there was to send.
          end();
          responseWritten(ctx, request, ctx.newSucceededFuture());
          return;
        }
        arrival.whenBeyond(stream.objectOffset() + sent, this::wake);
        return;
      }
      long n = ready - sent;
      Object piece =
          chunked
              ? new FileRangeChunks(stream.file(), stream.position() + sent, n, false)
              : new BorrowedFileRegion(stream.file(), stream.position() + sent, n);
      ctx.writeAndFlush(piece)
          .addListener(
              (ChannelFutureListener)
                  f -> {
                    if (!f.isSuccess()) {
                      end();
                      responseWritten(ctx, request, f);
                      return;
                    }
                    bytesServed.add(n);
                    sent += n;
                    if (sent == stream.length()) {
                      end();
                      responseWritten(ctx, request, f);
                    } else {
                      next();
                    }
                  });
    }

    private void wake() {
      try {
        ctx.executor().execute(this::next);
      } catch (RejectedExecutionException e) {
        // Shutting down: the connection closes, and end() with it.
      }
    }

    void end() {
      if (!ended) {
        ended = true;
        resolver.readers().release(request.objectId());
        SourceResolver.closeQuietly(stream.file());
        if (streaming == this) {
          streaming = null;
        }
      }
    }
  }

  /** A sendfile region over a file the stream keeps open across pieces. */
  private static final class BorrowedFileRegion extends DefaultFileRegion {
    BorrowedFileRegion(java.nio.channels.FileChannel file, long position, long count) {
      super(file, position, count);
    }

    @Override
    protected void deallocate() {
      // The stream closes the file when its last piece is sent.
    }
  }

  /** Counts payload bytes as the transport reports them sent, then releases the connection. */
  private final class PayloadListener implements ChannelProgressiveFutureListener {
    private final ChannelHandlerContext ctx;
    private final ChunkRequest request;
    private final long length;
    private long counted;

    PayloadListener(ChannelHandlerContext ctx, ChunkRequest request, long length) {
      this.ctx = ctx;
      this.request = request;
      this.length = length;
    }

    @Override
    public void operationProgressed(ChannelProgressiveFuture future, long progress, long total) {
      bytesServed.add(progress - counted);
      counted = progress;
    }

    @Override
    public void operationComplete(ChannelProgressiveFuture future) {
      resolver.readers().release(request.objectId());
      if (future.isSuccess()) {
        bytesServed.add(length - counted);
        counted = length;
      }
      responseWritten(ctx, request, future);
    }
  }
}
