package io.mooncake.dist.scheduler.store;

import java.util.List;

/**
 * A page of jobs, newest first, and the cursor of the next page ({@code null} on the last one).
 * Serialized as is: {@code {"jobs": [...], "next": "..."}}.
 */
public record JobPage(List<JobSummary> jobs, String next) {
  public JobPage {
    jobs = List.copyOf(jobs);
  }
}
