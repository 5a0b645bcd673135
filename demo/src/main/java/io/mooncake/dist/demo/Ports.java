package io.mooncake.dist.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;

/**
 * Port choice: the well-known port when nothing listens on it (so the demo's output matches the
 * RFC's examples), else a free ephemeral one, so a second demo or a test suite running at the same
 * time does not make this one fail.
 */
final class Ports {
  private Ports() {}

  /**
   * {@code preferred} when it is free and not in {@code taken}, else a free ephemeral port not in
   * {@code taken}.
   */
  static int preferredOrFree(int preferred, Set<Integer> taken) {
    if (!taken.contains(preferred) && isFree(preferred)) {
      return preferred;
    }
    for (int attempt = 0; attempt < 20; attempt++) {
      int port = ephemeral();
      if (!taken.contains(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free TCP port found");
  }

  /** Whether a listener could bind {@code port} on all interfaces, as the master and clients do. */
  static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static int ephemeral() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
