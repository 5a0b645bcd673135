package io.mooncake.dist.transfer;

import java.util.concurrent.ConcurrentHashMap;

/**
 * How many readers a server is sending each object to right now, held to a limit per object. A
 * relay that passes an object on as it arrives can feed only so many readers before each of them
 * gets less than the object's own pace: a thousand followers that claim a newly released object in
 * the same second all find the two or three that have begun to receive it, and without a limit one
 * of them fed 304 readers at a 304th of its uplink for a quarter of an hour (bench/fleet.sh, N =
 * 1,000). The server knows its readers exactly, where the copy-source lookup sees them only once
 * their copies have recorded their source; a reader it refuses ({@link Status#BUSY}) asks
 * elsewhere.
 */
final class ObjectReaders {
  private final int limit;
  private final ConcurrentHashMap<String, Integer> counts = new ConcurrentHashMap<>();

  /**
   * @param limit readers of one object at a time; 0 = no limit
   */
  ObjectReaders(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("readers per object must be >= 0: " + limit);
    }
    this.limit = limit;
  }

  /** Counts one more reader of {@code objectId}, unless it already has {@link #limit()}. */
  boolean tryAcquire(String objectId) {
    if (limit == 0) {
      return true;
    }
    boolean[] taken = {false};
    counts.compute(
        objectId,
        (id, n) -> {
          int now = n == null ? 0 : n;
          if (now >= limit) {
            return n;
          }
          taken[0] = true;
          return now + 1;
        });
    return taken[0];
  }

  /** A reader of {@code objectId} counted by {@link #tryAcquire} is done. */
  void release(String objectId) {
    if (limit == 0) {
      return;
    }
    counts.computeIfPresent(objectId, (id, n) -> n <= 1 ? null : n - 1);
  }

  int limit() {
    return limit;
  }

  /** Readers of {@code objectId} right now. */
  int readers(String objectId) {
    return counts.getOrDefault(objectId, 0);
  }
}
