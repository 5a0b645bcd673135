package io.mooncake.dist.master;

import io.helidon.webserver.WebServerConfig;
import java.time.Duration;

/**
 * What one connection may hold of the master: a request that does not arrive within {@link
 * #READ_TIMEOUT} of the last byte read is dropped (a half-sent request once stayed open for good),
 * idle keep-alive connections close after {@link #IDLE_TIMEOUT}, and at most {@link
 * #MAX_CONNECTIONS} are open at once.
 */
public final class ServerLimits {
  /** Longest wait for the next bytes of a request (headers or body). */
  public static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

  /**
   * A connection with no bytes read or written for this long is closed, whether it sits between
   * requests or in the middle of one (checked every {@link #IDLE_CHECK}).
   */
  public static final Duration IDLE_TIMEOUT = Duration.ofSeconds(15);

  /** How often connections are checked for {@link #IDLE_TIMEOUT}. */
  public static final Duration IDLE_CHECK = Duration.ofSeconds(2);

  /** Open connections at once; more wait in the accept backlog. */
  public static final int MAX_CONNECTIONS = 1024;

  private ServerLimits() {}

  /** Applies the limits to a server being built. */
  public static WebServerConfig.Builder apply(WebServerConfig.Builder server) {
    return server
        .connectionOptions(o -> o.readTimeout(READ_TIMEOUT))
        .idleConnectionTimeout(IDLE_TIMEOUT)
        .idleConnectionPeriod(IDLE_CHECK)
        .maxTcpConnections(MAX_CONNECTIONS);
  }
}
