package io.mooncake.dist.cli.jobs;

import io.mooncake.dist.cli.DurationConverter;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.format.Durations;
import io.mooncake.dist.cli.master.JobView;
import io.mooncake.dist.cli.master.MasterClient;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake watch}: polls a job until it is terminal, showing per-node progress. */
@Command(
    name = "watch",
    sortOptions = false,
    description = {
      "Poll a job until it completes, fails or is canceled, showing per node a progress bar, the rate over "
          + "the last 10 s of polls and an ETA at that rate.",
      "On a terminal the table is redrawn in place; otherwise one line is printed per change."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the job completed",
      "1:the job failed or was canceled (its and its placements' last_error are printed)",
      "2:usage error",
      "3:no such job (404), or the request was rejected",
      "4:master unreachable or answering 5xx"
    })
public final class WatchCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  /**
   * Set by bin/mooncake from {@code [ -t 1 ]}: Java 21 cannot tell a terminal from a pipe by
   * itself.
   */
  static final String TTY_PROPERTY = "mooncake.stdout.tty";

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "<job_id>", description = "The job's id.")
  String jobId;

  @Option(
      names = "--interval",
      defaultValue = "1s",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Poll interval, e.g. 500ms, 1s, 2m (default: ${DEFAULT-VALUE}).")
  Duration interval;

  @Override
  public Integer call() throws InterruptedException {
    if (interval.isZero() || interval.isNegative()) {
      throw new ParameterException(
          spec.commandLine(),
          "--interval must be greater than 0, got " + Durations.format(interval));
    }
    MasterClient master = root.masterClient(spec);
    PrintWriter out = spec.commandLine().getOut();
    Screen screen = interactive() ? Screen.redrawing(out) : Screen.lines(out);
    long start = System.nanoTime();
    WatchView view = new WatchView(start);
    while (true) {
      JobView job = JobLookup.view(master, jobId);
      long now = System.nanoTime();
      screen.show(view.update(job, now));
      if (job.terminal()) {
        WatchView.outcome(job, now - start).forEach(out::println);
        out.flush();
        return job.completed() ? ExitCode.OK : ExitCode.FAILED;
      }
      Thread.sleep(interval);
    }
  }

  private static boolean interactive() {
    return Boolean.getBoolean(TTY_PROPERTY) && !"dumb".equals(System.getenv("TERM"));
  }
}
