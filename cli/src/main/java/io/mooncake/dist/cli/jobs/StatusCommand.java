package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.Json;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.master.JobView;
import io.mooncake.dist.cli.master.MasterReply;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake status}: one look at a job and its placements. */
@Command(
    name = "status",
    sortOptions = false,
    description =
        "Show a job's status, last_error and a table of its placements "
            + "(node, role, state, staged / total, percent, checksum_verified, last_error).",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the job exists (whatever its state)",
      "2:usage error",
      "3:no such job (404), or the request was rejected",
      "4:master unreachable or answering 5xx"
    })
public final class StatusCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "<job_id>", description = "The job's id.")
  String jobId;

  @Option(names = "--json", description = "Print the master's snapshot as JSON.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    MasterReply reply = JobLookup.fetch(root.masterClient(spec), jobId);
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Json.PRETTY.writeValueAsString(reply.body()));
    } else {
      StatusView.render(JobView.of(reply.body())).forEach(out::println);
    }
    out.flush();
    return ExitCode.OK;
  }
}
