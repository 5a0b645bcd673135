package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RenewalCadenceTest {
  private static RenewalCadence of(long heartbeatMs, long leaseMs) {
    return RenewalCadence.of(Duration.ofMillis(heartbeatMs), Duration.ofMillis(leaseMs));
  }

  @Test
  void theDefaultsRenewEveryThirdHeartbeat() {
    // --heartbeat-ms 2000, --lease-seconds 30: every 6 s, five renewals a lease.
    assertEquals(3, of(2_000, 30_000).every());
  }

  @Test
  void aFastHeartbeatRenewsAtMostEverySixSeconds() {
    assertEquals(60, of(100, 30_000).every());
    assertEquals(6, of(1_000, 60_000).every());
  }

  @Test
  void aShortLeaseIsRenewedThreeTimesWithinItsLength() {
    assertEquals(2, of(500, 3_000).every());
    assertEquals(1, of(2_000, 5_000).every());
    // The shortest lease mooncake_client accepts: just over two heartbeats.
    assertEquals(1, of(2_000, 4_001).every());
  }

  @Test
  void aSlowHeartbeatRenewsOnEveryBeat() {
    assertEquals(1, of(10_000, 300_000).every());
  }

  @Test
  void dueOnTheEveryThBeatAfterTheLastRecordedRenewal() {
    RenewalCadence c = new RenewalCadence(3);
    assertFalse(c.due(0));
    assertFalse(c.due(1));
    assertTrue(c.due(2));
    // A renewal beat that failed is tried again on the next beat.
    assertTrue(c.due(3));
    assertTrue(c.due(Integer.MAX_VALUE - 1));
    assertTrue(new RenewalCadence(1).due(0));
  }

  @Test
  void everyMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new RenewalCadence(0));
  }
}
