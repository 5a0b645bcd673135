package io.mooncake.dist.demo;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.util.Locale;

/**
 * Job progress as one line per change, e.g. {@code [ 1.2s] job seeding | 127.0.0.1:25001 acquiring
 * [###.......] 37% | 127.0.0.1:25002 planned [..........] 0%}. A line is printed only when
 * something other than the clock changed, so a quiet phase stays one line.
 */
final class ProgressPrinter {
  private static final int BAR = 10;

  private final PrintStream out;
  private final long startNanos;
  private String last;

  ProgressPrinter(PrintStream out, long startNanos) {
    this.out = out;
    this.startNanos = startNanos;
  }

  /** Prints the snapshot's line when it differs from the last one printed. */
  void update(JsonNode snapshot) {
    String line = render(snapshot);
    if (!line.equals(last)) {
      last = line;
      out.printf(Locale.ROOT, "[%5.1fs] %s%n", (System.nanoTime() - startNanos) / 1e9, line);
    }
  }

  static String render(JsonNode snapshot) {
    StringBuilder line =
        new StringBuilder(
            String.format(Locale.ROOT, "job %-11s", snapshot.path("status").asText("?")));
    long jobTotal = snapshot.path("total_size_bytes").asLong(0);
    for (JsonNode p : snapshot.path("placements")) {
      long total = p.path("total_bytes").asLong(jobTotal);
      long staged = p.path("staged_bytes").asLong(0);
      int percent = total <= 0 ? 0 : (int) Math.min(100, staged * 100 / total);
      line.append(
          String.format(
              Locale.ROOT,
              " | %s %-9s %s %3d%%",
              p.path("node_id").asText("?"),
              p.path("state").asText("?"),
              bar(percent),
              percent));
    }
    return line.toString();
  }

  private static String bar(int percent) {
    int filled = percent * BAR / 100;
    return "[" + "#".repeat(filled) + ".".repeat(BAR - filled) + "]";
  }
}
