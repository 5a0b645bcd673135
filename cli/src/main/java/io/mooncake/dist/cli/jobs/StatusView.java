package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.format.ByteSizes;
import io.mooncake.dist.cli.format.ProgressBar;
import io.mooncake.dist.cli.format.Table;
import io.mooncake.dist.cli.master.JobView;
import io.mooncake.dist.cli.master.PlacementView;
import java.util.ArrayList;
import java.util.List;

/** What {@code mooncake status} prints: the job's summary lines, then its placements as a table. */
public final class StatusView {
  private StatusView() {}

  public static List<String> render(JobView job) {
    List<String> lines = new ArrayList<>();
    lines.add("job         " + job.jobId());
    lines.add("status      " + job.status());
    if (job.model() != null) {
      lines.add("model       " + job.model() + ", " + ByteSizes.format(job.totalSizeBytes()));
    }
    if (job.seedNodeId() != null) {
      lines.add("seed        " + job.seedNodeId());
    }
    lines.add("last_error  " + orDash(job.lastError()));
    lines.add("");
    lines.addAll(placements(job.placements()).lines());
    return lines;
  }

  /**
   * NODE, ROLE, STATE, STAGED / TOTAL, PCT, VERIFIED, LAST_ERROR; sizes and percentages
   * right-aligned.
   */
  static Table placements(List<PlacementView> placements) {
    Table table =
        Table.withHeaders(
                "NODE", "ROLE", "STATE", "STAGED / TOTAL", "PCT", "VERIFIED", "LAST_ERROR")
            .alignRight(3, 4);
    for (PlacementView p : placements) {
      table.row(
          p.nodeId(),
          orDash(p.role()),
          p.state(),
          ByteSizes.format(p.stagedBytes()) + " / " + ByteSizes.format(p.totalBytes()),
          ProgressBar.percent(p.stagedBytes(), p.totalBytes()),
          p.checksumVerified() ? "yes" : "no",
          orDash(p.lastError()));
    }
    return table;
  }

  static String orDash(String s) {
    return s == null || s.isEmpty() ? "-" : s;
  }
}
