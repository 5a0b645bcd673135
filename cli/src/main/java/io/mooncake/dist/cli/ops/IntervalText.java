package io.mooncake.dist.cli.ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jooq.types.DayToSecond;
import org.jooq.types.YearToMonth;
import org.jooq.types.YearToSecond;

/**
 * A PostgreSQL interval as psql prints it ({@code 3 days 04:05:06}, {@code 00:00:01}), instead of
 * jOOQ's {@code +0-0 +3 04:05:06.000000000}: the reports' ages are read next to psql output.
 */
final class IntervalText {
  private IntervalText() {}

  static String format(YearToSecond interval) {
    YearToMonth ym = interval.getYearToMonth();
    DayToSecond ds = interval.getDayToSecond();
    List<String> parts = new ArrayList<>();
    unit(parts, ym.getSign() * ym.getYears(), "year", "years");
    unit(parts, ym.getSign() * ym.getMonths(), "mon", "mons");
    unit(parts, ds.getSign() * ds.getDays(), "day", "days");
    boolean hasTime =
        ds.getHours() != 0 || ds.getMinutes() != 0 || ds.getSeconds() != 0 || ds.getNano() != 0;
    if (hasTime || parts.isEmpty()) {
      String time =
          String.format(
              Locale.ROOT,
              "%s%02d:%02d:%02d",
              ds.getSign() < 0 ? "-" : "",
              ds.getHours(),
              ds.getMinutes(),
              ds.getSeconds());
      if (ds.getMicro() != 0) {
        time += String.format(Locale.ROOT, ".%06d", ds.getMicro());
      }
      parts.add(time);
    }
    return String.join(" ", parts);
  }

  private static void unit(List<String> parts, int n, String one, String many) {
    if (n != 0) {
      parts.add(n + " " + (Math.abs(n) == 1 ? one : many));
    }
  }
}
