package io.mooncake.dist.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The master and clients the demo started, as separate OS processes through the real launchers in
 * {@code bin/}, each writing to {@code <logDir>/<name>.log}. {@link #close()} stops every one of
 * them: politely first (their shutdown hooks release leases and connections), then forcibly.
 */
final class ClusterProcesses implements AutoCloseable {
  private static final Duration GRACE = Duration.ofSeconds(10);

  /** A readiness check that may throw while the thing it checks is still starting. */
  @FunctionalInterface
  interface Check {
    boolean ready() throws Exception;
  }

  private final Path root;
  private final Path logDir;
  private final Map<String, Process> started = new LinkedHashMap<>();
  private boolean closed;

  ClusterProcesses(Path root, Path logDir) {
    this.root = root;
    this.logDir = logDir;
  }

  Path log(String name) {
    return logDir.resolve(name + ".log");
  }

  /**
   * Starts {@code bin/<launcher> args...} as {@code name}; refused once {@link #close()} has begun.
   */
  synchronized void start(String name, String launcher, List<String> args)
      throws IOException, DemoFailure {
    if (closed) {
      throw new DemoFailure(1, "stopping; not starting " + name);
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(root.resolve("bin").resolve(launcher).toString());
    cmd.addAll(args);
    Files.createDirectories(logDir);
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(log(name).toFile())
            .start();
    started.put(name, p);
  }

  /**
   * Fails naming the log of the first process that has exited: nothing started should stop on its
   * own.
   */
  synchronized void requireAllRunning() throws DemoFailure {
    for (Map.Entry<String, Process> e : started.entrySet()) {
      if (!e.getValue().isAlive()) {
        throw new DemoFailure(
            1,
            e.getKey()
                + " exited with code "
                + e.getValue().exitValue()
                + "; see "
                + log(e.getKey())
                + tail(e.getKey()));
      }
    }
  }

  /**
   * Waits until {@code check} holds, every 100 ms; fails pointing at {@code logName}'s log when the
   * timeout passes (a hang guard: startup takes seconds) or when any started process exits.
   */
  void await(String what, String logName, Duration timeout, Check check)
      throws DemoFailure, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception lastProblem = null;
    while (System.nanoTime() < deadline) {
      requireAllRunning();
      try {
        if (check.ready()) {
          return;
        }
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        lastProblem = e; // not up yet
      }
      Thread.sleep(100);
    }
    throw new DemoFailure(
        1,
        "timed out after "
            + timeout.toSeconds()
            + " s waiting for "
            + what
            + (lastProblem == null ? "" : " (last error: " + lastProblem + ")")
            + "; see "
            + log(logName)
            + tail(logName));
  }

  /** The last lines of a log, indented, so the failure message alone often says enough. */
  String tail(String name) {
    try {
      List<String> lines = Files.readAllLines(log(name));
      List<String> last = lines.subList(Math.max(0, lines.size() - 12), lines.size());
      return last.isEmpty() ? "" : "\n  | " + last.stream().collect(Collectors.joining("\n  | "));
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** Stops every process: SIGTERM to all, up to 10 s for them to exit, then SIGKILL. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    List<ProcessHandle> handles = new ArrayList<>();
    for (Process p : started.values()) {
      // The launchers exec java, so the process is the JVM itself; descendants are a safety net.
      p.descendants().forEach(handles::add);
      handles.add(p.toHandle());
    }
    handles.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + GRACE.toNanos();
    for (ProcessHandle h : handles) {
      long left = deadline - System.nanoTime();
      try {
        h.onExit().get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (Exception e) {
        // still running after the grace period: handled below
      }
    }
    for (ProcessHandle h : handles) {
      if (h.isAlive()) {
        h.destroyForcibly();
        try {
          h.onExit().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
          // SIGKILL cannot be refused; a zombie would be reaped by init once we exit
        }
      }
    }
  }
}
