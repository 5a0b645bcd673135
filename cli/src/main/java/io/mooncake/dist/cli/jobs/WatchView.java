package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.format.ByteSizes;
import io.mooncake.dist.cli.format.ProgressBar;
import io.mooncake.dist.cli.format.Table;
import io.mooncake.dist.cli.format.Throughput;
import io.mooncake.dist.cli.master.JobView;
import io.mooncake.dist.cli.master.PlacementView;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What {@code mooncake watch} shows after each poll, from the snapshots seen so far. Pure: the
 * caller passes the poll time, so rates and ETAs are tested without a clock.
 *
 * <p>A {@link Frame} carries both forms: the screen to redraw on a terminal (a bar, rate and ETA
 * per node) and, for logs and pipes, one line per thing that changed since the previous poll.
 *
 * <p>The rate is the bytes staged over the last {@link #RATE_WINDOW_NANOS} of polls (from the
 * newest sample at least that old, or the oldest there is), not over the last interval alone: a
 * placement's staged bytes grow one whole object at a time, so a one-poll rate jumps between zero
 * and a burst. The master's status page computes its rate and ETA the same way.
 */
public final class WatchView {
  static final int BAR_WIDTH = 30;
  static final long RATE_WINDOW_NANOS = 10_000_000_000L;
  private static final Set<String> PLACEMENT_DONE = Set.of("staged", "failed");

  private final long startNanos;
  private final Map<String, Sample> previous = new HashMap<>();
  private final Map<String, Deque<Sample>> windows = new HashMap<>();
  private String previousStatus;

  /** The redraw screen and the change lines for one poll. */
  public record Frame(List<String> screen, List<String> changes) {}

  private record Sample(long stagedBytes, long atNanos, String state, String lastError) {}

  /** A view whose elapsed times count from {@code startNanos}. */
  public WatchView(long startNanos) {
    this.startNanos = startNanos;
  }

  /** Takes in the snapshot polled at {@code nowNanos}. */
  public Frame update(JobView job, long nowNanos) {
    String stamp = String.format(Locale.ROOT, "[%6.1fs]", (nowNanos - startNanos) / 1e9);
    List<String> changes = new ArrayList<>();
    if (!job.status().equals(previousStatus)) {
      changes.add(
          stamp
              + " job "
              + job.jobId()
              + " "
              + job.status()
              + (job.lastError() == null ? "" : ": " + job.lastError()));
      previousStatus = job.status();
    }
    Table table =
        Table.withHeaders(
                "NODE",
                "ROLE",
                "STATE",
                "PROGRESS",
                "PCT",
                "STAGED / TOTAL",
                "RATE",
                "ETA",
                "LAST_ERROR")
            .alignRight(4, 5, 6, 7);
    for (PlacementView p : job.placements()) {
      Sample before = previous.get(p.nodeId());
      String staged = ByteSizes.format(p.stagedBytes()) + " / " + ByteSizes.format(p.totalBytes());
      String pct = ProgressBar.percent(p.stagedBytes(), p.totalBytes());
      // A rate needs two samples, and a finished placement has none worth showing.
      boolean moving = before != null && !PLACEMENT_DONE.contains(p.state());
      String rate = "-";
      String eta = "-";
      Deque<Sample> window = windows.computeIfAbsent(p.nodeId(), k -> new ArrayDeque<>());
      if (moving) {
        Sample from = window.peekFirst();
        double bps =
            Throughput.bytesPerSecond(
                from.stagedBytes(), p.stagedBytes(), nowNanos - from.atNanos());
        rate = Throughput.formatRate(bps);
        eta = Throughput.formatEta(Throughput.eta(p.totalBytes() - p.stagedBytes(), bps));
      }
      table.row(
          p.nodeId(),
          StatusView.orDash(p.role()),
          p.state(),
          ProgressBar.render(p.stagedBytes(), p.totalBytes(), BAR_WIDTH),
          pct,
          staged,
          rate,
          eta,
          StatusView.orDash(p.lastError()));
      if (before == null
          || before.stagedBytes() != p.stagedBytes()
          || !before.state().equals(p.state())
          || !Objects.equals(before.lastError(), p.lastError())) {
        changes.add(
            stamp
                + " "
                + p.nodeId()
                + " "
                + p.state()
                + "  "
                + pct
                + "  "
                + staged
                + (moving ? "  " + rate + "  ETA " + eta : "")
                + (p.lastError() == null ? "" : "  " + p.lastError()));
      }
      Sample now = new Sample(p.stagedBytes(), nowNanos, p.state(), p.lastError());
      previous.put(p.nodeId(), now);
      if (!window.isEmpty() && p.stagedBytes() < window.peekLast().stagedBytes()) {
        window.clear(); // a retried copy starting over: its rate starts over too
      }
      window.addLast(now);
      while (window.size() > 2 && nowNanos - secondOf(window).atNanos() >= RATE_WINDOW_NANOS) {
        window.removeFirst();
      }
    }
    List<String> screen = new ArrayList<>();
    screen.add(
        "job "
            + job.jobId()
            + "  "
            + job.status()
            + "  "
            + stamp.substring(1, stamp.length() - 1).strip()
            + (job.lastError() == null ? "" : "  " + job.lastError()));
    screen.addAll(table.lines());
    return new Frame(List.copyOf(screen), List.copyOf(changes));
  }

  private static Sample secondOf(Deque<Sample> window) {
    var it = window.iterator();
    it.next();
    return it.next();
  }

  /**
   * The closing lines once the job is terminal: the outcome and, unless completed, every error
   * known.
   */
  public static List<String> outcome(JobView job, long elapsedNanos) {
    List<String> lines = new ArrayList<>();
    String after = String.format(Locale.ROOT, " after %.1fs", elapsedNanos / 1e9);
    if (job.completed()) {
      long staged = job.placements().stream().filter(p -> p.state().equals("staged")).count();
      lines.add(
          "job "
              + job.jobId()
              + " completed: "
              + staged
              + "/"
              + job.placements().size()
              + " placements staged"
              + after);
      return lines;
    }
    lines.add(
        "job "
            + job.jobId()
            + " "
            + job.status()
            + after
            + ": "
            + StatusView.orDash(job.lastError()));
    for (PlacementView p : job.placements()) {
      if (p.lastError() != null || !p.state().equals("staged")) {
        lines.add(
            "  "
                + p.nodeId()
                + " ("
                + StatusView.orDash(p.role())
                + ") "
                + p.state()
                + ": "
                + StatusView.orDash(p.lastError()));
      }
    }
    return lines;
  }
}
