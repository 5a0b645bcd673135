package io.mooncake.dist.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.scheduler.store.TaskQueue.Completion;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Claim + complete throughput: our queue (TaskQueue.claim in batches, TaskQueue.succeedAll with
 * lease-guarded rows (each row is its succeeding attempt's record, V007), the real table with its triggers) and db-scheduler's
 * lock-and-fetch with no-op one-time tasks, each draining a queue filled beforehand.
 */
final class Throughput {
  private static final Duration LEASE = Duration.ofSeconds(60);

  private Throughput() {}

  /**
   * A job row and N ready copy tasks for one node, payloads shaped as ScheduleJob builds them. The
   * job row is only the tasks' parent: it is marked completed so no master evaluates it later.
   */
  static void enqueue(String url, String jobId, String node, int n) throws Exception {
    try (Database db = Database.open(url, 2, "queue-bench"); Connection c = db.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute("""
          INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                            total_size_bytes, integrity, status)
          VALUES ('%1$s', 'bench', '{}', 'bench-%1$s', 'r1', 'bin', 'local', '%2$s', %3$d::bigint * 67108864,
                  'object_digests', 'completed')
          """.formatted(jobId, node, n));
      st.execute("""
          INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total, max_attempts)
          SELECT '%1$s', '%2$s', 'REPLICA_COPY', 'bench/%1$s/chunk-' || g,
                 jsonb_build_object('model', jsonb_build_object('model_id', 'bench-%1$s', 'revision', 'r1',
                     'format', 'bin', 'provider', 'local'),
                   'files', jsonb_build_array(jsonb_build_object('file_index', 0, 'path', 'model.safetensors',
                     'size_bytes', %3$d::bigint * 67108864, 'sha256', NULL, 'download_url', NULL,
                     'objects', jsonb_build_array(jsonb_build_object('object_id', 'bench/%1$s/chunk-' || g,
                       'chunk_index', g, 'offset', g::bigint * 67108864, 'length', 67108864,
                       'digest', 'sha256:' || md5(g::text) || md5(g::text)))))),
                 67108864, 5
            FROM generate_series(0, %3$d - 1) g
          """.formatted(jobId, node, n));
      st.execute("VACUUM ANALYZE tasks");
    }
  }

  /**
   * THREADS workers of one node, each claiming BATCH at a time and recording them with succeedAll.
   * The node's warm-up queue ({@code NODE-warm}, if filled) is drained first, untimed, so the JIT
   * has compiled the path, as it has in a worker that has been running for a while.
   */
  static void ours(String url, String node, int threads, int batch) throws Exception {
    try (Database db = Database.open(url, threads + 2, "queue-bench")) {
      TaskQueue queue = new TaskQueue(db.dsl());
      drain(queue, node + "-warm", threads, batch);
      long t0 = System.nanoTime();
      long done = drain(queue, node, threads, batch);
      double s = (System.nanoTime() - t0) / 1e9;
      System.out.printf("ours_tasks=%d ours_s=%.3f ours_per_s=%.0f%n", done, s, done / s);
    }
  }

  private static long drain(TaskQueue queue, String node, int threads, int batch) throws InterruptedException {
    AtomicLong done = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      String owner = node + "/bench-" + i;
      workers.add(Thread.ofPlatform().start(() -> {
        while (true) {
          List<ClaimedTask> claimed = queue.claim(node, owner, batch, LEASE);
          if (claimed.isEmpty()) {
            return;
          }
          List<Completion> completions = claimed.stream()
              .map(t -> new Completion(t.taskId(), owner, t.payload().totalBytes(), null, List.of()))
              .toList();
          done.addAndGet(queue.succeedAll(completions).size());
        }
      }));
    }
    for (Thread w : workers) {
      w.join();
    }
    return done.get();
  }

  /**
   * db-scheduler 16.7.1: N due one-time executions, THREADS executor threads, lock-and-fetch
   * polling. A warm-up batch of N / 10 runs first, untimed, in the same scheduler.
   */
  static void dbScheduler(String url, int threads, int n) throws Exception {
    HikariConfig cfg = new HikariConfig();
    cfg.setJdbcUrl(url);
    cfg.setMaximumPoolSize(threads + 4);
    cfg.setPoolName("db-scheduler");
    try (HikariDataSource ds = new HikariDataSource(cfg)) {
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        // db-scheduler's PostgreSQL schema (its postgresql_tables.sql).
        st.execute("""
            CREATE TABLE IF NOT EXISTS scheduled_tasks (
              task_name text NOT NULL, task_instance text NOT NULL, task_data bytea,
              execution_time timestamptz NOT NULL, picked boolean NOT NULL, picked_by text,
              last_success timestamptz, last_failure timestamptz, consecutive_failures int,
              last_heartbeat timestamptz, version bigint NOT NULL, priority smallint,
              PRIMARY KEY (task_name, task_instance))""");
        st.execute("CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time)");
        st.execute("CREATE INDEX IF NOT EXISTS last_heartbeat_idx ON scheduled_tasks (last_heartbeat)");
        st.execute("CREATE INDEX IF NOT EXISTS priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC)");
      }
      AtomicInteger executed = new AtomicInteger();
      OneTimeTask<Void> task = Tasks.oneTime("bench-copy").execute((instance, ctx) -> executed.incrementAndGet());
      Scheduler scheduler = Scheduler.create(ds, task)
          .threads(threads)
          .pollUsingLockAndFetch(0.5, 1.0)
          .pollingInterval(Duration.ofMillis(50))
          .heartbeatInterval(Duration.ofSeconds(5))
          .shutdownMaxWait(Duration.ofSeconds(5))
          .build();
      scheduler.start();
      runDue(ds, executed, "warm", n / 10);
      double s = runDue(ds, executed, "timed", n);
      scheduler.stop();
      System.out.printf("dbsched_tasks=%d dbsched_s=%.3f dbsched_per_s=%.0f%n", n, s, n / s);
    }
  }

  /** Makes N executions due at once; returns the seconds until every one has run and been deleted. */
  private static double runDue(HikariDataSource ds, AtomicInteger executed, String prefix, int n) throws Exception {
    int target = executed.get() + n;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("""
          INSERT INTO scheduled_tasks (task_name, task_instance, execution_time, picked, version, priority)
          SELECT 'bench-copy', '%s-' || g, now() - interval '1 second', false, 1, 0 FROM generate_series(1, %d) g
          """.formatted(prefix, n));
      long t0 = System.nanoTime();
      while (executed.get() < target) {
        Thread.sleep(5);
      }
      // The last executions are counted before their completion (DELETE) commits: wait for those.
      while (true) {
        try (var rs = st.executeQuery("SELECT count(*) FROM scheduled_tasks")) {
          rs.next();
          if (rs.getLong(1) == 0) {
            return (System.nanoTime() - t0) / 1e9;
          }
        }
        Thread.sleep(2);
      }
    }
  }
}
