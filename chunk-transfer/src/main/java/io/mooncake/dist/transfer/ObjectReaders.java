package io.mooncake.dist.transfer;

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
  /** Null when there is no limit. */
  private final PerKeyLimit<String> readers;

  /**
   * @param limit readers of one object at a time; 0 = no limit
   */
  ObjectReaders(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("readers per object must be >= 0: " + limit);
    }
    this.readers = limit == 0 ? null : new PerKeyLimit<>(limit);
  }

  /** Counts one more reader of {@code objectId}, unless it already has {@link #limit()}. */
  boolean tryAcquire(String objectId) {
    return readers == null || readers.tryAcquire(objectId);
  }

  /** A reader of {@code objectId} counted by {@link #tryAcquire} is done. */
  void release(String objectId) {
    if (readers != null) {
      readers.release(objectId);
    }
  }

  /** Readers of one object at a time; 0 = no limit. */
  int limit() {
    return readers == null ? 0 : readers.limit();
  }

  /** Readers of {@code objectId} right now (0 when there is no limit: they are not counted). */
  int readers(String objectId) {
    return readers == null ? 0 : readers.count(objectId);
  }
}
