package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of our own, made with the installed {@code initdb} and driven with {@code
 * pg_ctl}, for tests that must stop and start the database (the shared test server must never be
 * restarted under other test classes). Trust auth on 127.0.0.1 and a port of its own; as root the
 * server runs as the {@code postgres} user, which initdb requires.
 */
public final class PrivatePostgres implements AutoCloseable {
  private final Path bin;
  private final Path dir;
  private final int port;
  private final boolean asPostgresUser;

  private PrivatePostgres(Path bin, Path dir, int port, boolean asPostgresUser) {
    this.bin = bin;
    this.dir = dir;
    this.port = port;
    this.asPostgresUser = asPostgresUser;
  }

  /**
   * The directory holding {@code initdb} and {@code pg_ctl}, or null when PostgreSQL's server
   * binaries are not installed.
   */
  public static Path findBinaries() {
    List<Path> candidates = new ArrayList<>();
    Path debian = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(debian)) {
      try (Stream<Path> versions = Files.list(debian)) {
        versions
            .map(v -> v.resolve("bin"))
            .sorted(Comparator.reverseOrder())
            .forEach(candidates::add);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!p.isEmpty()) {
        candidates.add(Path.of(p));
      }
    }
    return candidates.stream()
        .filter(
            d -> Files.isExecutable(d.resolve("initdb")) && Files.isExecutable(d.resolve("pg_ctl")))
        .findFirst()
        .orElse(null);
  }

  /** initdb in a fresh directory under /tmp and start the server. */
  public static PrivatePostgres start(Path bin) throws IOException, InterruptedException {
    boolean root = "root".equals(System.getProperty("user.name"));
    Path dir = Files.createTempDirectory(Path.of("/tmp"), "mooncake-pg-");
    int port = TestFiles.freePort();
    PrivatePostgres pg = new PrivatePostgres(bin, dir, port, root);
    if (root) {
      pg.run(List.of("chown", "postgres", dir.toString()), false);
    }
    pg.run(
        List.of(
            bin.resolve("initdb").toString(),
            "-D",
            dir.resolve("data").toString(),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8"),
        true);
    pg.start();
    return pg;
  }

  /** A JDBC URL of database {@code postgres} on this server. */
  public String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
  }

  public void start() throws IOException, InterruptedException {
    run(
        List.of(
            bin.resolve("pg_ctl").toString(),
            "-D",
            dir.resolve("data").toString(),
            "-l",
            dir.resolve("server.log").toString(),
            "-w",
            "-t",
            "60",
            "-o",
            "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off",
            "start"),
        true);
  }

  /** A fast shutdown, as a restart or failover does it: every session is terminated. */
  public void stop() throws IOException, InterruptedException {
    run(
        List.of(
            bin.resolve("pg_ctl").toString(),
            "-D",
            dir.resolve("data").toString(),
            "-m",
            "fast",
            "-w",
            "-t",
            "60",
            "stop"),
        true);
  }

  /** The server's own log, for failure messages. */
  public String log() {
    try {
      return Files.readString(dir.resolve("server.log"));
    } catch (IOException e) {
      return "(no server log: " + e + ")";
    }
  }

  @Override
  public void close() {
    try {
      run(
          List.of(
              bin.resolve("pg_ctl").toString(),
              "-D",
              dir.resolve("data").toString(),
              "-m",
              "immediate",
              "-w",
              "stop"),
          true);
    } catch (IOException | RuntimeException e) {
      // already stopped
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // leave it for /tmp cleaning
    }
  }

  private void run(List<String> command, boolean asServerUser)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    if (asServerUser && asPostgresUser) {
      cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    cmd.addAll(command);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", cmd) + " did not finish");
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
    }
  }
}
