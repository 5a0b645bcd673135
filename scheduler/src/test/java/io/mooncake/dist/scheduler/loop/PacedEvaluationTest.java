package io.mooncake.dist.scheduler.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The pace of a job's notified evaluations ({@link SchedulerLoop#paced}). */
class PacedEvaluationTest {
  private static final long GAP = 100;

  @Test
  void aQuietJobIsEvaluatedAtOnceUpToTheBurst() {
    // Evaluations of 1 each, notified every 10: four run at once, then the gap holds.
    Long due = null;
    SchedulerLoop.Pace pace = null;
    for (long end : new long[] {1_000, 1_010, 1_020}) {
      pace = SchedulerLoop.paced(due, end, 1, GAP, 3);
      due = pace.due();
      assertEquals(
          end, pace.notBefore(), "evaluation ending at " + end + " may be followed at once");
    }
    pace = SchedulerLoop.paced(due, 1_030, 1, GAP, 3);
    assertEquals(1_400, pace.due());
    assertEquals(1_100, pace.notBefore(), "the fifth waits: the burst of three is spent");
  }

  @Test
  void underContinuousNotificationTheRateIsOnePerGap() {
    Long due = null;
    long at = 0;
    int evaluations = 0;
    while (at < 10_000) {
      SchedulerLoop.Pace pace = SchedulerLoop.paced(due, at, 1, GAP, 3);
      due = pace.due();
      evaluations++;
      at = Math.max(at + 1, pace.notBefore());
    }
    // 10,000 / 100 = 100 evaluations, plus the burst of three at the start.
    assertEquals(103, evaluations);
  }

  @Test
  void aSlowEvaluationSpacesTheNextByItsDuration() {
    SchedulerLoop.Pace pace = SchedulerLoop.paced(null, 1_000, 250, GAP, 0);
    assertEquals(1_250, pace.due());
    assertEquals(1_250, pace.notBefore());
  }

  @Test
  void aJobQuietLongerThanItsDueTimeStartsAfresh() {
    SchedulerLoop.Pace pace = SchedulerLoop.paced(500L, 10_000, 1, GAP, 3);
    assertEquals(10_100, pace.due());
    assertEquals(10_000, pace.notBefore());
  }
}
