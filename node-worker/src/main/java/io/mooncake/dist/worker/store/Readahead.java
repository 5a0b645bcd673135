package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The readahead window of the block device that holds the data directory, and a warning when it is
 * large. A follower writes what it receives with {@code O_DIRECT}, so when it relays an object the
 * chunk server's sendfile misses the page cache and the kernel reads ahead of the request by up to
 * the device's window, past the object into neighbours often not written yet (cached as zeros,
 * evicted again by the write that lands there). At 8 MiB (some VM disks, md arrays) that costs:
 * bench/fanout.sh took 20.2-21.6 s with 8 MiB and 18.8-18.9 s with 128 KiB (one build), 18.0-20.0 s
 * against 17.2 s (a later one), on the same machine. Java 21 has no {@code posix_fadvise}, so the
 * node cannot narrow it per file; it says so once at start, naming the file an operator sets. Best
 * effort: where the device is not found (tmpfs, containers without /sys) nothing is said.
 */
public final class Readahead {
  /** Above this, the warning: the kernel's default is 128 KiB. */
  static final long WARN_ABOVE_KIB = 1024;

  private Readahead() {}

  /** The warning for {@code dataDir} (a real path) on this machine, if any. */
  public static Optional<String> warning(Path dataDir) {
    try {
      return warning(
          dataDir, Files.readString(Path.of("/proc/self/mountinfo")), Path.of("/sys/dev/block"));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  static Optional<String> warning(Path dataDir, String mountinfo, Path sysDevBlock) {
    return deviceOf(dataDir, mountinfo)
        .flatMap(dev -> readaheadFile(sysDevBlock, dev))
        .flatMap(
            file -> {
              long kib;
              try {
                kib = Long.parseLong(Files.readString(file).trim());
              } catch (IOException | NumberFormatException e) {
                return Optional.empty();
              }
              if (kib <= WARN_ABOVE_KIB) {
                return Optional.empty();
              }
              return Optional.of(
                  "the data directory "
                      + dataDir
                      + " is on a device that reads ahead "
                      + kib
                      + " KiB ("
                      + file
                      + "): relaying objects received with O_DIRECT then reads far past each request; "
                      + "128-512 is usually better (echo 128 > "
                      + file
                      + ")");
            });
  }

  /**
   * The {@code major:minor} of the mount that holds {@code path}: the longest mount point above it.
   */
  static Optional<String> deviceOf(Path path, String mountinfo) {
    String best = null;
    int bestLength = -1;
    for (String line : mountinfo.split("\n")) {
      String[] f = line.split(" ");
      if (f.length < 5) {
        continue;
      }
      Path mountPoint = Path.of(unescape(f[4]));
      if (path.startsWith(mountPoint) && mountPoint.toString().length() > bestLength) {
        best = f[2];
        bestLength = mountPoint.toString().length();
      }
    }
    return Optional.ofNullable(best);
  }

  /** {@code queue/read_ahead_kb} of the device, or of the disk a partition belongs to. */
  private static Optional<Path> readaheadFile(Path sysDevBlock, String majorMinor) {
    try {
      Path dev = sysDevBlock.resolve(majorMinor);
      if (!Files.exists(dev)) {
        return Optional.empty();
      }
      Path real = dev.toRealPath();
      for (Path p :
          new Path[] {
            real.resolve("queue/read_ahead_kb"), real.getParent().resolve("queue/read_ahead_kb")
          }) {
        if (Files.isRegularFile(p)) {
          return Optional.of(p);
        }
      }
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** mountinfo escapes space, tab, newline and backslash as octal. */
  private static String unescape(String s) {
    return s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\");
  }
}
