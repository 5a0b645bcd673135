package io.mooncake.dist.transfer;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.timeout.ReadTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Builds the pipeline of one fetch connection. */
final class ChunkClientInitializer extends ChannelInitializer<SocketChannel> {

    private final Duration idleTimeout;
    private final FetchHandler handler;

    private final io.netty.handler.traffic.GlobalTrafficShapingHandler downloadLimit;

    ChunkClientInitializer(Duration idleTimeout, FetchHandler handler,
                           io.netty.handler.traffic.GlobalTrafficShapingHandler downloadLimit) {
        this.downloadLimit = downloadLimit;
        this.idleTimeout = idleTimeout;
        this.handler = handler;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        if (downloadLimit != null) {
            ch.pipeline().addLast("download-limit", downloadLimit);
        }
        ch.pipeline()
                .addLast("read-timeout", new ReadTimeoutHandler(idleTimeout.toMillis(), TimeUnit.MILLISECONDS))
                .addLast("request-encoder", new RequestEncoder())
                .addLast("response-decoder", new ResponseDecoder())
                .addLast("fetch", handler);
    }
}
