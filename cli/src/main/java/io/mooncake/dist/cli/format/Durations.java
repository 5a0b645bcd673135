package io.mooncake.dist.cli.format;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as typed ({@code 500ms}, {@code 1s}, {@code 1.5s}, {@code 2m}) and as shown ({@code
 * 5m03s}).
 */
public final class Durations {
  private static final Pattern DURATION =
      Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?\\s*");

  private Durations() {}

  /**
   * Parses a non-negative amount with an optional unit; a bare number means seconds.
   *
   * @throws IllegalArgumentException naming the text when it is not a duration
   */
  public static Duration parse(String text) {
    Matcher m = DURATION.matcher(text == null ? "" : text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration (examples: 500ms, 1s, 1.5s, 2m)");
    }
    long nanosPerUnit =
        switch (m.group(2) == null ? "s" : m.group(2)) {
          case "ms" -> 1_000_000L;
          case "m" -> 60_000_000_000L;
          case "h" -> 3_600_000_000_000L;
          default -> 1_000_000_000L;
        };
    try {
      long nanos =
          new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(nanosPerUnit)).longValueExact();
      return Duration.ofNanos(nanos);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is too long or finer than a nanosecond", e);
    }
  }

  /**
   * The two most significant units, seconds rounded up so a nearly done ETA never reads "0s":
   * {@code 7s}, {@code 5m03s}, {@code 1h02m}, {@code 3d04h}.
   */
  public static String format(Duration d) {
    long s = d.isNegative() ? 0 : d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
    if (s < 86_400) {
      return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60);
    }
    return String.format(Locale.ROOT, "%dd%02dh", s / 86_400, s % 86_400 / 3600);
  }
}
