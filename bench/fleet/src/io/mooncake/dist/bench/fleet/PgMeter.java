package io.mooncake.dist.bench.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Stream;

/**
 * What Postgres itself says it spent: CPU of the postmaster and all its children from /proc
 * (children that exited are in the postmaster's cutime/cstime), top-level statements of the bench
 * database from pg_stat_statements (transaction control and this meter's own queries excluded),
 * transactions from pg_stat_database, and client backends from pg_stat_activity.
 */
final class PgMeter implements AutoCloseable {
  private static final double MS_PER_TICK = 1000.0 / 100; // CLK_TCK is 100 on Linux

  private final long postmaster;
  private final Connection c;
  private final Thread sampler;
  private volatile boolean running = true;
  private volatile int peak;
  private volatile int current;

  PgMeter(String adminUrl, long postmasterPid) throws SQLException {
    this.postmaster = postmasterPid;
    this.c = DriverManager.getConnection(adminUrl);
    this.c.setAutoCommit(true);
    this.sampler = Thread.ofPlatform().daemon().name("pg-meter").start(this::sample);
  }

  /** CPU ms used so far by the postmaster and its children, living and exited. */
  double cpuMs() {
    long ticks = 0;
    long[] pm = stat(postmaster);
    if (pm != null) {
      ticks += pm[1] + pm[2] + pm[3] + pm[4];
    }
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        long[] s = stat(Long.parseLong(name));
        if (s != null && s[0] == postmaster) {
          ticks += s[1] + s[2];
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return ticks * MS_PER_TICK;
  }

  /** ppid, utime, stime, cutime, cstime; null if the process is gone. */
  private static long[] stat(long pid) {
    try {
      String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      // f[0] is field 3 (state): ppid = field 4, utime..cstime = fields 14..17
      return new long[] {
        Long.parseLong(f[1]),
        Long.parseLong(f[11]),
        Long.parseLong(f[12]),
        Long.parseLong(f[13]),
        Long.parseLong(f[14])
      };
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  synchronized long statements() throws SQLException {
    return one(
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s"
            + " WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND s.query !~* '^\\s*(begin|commit|rollback|start transaction)'"
            + " AND s.query NOT LIKE '%pg\\_stat%' AND s.toplevel");
  }

  /**
   * One statement text's counters: calls, plans made (a statement inside a function reuses its
   * plan until something invalidates it), and Postgres time planning and executing it.
   */
  record Stat(long calls, long plans, double planMs, double execMs) {
    Stat minus(Stat o) {
      return new Stat(calls - o.calls, plans - o.plans, planMs - o.planMs, execMs - o.execMs);
    }
  }

  /**
   * Counters per statement text (first 90 characters) of the bench database, this meter's excluded.
   * Planning time is counted because the script starts Postgres with {@code
   * pg_stat_statements.track_planning}: behind a transaction-mode PgBouncer nodes cannot keep
   * prepared statements, so every statement is planned again.
   */
  synchronized java.util.Map<String, Stat> perStatement() throws SQLException {
    java.util.Map<String, Stat> m = new java.util.HashMap<>();
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT CASE WHEN s.toplevel THEN '' ELSE '(nested) ' END"
                    + " || left(regexp_replace(query, '\\s+', ' ', 'g'), 90), sum(calls),"
                    + " sum(plans), sum(total_plan_time), sum(total_exec_time)"
                    + " FROM pg_stat_statements s"
                    + " WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                    + " AND s.query NOT LIKE '%pg\\_stat%' GROUP BY 1")) {
      while (rs.next()) {
        m.merge(
            rs.getString(1),
            new Stat(rs.getLong(2), rs.getLong(3), rs.getDouble(4), rs.getDouble(5)),
            (x, y) ->
                new Stat(
                    x.calls + y.calls, x.plans + y.plans, x.planMs + y.planMs, x.execMs + y.execMs));
      }
    }
    return m;
  }

  /**
   * The {@code n} statements called most between two {@link #perStatement} readings, with their
   * planning and execution time (ms in all), then the totals of every statement.
   */
  static String top(java.util.Map<String, Stat> before, java.util.Map<String, Stat> after, int n) {
    StringBuilder b = new StringBuilder();
    b.append(String.format("fleet:      calls     plans   plan ms   exec ms  statement%n"));
    java.util.List<java.util.Map.Entry<String, Stat>> delta =
        after.entrySet().stream()
            .map(
                e ->
                    java.util.Map.entry(
                        e.getKey(),
                        e.getValue().minus(before.getOrDefault(e.getKey(), new Stat(0, 0, 0, 0)))))
            .filter(e -> e.getValue().calls() > 0)
            .sorted((x, y) -> Long.compare(y.getValue().calls(), x.getValue().calls()))
            .toList();
    delta.stream()
        .limit(n)
        .forEach(
            e ->
                b.append(
                    String.format(
                        "fleet:   %8d  %8d  %8.0f  %8.0f  %s%n",
                        e.getValue().calls(),
                        e.getValue().plans(),
                        e.getValue().planMs(),
                        e.getValue().execMs(),
                        e.getKey())));
    b.append(
        String.format(
            "fleet:   %8d  %8d  %8.0f  %8.0f  (all statements)%n",
            delta.stream().mapToLong(e -> e.getValue().calls()).sum(),
            delta.stream().mapToLong(e -> e.getValue().plans()).sum(),
            delta.stream().mapToDouble(e -> e.getValue().planMs()).sum(),
            delta.stream().mapToDouble(e -> e.getValue().execMs()).sum()));
    return b.toString();
  }

  synchronized long transactions() throws SQLException {
    return one(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()");
  }

  synchronized long rows(String sql) throws SQLException {
    return one(sql);
  }

  private long one(String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Peak client backends (every database, this meter's session excluded) since the last reset. */
  int peakConnections() {
    return peak;
  }

  int connections() {
    return current;
  }

  void resetPeak() {
    peak = current;
  }

  private void sample() {
    while (running) {
      try {
        int n;
        synchronized (this) {
          n =
              (int)
                  one(
                      "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                          + " AND pid <> pg_backend_pid()");
        }
        current = n;
        peak = Math.max(peak, n);
        Thread.sleep(250);
      } catch (SQLException e) {
        try {
          Thread.sleep(100);
        } catch (InterruptedException ie) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  @Override
  public void close() throws SQLException {
    running = false;
    sampler.interrupt();
    c.close();
  }
}
