package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.MasterReply;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake cancel}: asks the master to cancel a job. */
@Command(
    name = "cancel",
    description = "Cancel a job: POST /api/v1/model-distribution/jobs/cancel?job_id=<job_id>.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the master accepted the cancel (200)",
      "2:usage error",
      "3:no such job (404), or the request was rejected",
      "4:master unreachable or answering 5xx",
      "5:conflict (409): the job can no longer be canceled, e.g. it already finished; the master's message is printed"
    })
public final class CancelCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "<job_id>", description = "The job's id.")
  String jobId;

  @Override
  public Integer call() {
    MasterReply reply =
        root.masterClient(spec).post(MasterClient.CANCEL, MasterClient.query("job_id", jobId));
    switch (reply.status()) {
      case 200, 202 -> {
        PrintWriter out = spec.commandLine().getOut();
        String status = reply.body().path("status").asText("");
        out.println(
            "job " + jobId + " cancel accepted" + (status.isEmpty() ? "" : "; status " + status));
        out.flush();
        return ExitCode.OK;
      }
      case 404 ->
          throw new CliException(
              ExitCode.NOT_FOUND_OR_REJECTED, "no job " + jobId + ": " + reply.errorMessage());
      case 409 ->
          throw new CliException(
              ExitCode.CONFLICT, "job " + jobId + " not canceled: " + reply.errorMessage());
      default ->
          throw new CliException(
              ExitCode.NOT_FOUND_OR_REJECTED,
              "cancel of job "
                  + jobId
                  + " rejected (HTTP "
                  + reply.status()
                  + "): "
                  + reply.errorMessage());
    }
  }
}
