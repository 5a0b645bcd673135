package io.mooncake.dist.transfer;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Builds the pipeline of each accepted connection: [upload limit] [TLS, chunked writer] idle check,
 * handshake (removed once the peer is authenticated), request decoder, response encoder, handler.
 */
final class ChunkServerInitializer extends ChannelInitializer<SocketChannel> {

  private final SourceResolver resolver;
  private final Executor blocking;
  private final ChannelGroup channels;
  private final LongAdder bytesServed;
  private final Duration idleTimeout;
  private final ChunkSecurity security;

  private final io.netty.handler.traffic.GlobalTrafficShapingHandler uploadLimit;

  /** This server's caps on connections that have not authenticated yet. */
  private final Unauthenticated unauthenticated =
      new Unauthenticated(Unauthenticated.MAX_TOTAL, Unauthenticated.MAX_PER_ADDRESS);

  ChunkServerInitializer(
      SourceResolver resolver,
      Executor blocking,
      ChannelGroup channels,
      LongAdder bytesServed,
      Duration idleTimeout,
      ChunkSecurity security,
      io.netty.handler.traffic.GlobalTrafficShapingHandler uploadLimit) {
    this.uploadLimit = uploadLimit;
    this.resolver = resolver;
    this.blocking = blocking;
    this.channels = channels;
    this.bytesServed = bytesServed;
    this.idleTimeout = idleTimeout;
    this.security = security;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    Unauthenticated.Slot slot = unauthenticated.admit(ch.remoteAddress());
    if (slot == null) {
      // Over a cap: closed before a byte is sent, so a flood costs no handshake state.
      ServerHandshakeHandler.refusedAtCap(ch.remoteAddress());
      ch.close();
      return;
    }
    channels.add(ch);
    if (uploadLimit != null) {
      // One shaper for every connection: the node's whole uplink is limited, not each peer.
      ch.pipeline().addLast("upload-limit", uploadLimit);
    }
    if (security.tls()) {
      SslHandler tls = security.tlsContexts().server().newHandler(ch.alloc());
      tls.setHandshakeTimeoutMillis(security.handshakeTimeout().toMillis());
      ch.pipeline().addLast("tls", tls);
    }
    boolean chunked = security.tls() || uploadLimit != null;
    if (chunked) {
      // Payloads go out as chunks read from the file: TLS cannot encrypt a sendfile, and the
      // shaper can only pace what it sees; one sendfile of a whole object would pass in one burst.
      ch.pipeline().addLast("chunked-writer", new ChunkedWriteHandler());
    }
    ch.pipeline()
        // observeOutput: a slow but progressing sendfile is not idle; a peer that stopped reading
        // is.
        .addLast(
            "idle", new IdleStateHandler(true, 0, 0, idleTimeout.toMillis(), TimeUnit.MILLISECONDS))
        .addLast(
            "handshake",
            new ServerHandshakeHandler(security.secret(), security.handshakeTimeout(), slot))
        .addLast("request-decoder", new RequestDecoder())
        .addLast("response-encoder", new ResponseHeaderEncoder())
        .addLast("handler", new ChunkRequestHandler(resolver, blocking, bytesServed, chunked));
  }
}
