package io.mooncake.dist.cli.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ThroughputTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void rateIsBytesMovedOverTheInterval() {
    assertEquals(50.0 * (1 << 20), Throughput.bytesPerSecond(0, 100L << 20, 2 * SECOND), 1e-6);
  }

  @Test
  void noTimeOrFewerBytesThanBeforeIsNoSpeed() {
    assertEquals(0.0, Throughput.bytesPerSecond(10, 20, 0));
    assertEquals(0.0, Throughput.bytesPerSecond(500, 100, SECOND));
  }

  @Test
  void rateFormatsAsBytesPerSecond() {
    assertEquals("120.0 MiB/s", Throughput.formatRate(120.0 * (1 << 20)));
    assertEquals("0 B/s", Throughput.formatRate(0));
  }

  @Test
  void etaIsRemainingBytesOverRateRoundedUp() {
    assertEquals(Optional.of(Duration.ofSeconds(3)), Throughput.eta(250, 100));
    assertEquals("5m03s", Throughput.formatEta(Throughput.eta(303L << 20, 1 << 20)));
  }

  @Test
  void etaIsZeroWhenDoneAndUnknownWhenNothingMoves() {
    assertEquals(Optional.of(Duration.ZERO), Throughput.eta(0, 0));
    assertEquals(Optional.empty(), Throughput.eta(1000, 0));
    assertEquals("-", Throughput.formatEta(Throughput.eta(1000, 0)));
  }
}
