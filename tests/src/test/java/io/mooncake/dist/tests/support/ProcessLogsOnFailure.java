package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * When a test fails, prints the end of the log of every launcher process it started, and how each
 * ended: an end-to-end failure on CI then says which process died or what it last did, instead of
 * only the snapshot the test saw. Registered for every test by autodetection ({@code
 * junit-platform.properties}).
 */
public final class ProcessLogsOnFailure implements TestWatcher {
  private static final int TAIL_LINES = 40;
  private static final List<String> kept = new ArrayList<>();

  /** Called by {@link Processes#close()} for each process, before the log directory goes away. */
  static synchronized void keep(String what, Path log) {
    List<String> lines;
    try {
      lines = Files.readAllLines(log);
    } catch (IOException e) {
      lines = List.of("(no log: " + e.getMessage() + ")");
    }
    List<String> tail = lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size());
    kept.add(
        "----- " + what + ", last " + tail.size() + " lines -----\n" + String.join("\n", tail));
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    synchronized (ProcessLogsOnFailure.class) {
      if (!kept.isEmpty()) {
        System.out.println(
            "===== processes of the failed test "
                + context.getDisplayName()
                + " =====\n"
                + String.join("\n", kept));
      }
      kept.clear();
    }
  }

  @Override
  public void testSuccessful(ExtensionContext context) {
    forget();
  }

  @Override
  public void testAborted(ExtensionContext context, Throwable cause) {
    forget();
  }

  @Override
  public void testDisabled(ExtensionContext context, Optional<String> reason) {
    forget();
  }

  private static synchronized void forget() {
    kept.clear();
  }
}
