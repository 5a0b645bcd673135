package io.mooncake.dist.bench.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where the machine's CPU goes during the job, from /proc: every core's busy time (/proc/stat:
 * all but idle and iowait), and the CPU of given processes (utime + stime of the simulator itself,
 * the masters, PgBouncer). Postgres is {@link PgMeter}'s. With Postgres, PgBouncer, the masters and
 * a thousand simulated nodes on the same two cores, the job can only be as fast as the CPU they
 * need a copy allows, so the fleet line shows it beside Postgres' share.
 */
final class CpuMeter {
  private static final double MS_PER_TICK = 1000.0 / 100; // CLK_TCK is 100 on Linux

  private CpuMeter() {}

  /** Busy CPU ms of all cores since boot. */
  static double machineBusyMs() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long busy = 0;
      // cpu user nice system idle iowait irq softirq steal ...
      for (int i = 1; i < Math.min(f.length, 9); i++) {
        if (i != 4 && i != 5) {
          busy += Long.parseLong(f[i]);
        }
      }
      return busy * MS_PER_TICK;
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** CPU ms used so far by these processes (those gone count nothing). */
  static double processMs(List<Long> pids) {
    long ticks = 0;
    for (long pid : pids) {
      try {
        String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
      } catch (IOException | RuntimeException e) {
        // gone
      }
    }
    return ticks * MS_PER_TICK;
  }

  /** Process ids from a space-separated list, as the launcher passes them. */
  static List<Long> pids(String list) {
    return list == null || list.isBlank()
        ? List.of()
        : java.util.Arrays.stream(list.trim().split("\\s+")).map(Long::parseLong).toList();
  }
}
