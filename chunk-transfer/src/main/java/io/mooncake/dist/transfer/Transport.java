package io.mooncake.dist.transfer;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the native epoll transport when the platform offers it (sendfile and fewer copies on Linux)
 * and NIO otherwise, so the same code runs on a developer laptop.
 *
 * <p>Uses the per-transport event loop group classes because they exist in both Netty 4.1 and 4.2
 * (4.2 deprecates them in favour of {@code MultiThreadIoEventLoopGroup}, which 4.1 lacks).
 */
final class Transport {

  private static final Logger log = LoggerFactory.getLogger(Transport.class);

  static final boolean EPOLL = Epoll.isAvailable();

  static {
    if (EPOLL) {
      log.debug("chunk transfer uses the native epoll transport");
    } else {
      log.info(
          "native epoll unavailable ({}); chunk transfer falls back to NIO",
          String.valueOf(Epoll.unavailabilityCause()));
    }
  }

  private Transport() {}

  /**
   * @param threads 0 for Netty's default (twice the core count)
   */
  @SuppressWarnings("deprecation")
  static EventLoopGroup newGroup(int threads, String name, boolean daemon) {
    DefaultThreadFactory factory = new DefaultThreadFactory(name, daemon);
    return EPOLL
        ? new EpollEventLoopGroup(threads, factory)
        : new NioEventLoopGroup(threads, factory);
  }

  static Class<? extends ServerSocketChannel> serverChannelType() {
    return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  static Class<? extends SocketChannel> channelType() {
    return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
  }
}
