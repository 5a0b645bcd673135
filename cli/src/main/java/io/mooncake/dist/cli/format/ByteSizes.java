package io.mooncake.dist.cli.format;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte counts as operators type and read them. Every unit is binary ({@code K}, {@code KB} and
 * {@code KiB} all mean 1024): chunk sizes are powers of two in practice, and "64MB" meaning
 * 64,000,000 would cut objects at odd boundaries nobody intended.
 */
public final class ByteSizes {
  private static final Pattern SIZE = Pattern.compile("\\s*([-+]?\\d+)\\s*([A-Za-z]*)\\s*");
  private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

  private ByteSizes() {}

  /**
   * Parses {@code 1048576}, {@code 16M}, {@code 64MiB}, {@code 2g} and the like. Signs are accepted
   * so that the caller, not the parser, says why zero or a negative size is wrong.
   *
   * @throws IllegalArgumentException naming the text when it is no size or does not fit a long
   */
  public static long parse(String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a size (examples: 1048576, 16M, 64MiB)");
    }
    long unit =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "", "b" -> 1L;
          case "k", "kb", "kib" -> 1L << 10;
          case "m", "mb", "mib" -> 1L << 20;
          case "g", "gb", "gib" -> 1L << 30;
          case "t", "tb", "tib" -> 1L << 40;
          default ->
              throw new IllegalArgumentException(
                  "'"
                      + text
                      + "' has an unknown unit '"
                      + m.group(2)
                      + "' (use B, K, M, G or T, optionally followed by iB or B)");
        };
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("'" + text + "' is too large", e);
    }
  }

  /** {@code 512 B}, {@code 1.0 KiB}, {@code 37.5 MiB}: one decimal from KiB on. */
  public static String format(long bytes) {
    return format((double) bytes);
  }

  /** As {@link #format(long)}, for fractional amounts such as a per-second rate. */
  public static String format(double bytes) {
    double abs = Math.abs(bytes);
    if (abs < 1024) {
      return Math.round(bytes) + " B";
    }
    int unit = -1;
    while (abs >= 1024 && unit < UNITS.length - 1) {
      abs /= 1024;
      unit++;
    }
    // 1023.96 MiB would print as "1024.0 MiB"; step up so the number stays below 1024.
    if (abs >= 1023.95 && unit < UNITS.length - 1) {
      abs /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%s%.1f %s", bytes < 0 ? "-" : "", abs, UNITS[unit]);
  }
}
