package io.mooncake.dist.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.cli.support.CliRun;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class MooncakeCliTest {

  /** Every command path, e.g. [manifest, build], found by walking picocli's model. */
  private static List<List<String>> commandPaths(CommandLine cmd, List<String> prefix) {
    List<List<String>> paths = new ArrayList<>();
    cmd.getSubcommands()
        .forEach(
            (name, sub) -> {
              List<String> path = new ArrayList<>(prefix);
              path.add(name);
              paths.add(path);
              paths.addAll(commandPaths(sub, path));
            });
    return paths;
  }

  @Test
  void everyCommandAnswersHelpWithItsUsageAndExitsZero() {
    List<List<String>> paths = commandPaths(MooncakeCli.commandLine(), List.of());
    assertTrue(paths.size() >= 9, paths.toString());
    for (List<String> path : paths) {
      List<String> args = new ArrayList<>(path);
      args.add("--help");
      CliRun run = CliRun.of(args.toArray(String[]::new));
      assertEquals(0, run.exitCode(), path + "\n" + run.transcript());
      assertTrue(run.out().contains("Usage: mooncake " + String.join(" ", path)), run.transcript());
    }
  }

  @Test
  void theRootHelpListsEveryExitCode() {
    CliRun run = CliRun.of("--help");
    assertEquals(0, run.exitCode());
    for (String code : List.of("0", "1", "2", "3", "4", "5")) {
      assertTrue(run.out().contains("\n  " + code + "   "), run.transcript());
    }
  }

  @Test
  void noSubcommandIsAUsageErrorNamingTheChoices() {
    CliRun run = CliRun.of();
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("missing subcommand") && run.err().contains("watch"), run.transcript());
    assertEquals(2, CliRun.of("manifest").exitCode());
  }

  @Test
  void anUnknownFlagIsAUsageErrorPointingAtTheCommandsHelp() {
    CliRun run = CliRun.of("status", "j", "--bogus");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("--bogus") && run.err().contains("mooncake status --help"),
        run.transcript());
  }
}
