package io.mooncake.dist.scheduler.loop;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.PgListener;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.TaskQueue;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's scheduling thread. Every {@code tick} it evaluates every active job it can lock, and
 * every few ticks ({@link #maintainEvery}) it rescues expired leases and fails the open tasks of
 * nodes gone longer than the node grace. In between, a task of job X finishing (NOTIFY {@code
 * mooncake_job, 'X'}; since V027 not a copy's success) evaluates job X first and alone, without
 * walking every other active job; a notification without a job (a seed's new object or a release's
 * first follower replica, which may unblock pipelined copies of any job, or a listener reconnect)
 * evaluates every active job. Notified evaluations of a job are paced ({@link #paced}): over time
 * at most one per {@link #NOTIFIED_GAP} (or per evaluation's duration if longer), with a burst of
 * {@link #NOTIFIED_BURST} for a job that was quiet; a notification inside the pace is served once,
 * when the pace allows. Polling covers lost notifications. Every master runs one: per-job row
 * locks, not a leader, decide who drives a job, so a dead master stalls nothing. A second thread
 * prunes the tasks of jobs finished longer than the retention ago ({@link PruneFinishedTasks}).
 */
public final class SchedulerLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SchedulerLoop.class);
  private static final int JOBS_PER_PASS = 1_000;

  /**
   * Polling one job takes at most 1 / POLL_COST_FACTOR of the loop's time (see evaluateActiveJobs).
   */
  private static final long POLL_COST_FACTOR = 10;

  /**
   * How the loop runs: full-pass interval, how long a node may miss heartbeats before its open
   * tasks fail, how long finished jobs keep their task rows, and how often the pruner looks.
   */
  public record Settings(
      Duration tick,
      Duration nodeGrace,
      Duration retention,
      Duration pruneEvery,
      int releaseWindow) {
    public static final Duration DEFAULT_NODE_GRACE = Duration.ofSeconds(300);
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(168);
    public static final Duration DEFAULT_PRUNE_EVERY = Duration.ofMinutes(5);

    public Settings {
      if (releaseWindow < 0) {
        throw new IllegalArgumentException(
            "release window must be 0 (off) or positive, got " + releaseWindow);
      }
    }

    /** The master's defaults (release window {@link ScheduleJob#DEFAULT_RELEASE_WINDOW}). */
    public Settings(Duration tick, Duration nodeGrace, Duration retention, Duration pruneEvery) {
      this(tick, nodeGrace, retention, pruneEvery, ScheduleJob.DEFAULT_RELEASE_WINDOW);
    }

    /** The master's defaults around a given tick. */
    public static Settings withTick(Duration tick) {
      return new Settings(tick, DEFAULT_NODE_GRACE, DEFAULT_RETENTION, DEFAULT_PRUNE_EVERY);
    }
  }

  private final Database database;
  private final Settings settings;
  private final JobStore jobs;
  private final TaskQueue queue;
  private final PruneFinishedTasks pruner;
  private final Semaphore wake = new Semaphore(0);
  private final Set<String> dirtyJobs = ConcurrentHashMap.newKeySet();

  /**
   * Each notified job's pace ({@link #paced}): over time a job is evaluated at most once per the
   * longer of {@link #NOTIFIED_GAP} and its evaluations' duration, with a burst of {@link
   * #NOTIFIED_BURST} more. Until V027 every finished task and every published replica notified;
   * evaluated at each, a job with a thousand followers was evaluated back to back through its whole
   * copy phase (issue 19). Notifications that arrive before {@link Pace#notBefore} are merged into
   * one evaluation at that moment.
   */
  private final Map<String, Pace> paces = new ConcurrentHashMap<>();

  /**
   * A job's paced due time and the earliest moment it may be evaluated again (System.nanoTime()).
   */
  record Pace(long due, long notBefore) {}

  /** The average shortest interval between two notified evaluations of one job. */
  static final Duration NOTIFIED_GAP = Duration.ofMillis(100);

  /**
   * How many evaluations a job that was quiet may have at once before the gap applies. With none (a
   * plain gap after each evaluation, 940ccfd), a small job whose steps finish within 100 ms of each
   * other waited out the gap at each: bench/queue.sh's "task done -> next claimed" went from 7-13
   * ms to 91-92 ms.
   */
  static final int NOTIFIED_BURST = 3;

  /**
   * The pace of notified evaluations, as a generic cell rate algorithm: an evaluation that ended at
   * {@code end} after {@code duration} moves the job's due time to the later of its previous due
   * time and {@code end}, plus the interval (the longer of the gap and the duration). The job may
   * be evaluated again {@code burst} intervals before its due time.
   */
  static Pace paced(Long previousDue, long end, long duration, long gap, int burst) {
    long interval = Math.max(gap, duration);
    long due = (previousDue == null || previousDue - end < 0 ? end : previousDue) + interval;
    return new Pace(due, Math.max(end, due - burst * interval));
  }

  /** When each active job is next due for a polling evaluation (System.nanoTime()). */
  private final Map<String, Long> nextPoll = new ConcurrentHashMap<>();

  private final AtomicBoolean fullPassWanted = new AtomicBoolean(true);
  private final Thread thread;
  private final Thread pruneThread;
  private final PgListener listener;
  private volatile boolean running = true;

  public SchedulerLoop(Database database, Duration tick) {
    this(database, Settings.withTick(tick));
  }

  public SchedulerLoop(Database database, Settings settings) {
    this.database = database;
    this.settings = settings;
    this.jobs = new JobStore(database.dsl());
    this.queue = new TaskQueue(database.dsl());
    this.pruner = new PruneFinishedTasks(database.dsl(), settings.retention());
    this.thread = Thread.ofPlatform().name("scheduler").unstarted(this::run);
    this.pruneThread = Thread.ofPlatform().daemon().name("task-pruner").unstarted(this::pruneLoop);
    this.listener =
        new PgListener(
            database,
            List.of("mooncake_job"),
            (ch, jobId) -> {
              if (jobId == null || jobId.isEmpty()) {
                // A seed's new object or a release's first follower replica (V027): the active
                // list read in the last gap will do.
                fullPassWanted.set(true);
                wake.release();
              } else {
                wake(jobId);
              }
            });
  }

  public SchedulerLoop start() {
    listener.start();
    thread.start();
    pruneThread.start();
    return this;
  }

  /** Evaluates every active job as soon as possible (e.g. right after a job is created). */
  public void wake() {
    activeStale = true;
    fullPassWanted.set(true);
    wake.release();
  }

  /** Evaluates one job as soon as possible. */
  public void wake(String jobId) {
    dirtyJobs.add(jobId);
    wake.release();
  }

  /**
   * How often the loop rescues lapsed leases and fails the tasks of gone nodes: every {@link
   * #MAINTAIN_TICKS} ticks, at most {@link #MAINTAIN_AT_MOST} apart. The rescue walks every
   * processing task (tasks_leased_idx: no index over the expiry, so that renewals stay HOT, V020);
   * once a 500 ms tick by each of two masters it was 8,046 walks of 8,000 rows and 172 s of
   * Postgres time in a 1,000-node job (bench/fleet.sh, session 20), for leases of 30 s.
   */
  static Duration maintainEvery(Duration tick) {
    // Every tenth tick, but at least every 5 s, and never more often than every tick.
    Duration every = tick.multipliedBy(MAINTAIN_TICKS);
    Duration capped = every.compareTo(MAINTAIN_AT_MOST) < 0 ? every : MAINTAIN_AT_MOST;
    return capped.compareTo(tick) > 0 ? capped : tick;
  }

  static final int MAINTAIN_TICKS = 10;
  static final Duration MAINTAIN_AT_MOST = Duration.ofSeconds(5);

  private void run() {
    long lastTick = System.nanoTime() - settings.tick().toNanos();
    long lastMaintained = lastTick - maintainEvery(settings.tick()).toNanos();
    while (running) {
      try {
        // First the jobs notified as changed: this is the wake-up path, keep it short. A
        // notification without a job marks every active job.
        if (fullPassWanted.getAndSet(false)) {
          dirtyJobs.addAll(activeJobs());
        }
        Set<String> evaluated = new HashSet<>();
        for (String jobId : List.copyOf(dirtyJobs)) {
          if (notBefore(jobId) - System.nanoTime() <= 0 && dirtyJobs.remove(jobId)) {
            evaluate(jobId);
            evaluated.add(jobId);
          }
        }
        if (System.nanoTime() - lastTick >= settings.tick().toNanos()) {
          lastTick = System.nanoTime();
          if (lastTick - lastMaintained >= maintainEvery(settings.tick()).toNanos()) {
            lastMaintained = lastTick;
            maintain();
          }
          evaluateActiveJobs(evaluated, true);
        }
      } catch (RuntimeException e) {
        log.warn("scheduler pass failed, retrying next tick: {}", e.getMessage());
      }
      long now = System.nanoTime();
      long waitNanos = settings.tick().toNanos() - (now - lastTick);
      for (String jobId : dirtyJobs) {
        waitNanos = Math.min(waitNanos, notBefore(jobId) - now);
      }
      try {
        if (!fullPassWanted.get()
            && waitNanos > 0
            && wake.tryAcquire(waitNanos, TimeUnit.NANOSECONDS)) {
          wake.drainPermits();
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * The active jobs, read at most once per {@link #NOTIFIED_GAP}: a published replica asks for
   * every active job to be evaluated, and reading the list on each was 12,400 statements of a
   * 100-node job (issue 19). {@link #wake()} (a job created through this master) reads it anew; a
   * job created through another master is found at the next read or tick.
   */
  private List<String> activeJobs() {
    long now = System.nanoTime();
    if (activeStale || activeRead == 0 || now - activeRead >= NOTIFIED_GAP.toNanos()) {
      activeStale = false;
      active = jobs.activeJobIds(JOBS_PER_PASS);
      activeRead = now;
    }
    return active;
  }

  private List<String> active = List.of();
  private long activeRead;

  /** Set by {@link #wake()} (a job was just created here): the next full pass reads the list. */
  private volatile boolean activeStale;

  /** One full pass over every active job; public so tests can drive the loop step by step. */
  public void pass() {
    maintain();
    evaluateActiveJobs(Set.of(), false);
  }

  /** Every {@link #maintainEvery}: leases that expired, nodes gone longer than the grace. */
  private void maintain() {
    int rescued = queue.rescueExpiredLeases();
    if (rescued > 0) {
      log.info("rescued {} tasks whose lease expired", rescued);
    }
    int gone = queue.failTasksOfGoneNodes(settings.nodeGrace());
    if (gone > 0) {
      log.warn(
          "failed {} open tasks of nodes gone for more than {} s",
          gone,
          settings.nodeGrace().toSeconds());
    }
  }

  /**
   * Evaluates the active jobs. When only polling (the tick, no notification asked for it), a job is
   * polled again no sooner than {@code POLL_COST_FACTOR - 1} durations of its last evaluation after
   * that evaluation ended, so polling it takes at most a tenth of the loop's time: a job whose
   * evaluation aggregates a million task rows is polled every few seconds, small jobs still every
   * tick. Notified jobs are always evaluated at once.
   */
  private void evaluateActiveJobs(Set<String> justEvaluated, boolean polling) {
    List<String> active = jobs.activeJobIds(JOBS_PER_PASS);
    nextPoll.keySet().retainAll(Set.copyOf(active));
    paces.keySet().retainAll(Set.copyOf(active));
    long now = System.nanoTime();
    for (String jobId : active) {
      if (!justEvaluated.contains(jobId) && !(polling && nextPoll.getOrDefault(jobId, now) > now)) {
        evaluate(jobId);
      }
    }
  }

  private void evaluate(String jobId) {
    long start = System.nanoTime();
    try {
      ScheduleJob.run(database.dsl(), jobId, settings.releaseWindow());
    } catch (RuntimeException e) {
      log.warn("job {}: evaluation failed, retrying next pass: {}", jobId, e.toString());
    }
    long end = System.nanoTime();
    nextPoll.put(jobId, end + (POLL_COST_FACTOR - 1) * (end - start));
    Pace previous = paces.get(jobId);
    paces.put(
        jobId,
        paced(
            previous == null ? null : previous.due(),
            end,
            end - start,
            NOTIFIED_GAP.toNanos(),
            NOTIFIED_BURST));
  }

  /** The earliest moment a notified job may be evaluated again (0: at once). */
  private long notBefore(String jobId) {
    Pace pace = paces.get(jobId);
    return pace == null ? 0L : pace.notBefore();
  }

  /** Prunes now; public so tests and operators can run it without waiting for the schedule. */
  public long prune() {
    long deleted = pruner.run();
    if (deleted > 0) {
      log.info(
          "pruned {} task rows of jobs finished more than {} h ago",
          deleted,
          settings.retention().toHours());
    }
    return deleted;
  }

  private void pruneLoop() {
    while (running) {
      try {
        prune();
      } catch (RuntimeException e) {
        log.warn("pruning failed, retrying in {}: {}", settings.pruneEvery(), e.getMessage());
      }
      try {
        Thread.sleep(settings.pruneEvery().toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  @Override
  public void close() {
    running = false;
    listener.close();
    thread.interrupt();
    pruneThread.interrupt();
    try {
      thread.join(5_000);
      pruneThread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
