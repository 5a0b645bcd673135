package io.mooncake.dist.transfer;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.ReadTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Builds the pipeline of one fetch connection: [download limit] [TLS] read timeout, request
 * encoder, handshake (removed once the server is authenticated), response decoder, fetch.
 */
final class ChunkClientInitializer extends ChannelInitializer<SocketChannel> {

  private final Duration idleTimeout;
  private final FetchHandler handler;
  private final ChunkSecurity security;
  private final String host;
  private final int port;

  private final io.netty.handler.traffic.GlobalTrafficShapingHandler downloadLimit;

  ChunkClientInitializer(
      Duration idleTimeout,
      FetchHandler handler,
      ChunkSecurity security,
      String host,
      int port,
      io.netty.handler.traffic.GlobalTrafficShapingHandler downloadLimit) {
    this.downloadLimit = downloadLimit;
    this.idleTimeout = idleTimeout;
    this.handler = handler;
    this.security = security;
    this.host = host;
    this.port = port;
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    if (downloadLimit != null) {
      ch.pipeline().addLast("download-limit", downloadLimit);
    }
    if (security.tls()) {
      SslHandler tls = security.tlsContexts().client().newHandler(ch.alloc(), host, port);
      tls.setHandshakeTimeoutMillis(security.handshakeTimeout().toMillis());
      ch.pipeline().addLast("tls", tls);
    }
    ch.pipeline()
        .addLast(
            "read-timeout", new ReadTimeoutHandler(idleTimeout.toMillis(), TimeUnit.MILLISECONDS))
        .addLast("request-encoder", new RequestEncoder())
        .addLast(
            "handshake", new ClientHandshakeHandler(security.secret(), security.handshakeTimeout()))
        .addLast("response-decoder", new ResponseDecoder())
        .addLast("fetch", handler);
  }
}
