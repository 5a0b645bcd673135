package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.master.JobView;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.MasterReply;

/**
 * {@code GET /jobs?job_id=}, shared by {@code status} and {@code watch}: a 404 or other 4xx ends
 * the command with 3.
 */
final class JobLookup {
  private JobLookup() {}

  static MasterReply fetch(MasterClient master, String jobId) {
    MasterReply reply = master.get(MasterClient.JOBS, MasterClient.query("job_id", jobId));
    if (reply.status() == 404) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED, "no job " + jobId + ": " + reply.errorMessage());
    }
    if (!reply.ok()) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          "job " + jobId + ": HTTP " + reply.status() + ": " + reply.errorMessage());
    }
    return reply;
  }

  static JobView view(MasterClient master, String jobId) {
    return JobView.of(fetch(master, jobId).body());
  }
}
