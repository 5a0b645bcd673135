package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's {@code chromium} run headless as one-shot commands: dump the DOM after the page's
 * scripts ran, or take a screenshot. Virtual time lets the page's 2 s polling and its fetches
 * settle without the test waiting in real time.
 *
 * <p>When no browser is installed it installs Debian's package; only when that is impossible is the
 * test skipped, and not even then when {@code MOONCAKE_REQUIRE_BROWSER} is set (CI sets it so a
 * machine without a browser cannot pass by skipping).
 */
final class HeadlessChromium {
  private static final List<String> NAMES =
      List.of("chromium", "chromium-browser", "google-chrome", "google-chrome-stable");
  private static final long RUN_SECONDS = 120;

  private final Path binary;
  private final Path workDir;

  private HeadlessChromium(Path binary, Path workDir) {
    this.binary = binary;
    this.workDir = workDir;
  }

  /** The installed browser, installing it if needed; skips or fails the test when there is none. */
  static HeadlessChromium locateOrInstall(Path workDir) {
    Optional<Path> found = find();
    String installLog = "";
    if (found.isEmpty()) {
      installLog = install(workDir);
      found = find();
    }
    if (found.isPresent()) {
      return new HeadlessChromium(found.get(), workDir);
    }
    String why =
        "no Chromium on PATH ("
            + String.join(", ", NAMES)
            + ") and installing Debian's chromium failed:\n"
            + installLog;
    if (System.getenv("MOONCAKE_REQUIRE_BROWSER") != null) {
      return fail(why + "\nMOONCAKE_REQUIRE_BROWSER is set, so this is a failure, not a skip");
    }
    Assumptions.abort("status page browser test skipped: " + why);
    return null;
  }

  private static Optional<Path> find() {
    for (String dir :
        System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
      for (String name : NAMES) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  /**
   * {@code apt-get install chromium} (refreshing the package lists if the first try fails); returns
   * its output.
   */
  private static String install(Path workDir) {
    StringBuilder log = new StringBuilder();
    List<String> sudo =
        "root".equals(System.getProperty("user.name")) ? List.of() : List.of("sudo", "-n");
    for (List<String> step :
        List.of(
            List.of("apt-get", "install", "-y", "-q", "chromium"),
            List.of("apt-get", "update", "-q"),
            List.of("apt-get", "install", "-y", "-q", "chromium"))) {
      List<String> cmd = new ArrayList<>(sudo);
      cmd.addAll(step);
      Run r = run(cmd, workDir.resolve("apt.log"), 900);
      log.append("$ ")
          .append(String.join(" ", cmd))
          .append(" -> exit ")
          .append(r.exit())
          .append('\n')
          .append(r.output());
      if (r.exit() == 0 && step.contains("install")) {
        break;
      }
    }
    return log.toString();
  }

  /** The DOM after the page ran for {@code virtualMillis} of virtual time. */
  String dumpDom(String url, int virtualMillis) {
    Run r =
        run(
            command("dom", "--virtual-time-budget=" + virtualMillis, "--dump-dom", url),
            workDir.resolve("dump-dom.out"),
            RUN_SECONDS);
    if (r.exit() != 0) {
      fail("chromium --dump-dom exited " + r.exit() + ":\n" + r.output());
    }
    return r.output();
  }

  /** A PNG of the page after {@code virtualMillis} of virtual time, in a 1280x900 window. */
  void screenshot(String url, Path png, int virtualMillis) {
    Run r =
        run(
            command(
                "shot",
                "--virtual-time-budget=" + virtualMillis,
                "--window-size=1280,900",
                "--hide-scrollbars",
                "--screenshot=" + png.toAbsolutePath(),
                url),
            workDir.resolve("screenshot.out"),
            RUN_SECONDS);
    if (r.exit() != 0) {
      fail("chromium --screenshot exited " + r.exit() + ":\n" + r.output());
    }
  }

  private List<String> command(String profile, String... args) {
    Path userData = workDir.resolve("profile-" + profile);
    List<String> cmd =
        new ArrayList<>(
            List.of(
                binary.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--user-data-dir=" + userData));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private record Run(int exit, String output) {}

  /**
   * Runs {@code cmd} with stdout in {@code out} (stderr beside it), so a chatty browser cannot
   * block on a full pipe.
   */
  private static Run run(List<String> cmd, Path out, long timeoutSeconds) {
    Path err = out.resolveSibling(out.getFileName() + ".err");
    try {
      Process p =
          new ProcessBuilder(cmd)
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        return new Run(
            -1, "timed out after " + timeoutSeconds + " s; stderr:\n" + Files.readString(err));
      }
      String stdout = Files.readString(out);
      return new Run(
          p.exitValue(),
          p.exitValue() == 0 ? stdout : stdout + "\nstderr:\n" + Files.readString(err));
    } catch (IOException e) {
      // No such program (no apt-get, no sudo): report it like a failed run.
      return new Run(-1, e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
