package io.mooncake.dist.demo;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Port choice: the well-known port when nothing listens on it (so the demo's output matches the
 * RFC's examples), else a free one, so a second demo or a test suite running at the same time does
 * not make this one fail. A fallback port is taken below the kernel's ephemeral range: a port from
 * {@code new ServerSocket(0)} is ephemeral, and between the check and the launcher's bind any
 * outgoing connection (a database pool opening) could take it as its local port.
 */
final class Ports {
  private Ports() {}

  /**
   * {@code preferred} when it is free and not in {@code taken}, else a free port in {@value
   * #FALLBACK_FLOOR}-{@value #FALLBACK_CEILING} not in {@code taken}.
   */
  static int preferredOrFree(int preferred, Set<Integer> taken) {
    if (!taken.contains(preferred) && isFree(preferred)) {
      return preferred;
    }
    int span = FALLBACK_CEILING - FALLBACK_FLOOR;
    int start = ThreadLocalRandom.current().nextInt(span);
    for (int i = 0; i < span; i++) {
      int port = FALLBACK_FLOOR + (start + i) % span;
      if (!taken.contains(port) && isFree(port)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free TCP port in " + FALLBACK_FLOOR + "-" + FALLBACK_CEILING);
  }

  static final int FALLBACK_FLOOR = 20_000;
  static final int FALLBACK_CEILING = 32_000;

  /** Whether a listener could bind {@code port} on all interfaces, as the master and clients do. */
  static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
