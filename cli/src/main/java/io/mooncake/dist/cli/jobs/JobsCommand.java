package io.mooncake.dist.cli.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.format.ByteSizes;
import io.mooncake.dist.cli.format.Table;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.MasterReply;
import io.mooncake.dist.cli.master.Texts;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code mooncake jobs}: lists jobs, newest first, following the master's pages up to {@code
 * --limit}.
 */
@Command(
    name = "jobs",
    sortOptions = false,
    description =
        "List jobs, newest first (GET /api/v1/model-distribution/jobs): id, status, model, seed, size, "
            + "placements staged / targets, created_at.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:listed (possibly none)",
      "2:usage error",
      "3:the request was rejected (4xx), e.g. an unknown --state",
      "4:master unreachable or answering 5xx"
    })
public final class JobsCommand implements Callable<Integer> {
  /** The master's largest page ({@code limit} 1..500); longer lists are fetched page by page. */
  static final int MAX_PAGE = 500;

  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Option(
      names = "--state",
      paramLabel = "<state>",
      description =
          "Only jobs in this state: planned, seeding, replicating, completed, failed, canceled.")
  String state;

  @Option(
      names = "--limit",
      paramLabel = "<n>",
      description = "At most this many jobs (default: the master's first page, 50).")
  Integer limit;

  @Override
  public Integer call() {
    if (limit != null && limit <= 0) {
      throw new ParameterException(
          spec.commandLine(), "--limit must be greater than 0, got " + limit);
    }
    MasterClient master = root.masterClient(spec);
    Table table =
        Table.withHeaders("JOB_ID", "STATUS", "MODEL", "SEED", "SIZE", "STAGED", "CREATED_AT")
            .alignRight(4, 5);
    String after = null;
    do {
      String pageSize =
          limit == null ? null : Integer.toString(Math.min(MAX_PAGE, limit - table.size()));
      MasterReply reply =
          master.get(
              MasterClient.JOBS,
              MasterClient.query("state", state, "limit", pageSize, "after", after));
      if (!reply.ok()) {
        throw new CliException(
            ExitCode.NOT_FOUND_OR_REJECTED,
            "listing jobs rejected (HTTP " + reply.status() + "): " + reply.errorMessage());
      }
      for (JsonNode job : reply.body().path("jobs")) {
        if (limit == null || table.size() < limit) {
          table.row(row(job));
        }
      }
      after = Texts.orNull(reply.body().path("next"));
    } while (after != null && limit != null && table.size() < limit);

    PrintWriter out = spec.commandLine().getOut();
    table.lines().forEach(out::println);
    out.flush();
    if (after != null && limit == null) {
      spec.commandLine()
          .getErr()
          .println("mooncake: more jobs exist; pass --limit <n> to see more");
      spec.commandLine().getErr().flush();
    }
    return ExitCode.OK;
  }

  private static Object[] row(JsonNode job) {
    String staged =
        job.has("placements_staged") && job.has("target_count")
            ? job.path("placements_staged").asInt() + "/" + job.path("target_count").asInt()
            : "-";
    return new Object[] {
      job.path("job_id").asText("?"),
      job.path("status").asText("?"),
      StatusView.orDash(Texts.model(job.path("model"))),
      StatusView.orDash(Texts.orNull(job.path("seed_node_id"))),
      job.has("total_size_bytes") ? ByteSizes.format(job.path("total_size_bytes").asLong()) : "-",
      staged,
      StatusView.orDash(Texts.orNull(job.path("created_at")))
    };
  }
}
