package io.mooncake.dist.scheduler.loop;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.PgListener;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.TaskQueue;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's scheduling thread. Each pass rescues expired leases, then evaluates every active
 * job it can lock. It runs every {@code tick} and at once when a task of some job finishes
 * (NOTIFY {@code mooncake_job}); polling covers lost notifications. Every master runs one:
 * per-job row locks, not a leader, decide who drives a job, so a dead master stalls nothing.
 */
public final class SchedulerLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SchedulerLoop.class);
  private static final int JOBS_PER_PASS = 1_000;

  private final Database database;
  private final JobStore jobs;
  private final TaskQueue queue;
  private final Duration tick;
  private final Semaphore wake = new Semaphore(0);
  private final Thread thread;
  private final PgListener listener;
  private volatile boolean running = true;

  public SchedulerLoop(Database database, Duration tick) {
    this.database = database;
    this.jobs = new JobStore(database.dsl());
    this.queue = new TaskQueue(database.dsl());
    this.tick = tick;
    this.thread = Thread.ofPlatform().name("scheduler").unstarted(this::run);
    this.listener = new PgListener(database, List.of("mooncake_job"), (ch, payload) -> wake());
  }

  public SchedulerLoop start() {
    listener.start();
    thread.start();
    return this;
  }

  /** Runs a pass as soon as possible (e.g. right after a job is created). */
  public void wake() {
    wake.release();
  }

  private void run() {
    while (running) {
      try {
        pass();
      } catch (RuntimeException e) {
        log.warn("scheduler pass failed, retrying next tick: {}", e.getMessage());
      }
      try {
        if (wake.tryAcquire(tick.toMillis(), TimeUnit.MILLISECONDS)) {
          wake.drainPermits();
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** One pass; public so tests can drive the loop step by step. */
  public void pass() {
    int rescued = queue.rescueExpiredLeases();
    if (rescued > 0) {
      log.info("rescued {} tasks whose lease expired", rescued);
    }
    for (String jobId : jobs.activeJobIds(JOBS_PER_PASS)) {
      try {
        ScheduleJob.run(database.dsl(), jobId);
      } catch (RuntimeException e) {
        log.warn("job {}: evaluation failed, retrying next pass: {}", jobId, e.toString());
      }
    }
  }

  @Override
  public void close() {
    running = false;
    listener.close();
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
