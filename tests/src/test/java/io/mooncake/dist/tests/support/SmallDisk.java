package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted on a directory, for disks that fill up: needs root (CI runs as root);
 * {@link #mount} says whether it worked so a test can skip saying why.
 */
public final class SmallDisk implements AutoCloseable {
  private final Path dir;

  private SmallDisk(Path dir) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of {@code mib} MiB on {@code dir} (created); null when it cannot. */
  public static SmallDisk mount(Path dir, long mib) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    return run("mount", "-t", "tmpfs", "-o", "size=" + mib + "m", "tmpfs", dir.toString())
        ? new SmallDisk(dir)
        : null;
  }

  public Path dir() {
    return dir;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    run("umount", "-l", dir.toString());
  }

  private static boolean run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }
}
