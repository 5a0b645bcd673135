package io.mooncake.dist.worker;

import java.time.Duration;

/**
 * Which heartbeats renew the running tasks' leases and carry their progress (issue 19). The node's
 * row is written on every heartbeat (its liveness); its running tasks' rows only every {@code
 * every} heartbeats. With a lease of 30 s and a heartbeat of 2 s, renewing every task on every beat
 * rewrote each task row 15 times a lease: a copy of the 1,000-node fleet benchmark lives about 32
 * s, so 16 row writes a copy, which {@code bench/copy-floor.sh} prices at about a third of issue
 * 19's Postgres budget of 0.5 ms a copy.
 *
 * <p>Two bounds: a lease is renewed at least three times within its length, so two lost heartbeats
 * in a row still leave it held; and at most every {@link #AT_MOST}, because the progress written
 * with the renewal is what keeps a relaying copy fresh for other nodes' source lookups ({@link
 * TaskExecutor#RELAY_FRESH}, more than twice this).
 */
record RenewalCadence(int every) {
  /** The longest time between two renewals of a running task. */
  static final Duration AT_MOST = Duration.ofSeconds(6);

  RenewalCadence {
    if (every < 1) {
      throw new IllegalArgumentException("every must be positive, got " + every);
    }
  }

  /** The cadence for this heartbeat interval and lease. */
  static RenewalCadence of(Duration heartbeat, Duration lease) {
    long beat = Math.max(1, heartbeat.toMillis());
    long byFreshness = AT_MOST.toMillis() / beat;
    long byLease = lease.toMillis() / (3 * beat);
    return new RenewalCadence((int) Math.max(1, Math.min(byFreshness, byLease)));
  }

  /**
   * Whether the next heartbeat renews the running tasks, {@code beats} heartbeats after the last
   * one that renewed them and was recorded.
   */
  boolean due(int beats) {
    return beats + 1 >= every;
  }
}
