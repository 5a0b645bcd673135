package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The real launchers in {@code bin/}, started as separate OS processes with their output in files.
 */
public final class Processes implements AutoCloseable {
  private final Path logDir;
  private final List<Process> started = new ArrayList<>();
  private final java.util.Map<String, Process> byName = new java.util.HashMap<>();

  public Processes(Path logDir) {
    this.logDir = logDir;
  }

  public static Path root() {
    return Path.of(System.getProperty("mooncake.root", "..")).toAbsolutePath().normalize();
  }

  /** A finished run of a launcher: exit code and everything it printed. */
  public record Run(int exitCode, String output) {}

  /** Runs a launcher to completion (for --help and bad-flag checks). */
  public static Run run(String launcher, String... args) {
    List<String> cmd = new ArrayList<>(List.of(root().resolve("bin").resolve(launcher).toString()));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      return new Run(p.exitValue(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Starts a launcher in the background; its output goes to {@code <logDir>/<name>.log}. */
  public Process start(String name, String launcher, String... args) {
    List<String> cmd = new ArrayList<>(List.of(root().resolve("bin").resolve(launcher).toString()));
    cmd.addAll(List.of(args));
    try {
      Files.createDirectories(logDir);
      Process p =
          new ProcessBuilder(cmd)
              .redirectErrorStream(true)
              .redirectOutput(logDir.resolve(name + ".log").toFile())
              .start();
      started.add(p);
      byName.put(name, p);
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SIGKILL: no shutdown hook runs, as when a machine or the OOM killer takes the process. */
  public void kill(String name) throws InterruptedException {
    Process p = byName.get(name);
    p.destroyForcibly();
    p.waitFor(30, TimeUnit.SECONDS);
  }

  public String log(String name) {
    try {
      return Files.readString(logDir.resolve(name + ".log"));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** Waits (a hang guard, not a performance limit) until {@code ready} holds. */
  public static void await(String what, Duration timeout, BooleanSupplier ready) {
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      try {
        if (ready.getAsBoolean()) {
          return;
        }
      } catch (RuntimeException ignored) {
        // not up yet
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new AssertionError("timed out waiting for " + what);
  }

  @Override
  public void close() {
    // Each process's exit (if it already ended) and the tail of its log, kept for
    // ProcessLogsOnFailure: the log directory is usually a @TempDir, gone once the test fails.
    for (var e : byName.entrySet()) {
      Process p = e.getValue();
      String status = p.isAlive() ? "running at the end" : "exited with " + p.exitValue();
      ProcessLogsOnFailure.keep(
          e.getKey() + " (" + status + ")", logDir.resolve(e.getKey() + ".log"));
    }
    for (Process p : started) {
      p.destroy();
    }
    for (Process p : started) {
      try {
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
