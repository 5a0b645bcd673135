package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.JobShape;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many of a job's objects this follower pulls from the seed at most: its fair share, {@code
 * ceil(objects / followers)}. Every object a follower pulls from the seed is relayed by it to every
 * other follower (they all start reading it as it arrives, when it has no other source), so a
 * follower's uplink carries (followers - 1) x what it pulled. One that pulled more than its share
 * is the job's slowest uplink: in issue 20's 100 Mbit/s run (32 objects, 7 followers) one follower
 * won 6 seed pulls where the share is 5, sent 292 MiB while the others sent 195-244, and the job's
 * last 4 s were that uplink alone finishing its relays.
 *
 * <p>A follower that has pulled its share waits for another follower to pull the object (its copy
 * is deferred, as when its seed slot is taken), but only for {@link #PATIENCE}: the followers
 * counted include ones that may have died or be slow, and an object no follower under its share
 * takes must still leave the seed. The counts are this node's own, in memory, per job; the job's
 * shape is read once per job.
 *
 * <p>Only in a job whose followers are few enough that a puller relays to all the others: with more
 * than {@link Transport#READERS_PER_OBJECT} other followers, a puller's uplink carries at most that
 * many readers of the object (its chunk server refuses the next ones), as for any object it relays,
 * so a pull costs it no more than a relay and there is no share. At N = 1,000 (256 objects, a share
 * of 1) the share stalled the release window: the followers that claimed a newly released object
 * first had each pulled their one object already and handed the copy back, which put it behind
 * every other copy they had not claimed yet, so nobody began to pull it for up to minutes
 * (bench/fleet.sh, session 23: 3 of the window's 8 objects at once, 111 copies of one handed back,
 * none pulling) and the seed's uplink ran at 83%.
 *
 * <p>With the shape it keeps what a job of few followers needs for its relay chain ({@link
 * RelayChain}): the followers in target order, and whether this node has left the chain.
 */
final class SeedShares {
  private static final Logger log = LoggerFactory.getLogger(SeedShares.class);

  /**
   * How long a copy waits for another follower to pull an object this node has no share left for.
   * Several seed pulls' time at the seed's full rate (an 8 MiB object at 100 Mbit/s in a round of 7
   * pulls: 4.7 s), so a live follower under its share normally comes first.
   */
  static final Duration PATIENCE = Duration.ofSeconds(10);

  /** Jobs remembered at most; older ones are forgotten (a forgotten job just starts over). */
  private static final int MAX_JOBS = 256;

  /**
   * How long after a failed read of a job's shape this node goes by no share for that job before it
   * reads again. A read fails when the database is overloaded, typically after the pool's 30 s wait
   * for a connection; every copy of the node asking again at once made that worse: at the start of
   * a 1,000-node job (bench/fleet.sh, session 25, run T) 1,555 reads failed, each holding a copy's
   * thread for the wait.
   */
  static final Duration RETRY_AFTER = Duration.ofSeconds(5);

  /**
   * How long a copy waits for another copy of the node that is reading the job's shape, before it
   * goes by no shape.
   */
  static final Duration READ_WAIT = Duration.ofSeconds(2);

  /**
   * Whether a copy whose only source is the seed should wait for another follower to pull it: this
   * node has already pulled {@code pulled} objects of the job from the seed, {@code share} being
   * its fair share, and the copy has waited for that reason for {@code waitedNanos} so far (0 the
   * first time).
   */
  static boolean holdBack(int pulled, int share, long waitedNanos) {
    return pulled >= share && waitedNanos < PATIENCE.toNanos();
  }

  /** The most objects of a job of this shape one follower pulls from the seed. */
  static int share(JobShape shape) {
    return shape.followers() - 1 > Transport.READERS_PER_OBJECT ? Integer.MAX_VALUE : shape.share();
  }

  private static final class Job {
    final int share;
    final AtomicInteger pulled = new AtomicInteger();

    /** The job's followers in target order, when they relay along a chain (see RelayChain). */
    final java.util.List<String> followerOrder;

    /** Whether this node left the job's chain (its predecessor failed it, see RelayChain). */
    volatile boolean offChain;

    /** Copies waiting because of the share, since when (System.nanoTime()). */
    final Map<Long, Long> waitingSince = new ConcurrentHashMap<>();

    Job(int share, java.util.List<String> followerOrder) {
      this.share = share;
      this.followerOrder = followerOrder;
    }
  }

  private final Function<String, JobShape> shapes;
  private final java.util.function.LongSupplier clock;
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();

  /** Jobs whose shape could not be read, and when (the clock's nanoseconds) to read it again. */
  private final Map<String, Long> unreadUntil = new ConcurrentHashMap<>();

  /**
   * Held by the one copy reading a shape; the node's other copies go by no share meanwhile instead
   * of reading it too (at the start of a 1,000-node job, 3,034 reads in the first minute: the
   * node's copies that first found the seed their only source all read at once).
   */
  private final java.util.concurrent.locks.ReentrantLock reading =
      new java.util.concurrent.locks.ReentrantLock();

  /**
   * @param shapes reads a job's shape; may throw (a database hiccup), and the copy then goes by no
   *     share, as do the job's copies for {@link #RETRY_AFTER}
   */
  SeedShares(Function<String, JobShape> shapes) {
    this(shapes, System::nanoTime);
  }

  /** As above, with the clock (nanoseconds) that times the patience and {@link #RETRY_AFTER}. */
  SeedShares(Function<String, JobShape> shapes, java.util.function.LongSupplier clock) {
    this.shapes = shapes;
    this.clock = clock;
  }

  /**
   * Whether this copy should leave the object to another follower because this node has pulled its
   * share of the job from the seed; the first such answer for a copy starts its patience.
   */
  boolean holdBack(String jobId, long taskId) {
    Job job = job(jobId);
    if (job == null) {
      return false;
    }
    long now = clock.getAsLong();
    long since = job.waitingSince.getOrDefault(taskId, now);
    boolean wait = holdBack(job.pulled.get(), job.share, now - since);
    if (wait) {
      job.waitingSince.putIfAbsent(taskId, now);
    } else {
      job.waitingSince.remove(taskId);
    }
    return wait;
  }

  /**
   * Where this node's copies of the job stand towards its relay chain ({@link RelayChain}), and
   * their predecessor on it: unknown when the job's shape could not be read.
   */
  RelayChain.Place chainPlace(String jobId, String seedNodeId, String nodeId) {
    Job job = job(jobId);
    return job == null
        ? RelayChain.Place.UNKNOWN_SHAPE
        : RelayChain.place(seedNodeId, job.followerOrder, job.offChain, nodeId);
  }

  /** This node's copies of the job read from whole holders and the seed from now on. */
  void leaveChain(String jobId) {
    Job job = jobs.get(jobId);
    if (job != null) {
      job.offChain = true;
    }
  }

  /** This node took the object's pull from the seed. */
  void pulled(String jobId, long taskId) {
    Job job = job(jobId);
    if (job != null) {
      job.pulled.incrementAndGet();
      job.waitingSince.remove(taskId);
    }
  }

  /** This node's part of the job is over (its copies are done). */
  void forget(String jobId) {
    jobs.remove(jobId);
    unreadUntil.remove(jobId);
  }

  /** How many objects of the job this node took from the seed so far (for tests and logs). */
  int pulled(String jobId) {
    Job job = jobs.get(jobId);
    return job == null ? 0 : job.pulled.get();
  }

  private Job job(String jobId) {
    Job known = jobs.get(jobId);
    if (known != null) {
      return known;
    }
    try {
      // A short wait: the job's first copies all ask at once, and one that went by no shape would
      // miss the job's chain.
      if (!reading.tryLock(READ_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
        return null;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
    try {
      known = jobs.get(jobId);
      return known != null ? known : read(jobId);
    } finally {
      reading.unlock();
    }
  }

  /** Reads the job's shape (under {@link #reading}), unless a failed read is too recent. */
  private Job read(String jobId) {
    Long until = unreadUntil.get(jobId);
    if (until != null && clock.getAsLong() - until < 0) {
      return null;
    }
    JobShape shape;
    try {
      shape = shapes.apply(jobId);
    } catch (RuntimeException e) {
      if (unreadUntil.size() >= MAX_JOBS) {
        unreadUntil.clear();
      }
      unreadUntil.put(jobId, clock.getAsLong() + RETRY_AFTER.toNanos());
      log.warn(
          "cannot read the shape of job {}; for {} s no seed share for it, and its copies read only"
              + " from nodes holding an object whole and the seed: {}",
          jobId,
          RETRY_AFTER.toSeconds(),
          e.toString());
      return null;
    }
    unreadUntil.remove(jobId);
    if (jobs.size() >= MAX_JOBS) {
      jobs.clear();
    }
    return jobs.computeIfAbsent(jobId, id -> new Job(share(shape), shape.followerOrder()));
  }
}
