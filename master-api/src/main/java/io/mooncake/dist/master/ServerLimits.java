package io.mooncake.dist.master;

import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http1.Http1Config;
import java.time.Duration;

/**
 * What one connection may hold of the master: a connection idle between requests closes after
 * {@link #IDLE_TIMEOUT} (Helidon's default: 5 minutes), and at most {@link #MAX_CONNECTIONS} are
 * open at once, and a request whose head (its headers) has not arrived {@link
 * #REQUEST_HEAD_TIMEOUT} after its request line is closed by {@link RequestHeadDeadline}: Helidon
 * 4.5's idle check interrupts only a connection waiting for a request line, and {@code
 * SocketOptions.readTimeout} is not applied to accepted NIO channels (docs/ARCHITECTURE.md).
 */
public final class ServerLimits {
  /**
   * A connection waiting for its next request line this long is closed (checked every {@link
   * #IDLE_CHECK}); one stopped inside a request head is not (see the class comment).
   */
  public static final Duration IDLE_TIMEOUT = Duration.ofSeconds(15);

  /** How often connections are checked for {@link #IDLE_TIMEOUT}. */
  public static final Duration IDLE_CHECK = Duration.ofSeconds(2);

  /** Time from a request line to the end of its headers before the connection is closed. */
  public static final Duration REQUEST_HEAD_TIMEOUT = Duration.ofSeconds(10);

  /** One per master process: a timer thread and the connections it watches. */
  public static final RequestHeadDeadline REQUEST_HEADS =
      new RequestHeadDeadline(REQUEST_HEAD_TIMEOUT);

  /**
   * Open connections at once; more wait in the accept backlog. Each node on the node link ({@code
   * --master-url}) holds up to two (its long-poll and its heartbeats), so a master that takes over
   * a thousand nodes from a failed replica needs 2,000 of them, plus the API's callers.
   */
  public static final int MAX_CONNECTIONS = 4096;

  private ServerLimits() {}

  /** Applies the limits to a server being built. */
  public static WebServerConfig.Builder apply(WebServerConfig.Builder server) {
    return server
        .idleConnectionTimeout(IDLE_TIMEOUT)
        .idleConnectionPeriod(IDLE_CHECK)
        .maxTcpConnections(MAX_CONNECTIONS)
        .addProtocol(Http1Config.builder().addReceiveListener(REQUEST_HEADS).build());
  }
}
