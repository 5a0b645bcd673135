package io.mooncake.dist.transfer;

import java.util.concurrent.ConcurrentHashMap;

/**
 * A count per key held to a limit: {@link #tryAcquire} counts one more unless the key is at the
 * limit, {@link #release} one fewer; a key at zero takes no memory. Thread-safe.
 */
final class PerKeyLimit<K> {
  private final int limit;
  private final ConcurrentHashMap<K, Integer> counts = new ConcurrentHashMap<>();

  /**
   * @param limit the most any one key counts, at least 1
   */
  PerKeyLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1: " + limit);
    }
    this.limit = limit;
  }

  /** Counts one more for {@code key}, unless it is at the limit already. */
  boolean tryAcquire(K key) {
    boolean[] taken = {false};
    counts.compute(
        key,
        (k, n) -> {
          int now = n == null ? 0 : n;
          if (now >= limit) {
            return n;
          }
          taken[0] = true;
          return now + 1;
        });
    return taken[0];
  }

  /** One fewer for {@code key} (counted by {@link #tryAcquire}). */
  void release(K key) {
    counts.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
  }

  int limit() {
    return limit;
  }

  /** The count of {@code key} now. */
  int count(K key) {
    return counts.getOrDefault(key, 0);
  }
}
