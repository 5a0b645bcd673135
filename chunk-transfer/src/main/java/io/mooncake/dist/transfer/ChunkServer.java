package io.mooncake.dist.transfer;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves byte ranges of locally held objects to peers over the chunk protocol (PROTOCOL.md).
 *
 * <p>Every connection first completes the cluster handshake ({@link ChunkSecurity}); a peer that
 * cannot prove it holds the cluster secret gets an error frame and is closed before any request is
 * read. Without TLS, payloads go out with {@code sendfile} ({@link
 * io.netty.channel.DefaultFileRegion}), so serving a chunk costs no heap and no user-space copy;
 * with TLS they are read and encrypted in chunks. Each connection serves its requests one after
 * another; a failure of one request (unknown object, bad range, unreadable file, throwing locator)
 * answers that request with an error frame and keeps the connection and the server up.
 */
public final class ChunkServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(ChunkServer.class);

  /** Close connections on which nothing was read or sent for this long. */
  static final Duration CONNECTION_IDLE_TIMEOUT = Duration.ofMinutes(5);

  /**
   * Bounds the header bytes a stalled peer can make us buffer. File regions do not count towards
   * these marks (they hold no memory); what keeps payloads from piling up is that a connection
   * serves one request at a time and stops reading while it does.
   */
  private static final WriteBufferWaterMark WATER_MARK =
      new WriteBufferWaterMark(32 * 1024, 128 * 1024);

  private final ChannelGroup channels;
  private final EventLoopGroup acceptGroup;
  private final EventLoopGroup ioGroup;
  private final ExecutorService lookups;
  private final LongAdder bytesServed;
  private final int port;
  private final AtomicBoolean closed = new AtomicBoolean();

  private ChunkServer(
      Channel serverChannel,
      ChannelGroup channels,
      EventLoopGroup acceptGroup,
      EventLoopGroup ioGroup,
      ExecutorService lookups,
      LongAdder bytesServed) {
    this.channels = channels;
    this.acceptGroup = acceptGroup;
    this.ioGroup = ioGroup;
    this.lookups = lookups;
    this.bytesServed = bytesServed;
    this.port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /**
   * Binds {@code bindHost:port} and serves objects found by {@code locator} to peers that complete
   * the cluster handshake of {@code security}.
   *
   * @param bindHost address to listen on, e.g. {@code "0.0.0.0"} or {@code "127.0.0.1"}
   * @param port port to listen on; 0 picks an ephemeral port, see {@link #port()}
   * @param locator resolves requested object ids to local file ranges
   * @param security the cluster secret (and TLS, if on) every connection must prove first
   * @return the running server
   * @throws InterruptedException if interrupted while binding
   * @throws UncheckedIOException if the address cannot be bound (e.g. port in use)
   */
  public static ChunkServer start(
      String bindHost, int port, ObjectLocator locator, ChunkSecurity security)
      throws InterruptedException {
    return start(bindHost, port, locator, security, 0);
  }

  /**
   * As {@link #start(String, int, ObjectLocator, ChunkSecurity)}, sending at most {@code
   * uploadBytesPerSecond} over all connections together (0 = unlimited).
   */
  public static ChunkServer start(
      String bindHost,
      int port,
      ObjectLocator locator,
      ChunkSecurity security,
      long uploadBytesPerSecond)
      throws InterruptedException {
    return start(bindHost, port, locator, security, uploadBytesPerSecond, 0);
  }

  /**
   * As {@link #start(String, int, ObjectLocator, ChunkSecurity, long)}, sending one object to at
   * most {@code readersPerObject} readers at a time (0 = no limit): a request beyond that is
   * answered {@code BUSY} (see {@code ObjectReaders}).
   */
  public static ChunkServer start(
      String bindHost,
      int port,
      ObjectLocator locator,
      ChunkSecurity security,
      long uploadBytesPerSecond,
      int readersPerObject)
      throws InterruptedException {
    Objects.requireNonNull(bindHost, "bindHost");
    Objects.requireNonNull(locator, "locator");
    Objects.requireNonNull(security, "security");
    if (uploadBytesPerSecond < 0) {
      throw new IllegalArgumentException(
          "uploadBytesPerSecond must be >= 0: " + uploadBytesPerSecond);
    }
    EventLoopGroup acceptGroup = Transport.newGroup(1, "chunk-server-accept", false);
    EventLoopGroup ioGroup = Transport.newGroup(0, "chunk-server-io", false);
    io.netty.handler.traffic.GlobalTrafficShapingHandler uploadLimit =
        uploadBytesPerSecond == 0
            ? null
            : new io.netty.handler.traffic.GlobalTrafficShapingHandler(
                ioGroup, uploadBytesPerSecond, 0, 100);
    // Locator calls and file opens may block; they get their own threads, never the I/O loops'.
    ExecutorService lookups =
        Executors.newFixedThreadPool(
            Math.max(2, Runtime.getRuntime().availableProcessors()),
            new DefaultThreadFactory("chunk-server-lookup", true));
    ChannelGroup channels = new DefaultChannelGroup("chunk-server", GlobalEventExecutor.INSTANCE);
    LongAdder bytesServed = new LongAdder();
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(acceptGroup, ioGroup)
            .channel(Transport.serverChannelType())
            .option(ChannelOption.SO_BACKLOG, 256)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
            .childOption(ChannelOption.SO_SNDBUF, 4 * 1024 * 1024)
            // Lets a client send its requests and half-close; pending answers still go out.
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .childHandler(
                new ChunkServerInitializer(
                    new SourceResolver(locator, new ObjectReaders(readersPerObject)),
                    lookups,
                    channels,
                    bytesServed,
                    CONNECTION_IDLE_TIMEOUT,
                    security,
                    uploadLimit));
    ChannelFuture bind;
    try {
      bind = bootstrap.bind(bindHost, port).await();
    } catch (InterruptedException e) {
      shutdown(acceptGroup, ioGroup, lookups);
      throw e;
    }
    if (!bind.isSuccess()) {
      shutdown(acceptGroup, ioGroup, lookups);
      Throwable cause = bind.cause();
      String what =
          "cannot bind chunk server to "
              + bindHost
              + ":"
              + port
              + (cause == null || cause.getMessage() == null ? "" : ": " + cause.getMessage());
      if (cause instanceof IOException io) {
        throw new UncheckedIOException(what, io);
      }
      throw new IllegalStateException(what, cause);
    }
    channels.add(bind.channel());
    ChunkServer server =
        new ChunkServer(bind.channel(), channels, acceptGroup, ioGroup, lookups, bytesServed);
    log.info(
        "chunk server listening on {} ({}, cluster handshake, {})",
        bind.channel().localAddress(),
        Transport.EPOLL ? "epoll" : "nio",
        security.tls()
            ? "TLS: payloads read and encrypted in user space"
            : uploadBytesPerSecond > 0
                ? "no TLS, upload limit: payloads read in 128 KiB pieces the limit paces"
                : "no TLS: payloads sent with sendfile");
    return server;
  }

  /**
   * @return the port the server is bound to
   */
  public int port() {
    return port;
  }

  /**
   * @return total payload bytes handed to the network so far, over all connections
   */
  public long bytesServed() {
    return bytesServed.sum();
  }

  /**
   * Stops accepting, closes all connections (cutting in-flight transfers) and stops its threads.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    channels.close().awaitUninterruptibly();
    shutdown(acceptGroup, ioGroup, lookups);
    log.info("chunk server on port {} stopped after serving {} bytes", port(), bytesServed());
  }

  // Lookups first: a finished lookup hands its open file back to an I/O loop, which must still run
  // to send or close it. The I/O loops then fail and release whatever is still queued on them.
  private static void shutdown(
      EventLoopGroup acceptGroup, EventLoopGroup ioGroup, ExecutorService lookups) {
    lookups.shutdown();
    try {
      if (!lookups.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("object lookups still running after 5 s; shutting down anyway");
        lookups.shutdownNow();
      }
    } catch (InterruptedException e) {
      lookups.shutdownNow();
      Thread.currentThread().interrupt();
    }
    Future<?> accept = acceptGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS);
    Future<?> io = ioGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS);
    accept.awaitUninterruptibly();
    io.awaitUninterruptibly();
  }
}
