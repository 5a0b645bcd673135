package io.mooncake.dist.demo;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bin/mooncake_demo}: a real local model distribution in one command. Flags and exit codes
 * are in {@code --help}; the steps are in {@link DemoRun}. This class only parses flags, installs
 * the shutdown hook that stops everything on Ctrl-C, and turns failures into one message and an
 * exit code.
 */
@Command(
    name = "mooncake_demo",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    version = "mooncake_demo 0.1.0-SNAPSHOT",
    description = {
      "A real local model distribution: starts bin/mooncake_master and two bin/mooncake_client nodes as "
          + "separate processes, generates a random model file, submits a distribution job over HTTP, prints "
          + "progress until it completes, checks the staged bytes on both nodes and stops everything again.",
      "",
      "Database: --db-url or $MOONCAKE_DB_URL as given; else PostgreSQL on 127.0.0.1:5432 (user postgres), "
          + "database mooncake_demo, recreated empty each run; else a throwaway Testcontainers PostgreSQL when "
          + "Docker is available.",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:the job completed and both nodes hold the source's bytes",
      "1:the distribution, a process or the verification failed (logs are kept)",
      "2:bad flags, no database to run against, or not enough disk space"
    })
public final class LocalDemo implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--db-url",
      defaultValue = "${env:MOONCAKE_DB_URL}",
      paramLabel = "<jdbc-url>",
      description =
          "PostgreSQL JDBC URL to use as-is (default: $MOONCAKE_DB_URL, else the local server as above).")
  String dbUrl;

  @Option(
      names = "--size-mib",
      defaultValue = "256",
      paramLabel = "<MiB>",
      description = "Size of the generated model file (default: ${DEFAULT-VALUE}).")
  int sizeMib;

  @Option(
      names = "--chunk-mib",
      defaultValue = "16",
      paramLabel = "<MiB>",
      description = "Chunk (object) size in the manifest (default: ${DEFAULT-VALUE}).")
  int chunkMib;

  @Option(
      names = "--http-port",
      paramLabel = "<port>",
      description = "The master's HTTP port (default: 8080 when free, else any free port).")
  Integer httpPort;

  @Option(
      names = "--keep",
      description = "Keep the work dir (model, staged copies, logs) after a success too.")
  boolean keep;

  public static void main(String[] args) {
    System.exit(new CommandLine(new LocalDemo()).execute(args));
  }

  @Override
  public Integer call() {
    if (sizeMib < 1 || sizeMib > 1 << 20) {
      throw new ParameterException(
          spec.commandLine(), "--size-mib must be 1-" + (1 << 20) + ", got " + sizeMib);
    }
    if (chunkMib < 1 || chunkMib > 1024) {
      throw new ParameterException(
          spec.commandLine(), "--chunk-mib must be 1-1024, got " + chunkMib);
    }
    if (httpPort != null && (httpPort < 1 || httpPort > 65535)) {
      throw new ParameterException(
          spec.commandLine(), "--http-port must be 1-65535, got " + httpPort);
    }
    Path root = Path.of(System.getProperty("mooncake.root", ".")).toAbsolutePath().normalize();
    DemoRun run =
        new DemoRun(
            new DemoRun.Settings(
                root, dbUrl, (long) sizeMib << 20, (long) chunkMib << 20, httpPort, keep),
            System.out);
    Thread hook = new Thread(run::interrupt, "mooncake-demo-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      run.run();
      return 0;
    } catch (DemoFailure e) {
      report(run, e.exitCode() == 2 ? e.getMessage() : "FAILED: " + e.getMessage());
      return e.exitCode();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      report(run, "FAILED: interrupted");
      return 1;
    } catch (Exception e) {
      report(run, "FAILED: " + e);
      return 1;
    } finally {
      run.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // Ctrl-C arrived: the hook has run or is running, and close() makes that harmless.
      }
    }
  }

  /** One failure message, unless Ctrl-C caused it: then the hook already said what happens. */
  private static void report(DemoRun run, String message) {
    if (!run.interrupted()) {
      System.out.flush();
      System.err.println("mooncake_demo: " + message);
    }
  }
}
