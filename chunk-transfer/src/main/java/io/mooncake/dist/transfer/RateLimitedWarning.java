package io.mooncake.dist.transfer;

/**
 * Lets one log line through per interval and counts the ones held back, so a flood of refused
 * connections cannot flood the log.
 */
final class RateLimitedWarning {
  private final long everyNanos;
  private long nextNanos = Long.MIN_VALUE;
  private long suppressed;

  RateLimitedWarning(long everyMillis) {
    this.everyNanos = everyMillis * 1_000_000L;
  }

  /**
   * @return -1 to stay quiet, else the lines held back since the last one that went through
   */
  synchronized long tryWarn() {
    long now = System.nanoTime();
    if (nextNanos != Long.MIN_VALUE && now - nextNanos < 0) {
      suppressed++;
      return -1;
    }
    nextNanos = now + everyNanos;
    long held = suppressed;
    suppressed = 0;
    return held;
  }
}
