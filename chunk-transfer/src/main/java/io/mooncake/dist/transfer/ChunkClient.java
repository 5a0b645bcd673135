package io.mooncake.dist.transfer;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * Fetches byte ranges of objects from {@link ChunkServer}s into local files.
 *
 * <p>Each fetch has a connection to itself, which first completes the cluster handshake: the
 * request (and with it the object id) is only sent once the peer has proven it holds the cluster
 * secret. A connection whose fetch succeeded is kept for the next fetch from the same peer (at most
 * {@value #MAX_IDLE_PER_PEER} per peer, closed after the idle timeout), which then skips the TCP
 * and cluster handshakes and TCP's slow start; a fetch that fails closes its connection. So one
 * failed or slow transfer never disturbs another and a failure leaves nothing behind to clean up. A
 * kept connection the peer closed meanwhile is noticed before any byte of the answer, and the fetch
 * then starts over on a new connection. The payload streams from direct socket buffers into the
 * target with positional writes while being hashed; memory use per fetch is a few socket buffers
 * whatever the chunk size. The client never retries: it reports what went wrong and the caller
 * decides. Thread-safe; one instance is meant to be shared.
 */
public final class ChunkClient implements AutoCloseable {

  /** How long a fetch may go without receiving a single byte before it fails with TIMEOUT. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

  /** How long establishing the TCP connection may take. */
  public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final EventLoopGroup group;
  private final io.netty.handler.traffic.GlobalTrafficShapingHandler downloadLimit;
  private final Bootstrap bootstrap;
  private final Duration idleTimeout;
  private final ChunkSecurity security;
  private final AtomicInteger requestIds = new AtomicInteger();
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Authenticated connections whose last fetch succeeded, per {@code host:port}, newest first. */
  private final java.util.concurrent.ConcurrentHashMap<
          String, java.util.concurrent.ConcurrentLinkedDeque<Channel>>
      idle = new java.util.concurrent.ConcurrentHashMap<>();

  /** Kept connections per peer; more are closed when their fetch ends. */
  static final int MAX_IDLE_PER_PEER = 8;

  /**
   * A client with the {@linkplain #DEFAULT_IDLE_TIMEOUT default idle timeout}, owning its own event
   * loops.
   *
   * @param security the cluster secret (and TLS, if on) with which every connection authenticates
   */
  public ChunkClient(ChunkSecurity security) {
    this(security, DEFAULT_IDLE_TIMEOUT);
  }

  /**
   * @param idleTimeout a fetch fails with {@link ChunkTransferException.Kind#TIMEOUT} when no byte
   *     arrives from the peer for this long; must be positive
   */
  public ChunkClient(ChunkSecurity security, Duration idleTimeout) {
    this(security, idleTimeout, 0);
  }

  /**
   * @param downloadBytesPerSecond receive at most this many bytes per second over all fetches
   *     together (0 = unlimited); reading pauses, so TCP slows the peer
   */
  public ChunkClient(ChunkSecurity security, Duration idleTimeout, long downloadBytesPerSecond) {
    Objects.requireNonNull(security, "security");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    if (downloadBytesPerSecond < 0) {
      throw new IllegalArgumentException(
          "downloadBytesPerSecond must be >= 0: " + downloadBytesPerSecond);
    }
    if (idleTimeout.isNegative() || idleTimeout.isZero()) {
      throw new IllegalArgumentException("idleTimeout must be positive: " + idleTimeout);
    }
    this.security = security;
    this.idleTimeout = idleTimeout;
    this.group = Transport.newGroup(0, "chunk-client", true);
    this.downloadLimit =
        downloadBytesPerSecond == 0
            ? null
            : new io.netty.handler.traffic.GlobalTrafficShapingHandler(
                group, 0, downloadBytesPerSecond, 100);
    this.bootstrap =
        new Bootstrap()
            .group(group)
            .channel(Transport.channelType())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
            .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, true)
            // Large reads: each one is a pwrite and a digest update, so fewer and bigger is
            // cheaper per byte; the kernel buffer lets the sender run ahead of one disk write.
            .option(ChannelOption.SO_RCVBUF, RECEIVE_BUFFER_BYTES)
            .option(
                ChannelOption.RCVBUF_ALLOCATOR,
                new AdaptiveRecvByteBufAllocator(64 * 1024, 1024 * 1024, 4 * 1024 * 1024));
  }

  /** Kernel receive buffer per connection. */
  static final int RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

  /**
   * Fetches bytes {@code [offset, offset + length)} of object {@code objectId} (offsets relative to
   * the object) from the chunk server at {@code host:port} and writes them into {@code target}
   * starting at {@code targetPosition}, with positional writes that leave the target's position
   * unchanged.
   *
   * <p>The returned future completes with the number of bytes written and the SHA-256 (see {@link
   * FetchResult#sha256Hex}) of exactly the bytes received, or exceptionally with a {@link
   * ChunkTransferException}. Dependent stages attached without an executor run on the client's I/O
   * thread and must not block. Cancelling the future closes the connection. Bytes written before a
   * failure stay in the target; a retry simply overwrites them.
   *
   * @param progress called on the I/O thread with the running byte count as bytes arrive; may be
   *     null
   * @throws IllegalArgumentException for a negative offset, length or position, a range that
   *     overflows, a bad port, or an object id that is empty or longer than {@value
   *     Protocol#MAX_OBJECT_ID_BYTES} UTF-8 bytes
   */
  public CompletableFuture<FetchResult> fetch(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      FileChannel target,
      long targetPosition,
      LongConsumer progress) {
    validate(host, port, objectId, offset, length, target, targetPosition);
    return fetch(
        host,
        port,
        objectId,
        offset,
        length,
        new ChunkSink(target, targetPosition, ObjectDigest.Algorithm.SHA256),
        progress);
  }

  /**
   * As {@link #fetch(String, int, String, long, long, FileChannel, long, LongConsumer)}, handing
   * the payload to {@code sink} (e.g. a {@link DirectFileSink}) instead of positional writes and
   * digesting it with {@code algorithm} (the one the caller's expected digest names).
   */
  public CompletableFuture<FetchResult> fetch(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      ByteSink sink,
      ObjectDigest.Algorithm algorithm,
      LongConsumer progress) {
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(algorithm, "algorithm");
    return fetch(host, port, objectId, offset, length, new ChunkSink(sink, algorithm), progress);
  }

  private CompletableFuture<FetchResult> fetch(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      ChunkSink chunkSink,
      LongConsumer progress) {
    validateRequest(host, port, objectId, offset, length);
    FetchSpec spec = new FetchSpec(host + ":" + port, nextRequestId(), objectId, offset, length);
    CompletableFuture<FetchResult> result = new CompletableFuture<>();
    if (closed.get()) {
      result.completeExceptionally(
          new ChunkTransferException(
              ChunkTransferException.Kind.CONNECTION, spec.describe() + ": client is closed"));
      return result;
    }
    start(host, port, spec, chunkSink, progress, result, true);
    return result;
  }

  /**
   * Sends the fetch on a kept connection to the peer if there is one ({@code mayReuse}), else on a
   * new one.
   */
  private void start(
      String host,
      int port,
      FetchSpec spec,
      ChunkSink chunkSink,
      LongConsumer progress,
      CompletableFuture<FetchResult> result,
      boolean mayReuse) {
    String peer = spec.peer();
    Channel kept = mayReuse ? takeIdle(peer) : null;
    if (kept != null) {
      FetchHandler handler =
          new FetchHandler(
              spec,
              chunkSink,
              progress,
              result,
              idleTimeout,
              ch -> keep(peer, ch),
              () -> start(host, port, spec, chunkSink, progress, result, false));
      try {
        kept.pipeline().replace(IdleConnection.NAME, "fetch", handler);
      } catch (RuntimeException e) {
        // Closed and cleaned up meanwhile: a new connection it is.
        kept.close();
        start(host, port, spec, chunkSink, progress, result, false);
        return;
      }
      result.whenComplete(
          (r, e) -> {
            if (result.isCancelled()) {
              kept.close();
            }
          });
      return;
    }
    FetchHandler handler =
        new FetchHandler(
            spec, chunkSink, progress, result, idleTimeout, ch -> keep(peer, ch), null);
    ChannelFuture connect;
    try {
      connect =
          bootstrap
              .clone()
              .handler(
                  new ChunkClientInitializer(
                      idleTimeout, handler, security, host, port, downloadLimit))
              .connect(host, port);
    } catch (RuntimeException e) {
      // The event loops were shut down between the closed check and here.
      result.completeExceptionally(
          new ChunkTransferException(
              ChunkTransferException.Kind.CONNECTION,
              spec.describe() + ": cannot start connection: " + e,
              e));
      return;
    }
    connect.addListener(
        (ChannelFutureListener)
            f -> {
              if (!f.isSuccess()) {
                handler.connectFailed(f.cause());
              }
            });
    result.whenComplete(
        (r, e) -> {
          if (result.isCancelled()) {
            connect.channel().close();
          }
        });
  }

  /** The kept connections to {@code host:port}, newest first (for tests). */
  java.util.List<Channel> idleConnections(String peer) {
    java.util.concurrent.ConcurrentLinkedDeque<Channel> kept = idle.get(peer);
    return kept == null ? java.util.List.of() : java.util.List.copyOf(kept);
  }

  private Channel takeIdle(String peer) {
    java.util.concurrent.ConcurrentLinkedDeque<Channel> kept = idle.get(peer);
    if (kept == null) {
      return null;
    }
    for (Channel ch; (ch = kept.pollFirst()) != null; ) {
      if (ch.isActive()) {
        return ch;
      }
    }
    return null;
  }

  /**
   * On the connection's event loop, after its fetch succeeded: keep it for the next fetch, or close
   * it.
   */
  private void keep(String peer, Channel ch) {
    java.util.concurrent.ConcurrentLinkedDeque<Channel> kept =
        idle.computeIfAbsent(peer, k -> new java.util.concurrent.ConcurrentLinkedDeque<>());
    if (closed.get() || !ch.isActive() || kept.size() >= MAX_IDLE_PER_PEER) {
      ch.close();
      return;
    }
    ch.pipeline().replace("fetch", IdleConnection.NAME, new IdleConnection(() -> kept.remove(ch)));
    kept.offerFirst(ch);
  }

  /**
   * Sits where the fetch handler was while a connection waits to be reused: any byte from the peer
   * now is a protocol error, and the read timeout, the peer closing or an error all close the
   * connection and drop it from the pool.
   */
  private static final class IdleConnection extends io.netty.channel.ChannelInboundHandlerAdapter {
    static final String NAME = "idle";
    private final Runnable forget;

    IdleConnection(Runnable forget) {
      this.forget = forget;
    }

    @Override
    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
      io.netty.util.ReferenceCountUtil.release(msg);
      ctx.close();
    }

    @Override
    public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    @Override
    public void channelInactive(io.netty.channel.ChannelHandlerContext ctx) {
      forget.run();
      ctx.fireChannelInactive();
    }
  }

  /**
   * Blocking form of {@link #fetch}: waits for the transfer and rethrows its failure.
   *
   * @throws ChunkTransferException the transfer's failure; if the calling thread is interrupted the
   *     fetch is cancelled, the interrupt flag is restored and the kind is {@link
   *     ChunkTransferException.Kind#CONNECTION}
   */
  public FetchResult fetchBlocking(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      FileChannel target,
      long targetPosition,
      LongConsumer progress)
      throws ChunkTransferException {
    return await(
        fetch(host, port, objectId, offset, length, target, targetPosition, progress),
        objectId,
        host,
        port);
  }

  /**
   * Blocking convenience around {@link #fetch(String, int, String, long, long, ByteSink,
   * ObjectDigest.Algorithm, LongConsumer)}.
   */
  public FetchResult fetchBlocking(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      ByteSink sink,
      ObjectDigest.Algorithm algorithm,
      LongConsumer progress)
      throws ChunkTransferException {
    return await(
        fetch(host, port, objectId, offset, length, sink, algorithm, progress),
        objectId,
        host,
        port);
  }

  private static FetchResult await(
      CompletableFuture<FetchResult> future, String objectId, String host, int port)
      throws ChunkTransferException {
    try {
      return future.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ChunkTransferException failure) {
        // A fresh exception so the stack trace shows this caller; the original is the cause.
        throw new ChunkTransferException(failure.kind(), failure.getMessage(), failure);
      }
      throw new ChunkTransferException(
          ChunkTransferException.Kind.PROTOCOL,
          "fetch of object '"
              + objectId
              + "' from "
              + host
              + ":"
              + port
              + " failed: "
              + e.getCause(),
          e.getCause());
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new ChunkTransferException(
          ChunkTransferException.Kind.CONNECTION,
          "fetch of object '" + objectId + "' from " + host + ":" + port + " interrupted",
          e);
    }
  }

  /** Closes all connections (failing fetches in flight) and stops the client's threads. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      if (downloadLimit != null) {
        downloadLimit.release();
      }
      group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly();
    }
  }

  private int nextRequestId() {
    // Never 0: a server uses id 0 for errors about requests it could not parse.
    return requestIds.updateAndGet(i -> i == Integer.MAX_VALUE ? 1 : i + 1);
  }

  private static void validate(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      FileChannel target,
      long targetPosition) {
    Objects.requireNonNull(target, "target");
    validateRequest(host, port, objectId, offset, length);
    if (targetPosition < 0 || targetPosition + length < 0) {
      throw new IllegalArgumentException(
          "targetPosition must be >= 0 and leave room for length: targetPosition="
              + targetPosition
              + " length="
              + length);
    }
  }

  private static void validateRequest(
      String host, int port, String objectId, long offset, long length) {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(objectId, "objectId");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
    int idBytes = objectId.getBytes(StandardCharsets.UTF_8).length;
    if (idBytes == 0 || idBytes > Protocol.MAX_OBJECT_ID_BYTES) {
      throw new IllegalArgumentException(
          "object id must be 1.." + Protocol.MAX_OBJECT_ID_BYTES + " UTF-8 bytes, got " + idBytes);
    }
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "offset and length must be >= 0: offset=" + offset + " length=" + length);
    }
    if (offset + length < 0) {
      throw new IllegalArgumentException("range overflows: offset=" + offset + " length=" + length);
    }
  }
}
