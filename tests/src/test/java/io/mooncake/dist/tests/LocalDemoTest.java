package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/mooncake_demo} as a newcomer runs it: a real process that starts its own master and
 * two clients, distributes a generated model, verifies the bytes, and leaves nothing running.
 */
class LocalDemoTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void theDemoDistributesAModelToTwoNodesVerifiesTheBytesAndStopsEverything() throws Exception {
    Processes.Run demo =
        demo(Duration.ofMinutes(3), "--db-url", pg.url(), "--size-mib", "8", "--chunk-mib", "1");

    assertEquals(0, demo.exitCode(), demo.output());
    assertTrue(demo.output().contains("job completed"), demo.output());
    assertTrue(demo.output().contains("bytes identical on both nodes"), demo.output());
    assertTrue(
        demo.output().contains("\"status\" : \"completed\""),
        "final snapshot printed:\n" + demo.output());
    // Each placement's own time, not only the job's: the seed's download and the follower's copy.
    assertTrue(
        Pattern.compile("(?m)^seed\\s+\\S+ read the source file.*(MiB/s|too fast to time)$")
            .matcher(demo.output())
            .find(),
        demo.output());
    assertTrue(
        Pattern.compile("(?m)^follower\\s+\\S+ copied it from the seed.*(MiB/s|too fast to time)$")
            .matcher(demo.output())
            .find(),
        demo.output());

    Matcher workDir = Pattern.compile("(?m)^work dir\\s+(\\S+)$").matcher(demo.output());
    assertTrue(workDir.find(), demo.output());
    assertFalse(
        Files.exists(Path.of(workDir.group(1))),
        "work dir removed after a success:\n" + demo.output());

    // The master's command line names the database, the clients' also the work dir; both are unique
    // to this run, so any survivor is one the demo started.
    String database = pg.url().substring(pg.url().lastIndexOf('/') + 1).replaceFirst("\\?.*", "");
    List<String> survivors = new ArrayList<>();
    ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .forEach(
            p ->
                p.info()
                    .commandLine()
                    .filter(cmd -> cmd.contains(database) || cmd.contains(workDir.group(1)))
                    .ifPresent(cmd -> survivors.add(p.pid() + " " + cmd)));
    assertEquals(List.of(), survivors, "processes left running by the demo");
  }

  @Test
  void helpExitsZeroAndNamesTheFlags() throws Exception {
    Processes.Run help = demo(Duration.ofMinutes(1), "--help");
    assertEquals(0, help.exitCode(), help.output());
    for (String flag : List.of("--db-url", "--size-mib", "--chunk-mib", "--http-port", "--keep")) {
      assertTrue(help.output().contains(flag), help.output());
    }
  }

  /**
   * Runs {@code bin/mooncake_demo}; past {@code timeout} (a hang guard) it is stopped like Ctrl-C
   * would.
   */
  private Processes.Run demo(Duration timeout, String... args)
      throws IOException, InterruptedException {
    List<String> cmd =
        new ArrayList<>(List.of(Processes.root().resolve("bin/mooncake_demo").toString()));
    cmd.addAll(List.of(args));
    Path log = Files.createTempFile(tmp, "demo-", ".log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      p.destroy(); // SIGTERM: the demo's shutdown hook stops its master and clients
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      fail("mooncake_demo did not finish within " + timeout + ":\n" + Files.readString(log));
    }
    return new Processes.Run(p.exitValue(), Files.readString(log));
  }
}
