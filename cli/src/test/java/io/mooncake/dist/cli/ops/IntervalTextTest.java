package io.mooncake.dist.cli.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jooq.types.DayToSecond;
import org.jooq.types.YearToMonth;
import org.jooq.types.YearToSecond;
import org.junit.jupiter.api.Test;

class IntervalTextTest {

  private static YearToSecond interval(
      int years, int months, int days, int h, int m, int s, int nanos) {
    return new YearToSecond(new YearToMonth(years, months), new DayToSecond(days, h, m, s, nanos));
  }

  @Test
  void timeOnlyIntervalsReadAsPsqlPrintsThem() {
    assertEquals("00:00:01", IntervalText.format(interval(0, 0, 0, 0, 0, 1, 0)));
    assertEquals("00:00:00", IntervalText.format(interval(0, 0, 0, 0, 0, 0, 0)));
  }

  @Test
  void largerUnitsComeFirstSingularOrPlural() {
    assertEquals(
        "1 year 2 mons 3 days 04:05:06", IntervalText.format(interval(1, 2, 3, 4, 5, 6, 0)));
    assertEquals("1 day", IntervalText.format(interval(0, 0, 1, 0, 0, 0, 0)));
  }

  @Test
  void fractionsOfASecondShowAsMicroseconds() {
    assertEquals("00:00:01.250000", IntervalText.format(interval(0, 0, 0, 0, 0, 1, 250_000_000)));
  }
}
