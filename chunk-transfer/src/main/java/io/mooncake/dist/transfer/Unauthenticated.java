package io.mooncake.dist.transfer;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Caps the connections a chunk server holds that have not completed the cluster handshake: at most
 * {@code total} over all peers and {@code perAddress} from one address. A connection over a cap is
 * closed on arrival, before the server sends its challenge; one under it holds a slot until it
 * authenticates or closes. Without caps a stranger could keep hundreds of descriptors open for the
 * handshake timeout each (the review: 800 connections in 1.1 s held 877).
 */
final class Unauthenticated {
  /** Unauthenticated connections over all peers. */
  static final int MAX_TOTAL = 256;

  /** Unauthenticated connections from one address (a node opens a handful at most). */
  static final int MAX_PER_ADDRESS = 32;

  private final int total;
  private final AtomicInteger held = new AtomicInteger();
  private final PerKeyLimit<InetAddress> byAddress;
  private final AtomicLong refused = new AtomicLong();

  Unauthenticated(int total, int perAddress) {
    this.total = total;
    this.byAddress = new PerKeyLimit<>(perAddress);
  }

  /** A slot for a new connection from {@code remote}, or null when a cap is reached. */
  Slot admit(SocketAddress remote) {
    InetAddress address =
        remote instanceof InetSocketAddress inet
            ? inet.getAddress()
            : InetAddress.getLoopbackAddress();
    if (held.incrementAndGet() > total) {
      held.decrementAndGet();
      refused.incrementAndGet();
      return null;
    }
    if (!byAddress.tryAcquire(address)) {
      held.decrementAndGet();
      refused.incrementAndGet();
      return null;
    }
    return new Slot(address);
  }

  /** Connections refused at a cap so far. */
  long refused() {
    return refused.get();
  }

  private void release(InetAddress address) {
    held.decrementAndGet();
    byAddress.release(address);
  }

  /** One admitted connection's hold on the caps; released once. */
  final class Slot {
    private final InetAddress address;
    private boolean released;

    private Slot(InetAddress address) {
      this.address = address;
    }

    /** Gives the slot back (authenticated, or closed); later calls do nothing. */
    void release() {
      synchronized (this) {
        if (released) {
          return;
        }
        released = true;
      }
      Unauthenticated.this.release(address);
    }
  }
}
