package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DueTimesTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long POLL_MS = 60_000;

  @Test
  void nothingDueSleepsTheWholePoll() {
    assertEquals(POLL_MS, new DueTimes().sleepMs(0, 0, POLL_MS));
  }

  @Test
  void sleepsUntilTheEarliestDueTime() {
    DueTimes due = new DueTimes();
    due.add(5_000 * MS);
    due.add(2_000 * MS);
    assertEquals(2_001, due.sleepMs(0, 0, POLL_MS));
  }

  @Test
  void aLaterDueTimeIsKeptOnceTheEarlierOneIsClaimed() {
    DueTimes due = new DueTimes();
    due.add(2_000 * MS);
    due.add(8_000 * MS);
    // The claim that started at 2.0 s took the first task; the second is due 6 s later.
    assertEquals(6_001, due.sleepMs(2_000 * MS, 2_000 * MS, POLL_MS));
    assertEquals(1, due.size());
  }

  @Test
  void aClaimJustBeforeTheDueTimeDoesNotConsumeIt() {
    DueTimes due = new DueTimes();
    due.add(2_000 * MS);
    // A wake-up (another task ended) made the loop claim at 1.9 s: the task was not due yet.
    assertEquals(101, due.sleepMs(1_900 * MS, 1_900 * MS, POLL_MS));
    assertEquals(1, due.size());
    assertEquals(POLL_MS, due.sleepMs(2_000 * MS, 2_001 * MS, POLL_MS));
    assertEquals(0, due.size());
  }

  @Test
  void aDueTimeThatPassedWhileTheClaimRanIsLookedAtAgainAtOnce() {
    DueTimes due = new DueTimes();
    due.add(2_000 * MS);
    assertEquals(1, due.sleepMs(1_990 * MS, 2_050 * MS, POLL_MS));
  }

  @Test
  void neverSleepsLongerThanThePoll() {
    DueTimes due = new DueTimes();
    due.add(120_000 * MS);
    assertEquals(POLL_MS, due.sleepMs(0, 0, POLL_MS));
  }
}
