package io.mooncake.dist.cli.format;

import java.util.Locale;

/** A bar and a percentage for {@code done} out of {@code total} bytes. */
public final class ProgressBar {
  private ProgressBar() {}

  /**
   * The completed share, clamped to [0, 1]. Nothing to do counts as done, so a model of empty files
   * shows a full bar rather than a division by zero.
   */
  public static double fraction(long done, long total) {
    if (total <= 0) {
      return 1.0;
    }
    return Math.max(0.0, Math.min(1.0, (double) done / total));
  }

  /**
   * {@code [#########...........]} with {@code width} cells between the brackets. A cell fills only
   * once its whole share is done, so the bar is full exactly when everything is.
   */
  public static String render(long done, long total, int width) {
    int filled =
        total <= 0 ? width : (int) Math.min(width, Math.max(0, multiplyDivide(done, width, total)));
    return "[" + "#".repeat(filled) + ".".repeat(width - filled) + "]";
  }

  /** {@code 37.5%}, one decimal; {@code 100.0%} only when done reaches total. */
  public static String percent(long done, long total) {
    double pct = fraction(done, total) * 100;
    // Rounding would show 99.96% as 100.0% while bytes are still missing.
    if (pct > 99.9 && done < total) {
      pct = 99.9;
    }
    return String.format(Locale.ROOT, "%.1f%%", pct);
  }

  private static long multiplyDivide(long done, int width, long total) {
    return (long) Math.floor((double) done * width / total);
  }
}
