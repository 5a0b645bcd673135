package io.mooncake.dist.cli.format;

import java.time.Duration;
import java.util.Optional;

/** Transfer rate between two samples and the time left at that rate. */
public final class Throughput {
  private Throughput() {}

  /**
   * Bytes per second from {@code before} to {@code now} over {@code elapsedNanos}. A count that
   * went down (a retried copy starting over) is no negative speed: it reads as zero.
   */
  public static double bytesPerSecond(long before, long now, long elapsedNanos) {
    if (elapsedNanos <= 0 || now <= before) {
      return 0.0;
    }
    return (now - before) * 1e9 / elapsedNanos;
  }

  /** {@code 120.3 MiB/s}. */
  public static String formatRate(double bytesPerSecond) {
    return ByteSizes.format(bytesPerSecond) + "/s";
  }

  /** Time to move {@code remaining} bytes at {@code bytesPerSecond}; empty when nothing moves. */
  public static Optional<Duration> eta(long remaining, double bytesPerSecond) {
    if (remaining <= 0) {
      return Optional.of(Duration.ZERO);
    }
    if (bytesPerSecond <= 0 || Double.isNaN(bytesPerSecond)) {
      return Optional.empty();
    }
    double seconds = Math.ceil(remaining / bytesPerSecond);
    return Optional.of(Duration.ofSeconds((long) Math.min(seconds, Long.MAX_VALUE / 2.0)));
  }

  /** {@code 5m03s}, or {@code -} while nothing moves. */
  public static String formatEta(Optional<Duration> eta) {
    return eta.map(Durations::format).orElse("-");
  }
}
