package io.mooncake.dist.worker.disk;

import io.mooncake.dist.scheduler.domain.ModelPaths;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.store.NodeDisks;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.worker.disk.EvictionPlan.Admission;
import io.mooncake.dist.worker.disk.EvictionPlan.Candidate;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a node's disk from filling (issue 22). Two duties, both applying {@link EvictionPlan}:
 *
 * <ul>
 *   <li>Admission: before the first task of a job moves a byte here, the model must fit in what is
 *       free (less what other admitted jobs still have to write), after evicting least recently
 *       used models if need be; otherwise the task fails at once, naming the figures and the pins.
 *   <li>Watermarks: each pass (every heartbeat interval), when more than the high watermark of the
 *       disk is used, whole models are evicted least recently used first until at most the low
 *       watermark is used, or nothing evictable is left.
 * </ul>
 *
 * Never evicted: a pinned model, one an active job uses here (database), one this node is running a
 * task of or has admitted a job of (in memory). Both duties hold this object's lock, so a task is
 * admitted only while no eviction runs, and a model being admitted is never a victim. An eviction
 * first withdraws the model's replica rows and records itself (one transaction that checks pins and
 * use again), then deletes the files: from then on no peer is offered this node as a source.
 */
public final class DiskKeeper {
  private static final Logger log = LoggerFactory.getLogger(DiskKeeper.class);

  /** An admission nothing touched for this long is dropped (its job ended or failed). */
  static final Duration ADMISSION_IDLE = Duration.ofMinutes(10);

  /** Watermarks, percent of the data directory's file system used. */
  public record Watermarks(int highPct, int lowPct) {
    public Watermarks {
      if (highPct < 1 || highPct > 100) {
        throw new IllegalArgumentException("--evict-high-watermark must be 1-100, got " + highPct);
      }
      if (lowPct < 0 || lowPct > highPct) {
        throw new IllegalArgumentException(
            "--evict-low-watermark must be 0 to --evict-high-watermark ("
                + highPct
                + "), got "
                + lowPct);
      }
    }

    public static final Watermarks DEFAULT = new Watermarks(90, 80);
  }

  /**
   * A job admitted here: its model and total size, and the bytes its copies wrote here since, until
   * it is staged or goes idle.
   */
  private record Admitted(ModelRef model, long totalBytes, long touchedNanos, AtomicLong written) {}

  private final String nodeId;
  private final Path dataDir;
  private final Watermarks watermarks;
  private final NodeDisks disks;
  private final DiskLedger ledger;
  private final Supplier<Set<ModelRef>> runningHere;
  private final Map<String, Admitted> admitted = new HashMap<>();
  private final AtomicLong evictions = new AtomicLong();

  /** Above the high watermark with nothing evictable, and said so already. */
  private boolean stuckWarned;

  private final AtomicLong evictedBytes = new AtomicLong();

  /**
   * @param runningHere the models of the tasks this node runs right now
   */
  public DiskKeeper(
      String nodeId,
      Path dataDir,
      Watermarks watermarks,
      NodeDisks disks,
      Supplier<Set<ModelRef>> runningHere) {
    this.nodeId = nodeId;
    this.dataDir = dataDir;
    this.watermarks = watermarks;
    this.disks = disks;
    this.ledger = new DiskLedger(nodeId, dataDir);
    this.runningHere = runningHere;
  }

  public DiskLedger ledger() {
    return ledger;
  }

  /** Reads back what the database recorded for this node (use times survive a restart). */
  public DiskKeeper load() {
    ledger.loadReported(disks.reported(nodeId));
    return this;
  }

  /** Models evicted since the client started, and their bytes. */
  public long evictions() {
    return evictions.get();
  }

  public long evictedBytes() {
    return evictedBytes.get();
  }

  /** What the next heartbeat reports: capacity, free bytes, watermarks and changed models. */
  public NodeRegistry.Disk report() {
    long[] space = space();
    return new NodeRegistry.Disk(
        space[0],
        space[1],
        watermarks.highPct(),
        watermarks.lowPct(),
        ledger.changes(ledger.scan()));
  }

  /** The heartbeat carrying {@code disk} was recorded. */
  public void recorded(NodeRegistry.Disk disk) {
    ledger.recorded(disk.changed());
  }

  /**
   * Admits the job's model before its first byte moves here.
   *
   * @param totalBytes the model's size; read from the job when null (a copy carries one object)
   * @return empty when it fits (after any eviction it needed); else the placement's error
   */
  public synchronized Optional<String> admit(
      String jobId, ModelRef model, Supplier<Long> totalBytes) {
    Admitted known = admitted.get(jobId);
    if (known != null) {
      admitted.put(
          jobId, new Admitted(model, known.totalBytes(), System.nanoTime(), known.written()));
      return Optional.empty();
    }
    long total = totalBytes.get();
    long needed = Math.max(0, total - ledger.finishedBytesOf(model));
    long free = space()[1] - stillToWrite(model);
    // Pins and use are read from the database only when eviction may be needed.
    List<Candidate> others = needed <= free ? List.of() : candidates(model);
    switch (EvictionPlan.admit(needed, free, others)) {
      case Admission.TooBig big -> {
        String error = big.message(nodeId, model);
        log.warn("job {}: {}", jobId, error);
        return Optional.of(error);
      }
      case Admission.Fits fits -> {
        long freed =
            evict(
                fits.victims().models(),
                "making room for job " + jobId + " (" + needed + " bytes)");
        if (freed < fits.victims().bytes()) {
          // A victim turned out pinned or in use by the time it was evicted: look again.
          long nowFree = space()[1] - stillToWrite(model);
          if (needed > nowFree) {
            return Optional.of(
                new Admission.TooBig(
                        needed,
                        Math.max(0, nowFree),
                        EvictionPlan.evictable(candidates(model)),
                        others.stream().filter(Candidate::pinned).toList(),
                        others.stream().filter(Candidate::inUse).toList())
                    .message(nodeId, model));
          }
        }
        admitted.put(jobId, new Admitted(model, total, System.nanoTime(), new AtomicLong()));
        ledger.touch(model);
        return Optional.empty();
      }
    }
  }

  /**
   * A copy of the job wrote {@code bytes} here: that much less of its reservation is still free.
   */
  public synchronized void wrote(String jobId, long bytes) {
    Admitted a = admitted.get(jobId);
    if (a != null) {
      a.written().addAndGet(bytes);
    }
  }

  /** The job's placement here ended (staged or failed): its bytes are no longer reserved. */
  public synchronized void release(String jobId) {
    admitted.remove(jobId);
  }

  /**
   * One watermark pass: above the high watermark, evicts least recently used models until the low
   * one is reached or nothing evictable is left.
   */
  public synchronized void enforceWatermarks() {
    long idle = System.nanoTime() - ADMISSION_IDLE.toNanos();
    admitted.values().removeIf(a -> a.touchedNanos() < idle);
    long[] space = space();
    long toFree =
        EvictionPlan.toFree(space[0], space[1], watermarks.highPct(), watermarks.lowPct());
    if (toFree <= 0) {
      stuckWarned = false;
      return;
    }
    long usedPct = space[0] == 0 ? 0 : (space[0] - space[1]) * 100 / space[0];
    EvictionPlan.Victims victims = EvictionPlan.choose(candidates(null), toFree);
    if (victims.isEmpty()) {
      if (stuckWarned) {
        return;
      }
      stuckWarned = true;
      log.warn(
          "the data directory is {}% full (above the high watermark of {}%), but every model here"
              + " is pinned or in use (said once until the disk is below the mark again)",
          usedPct, watermarks.highPct());
      return;
    }
    evict(
        victims.models(),
        "disk "
            + usedPct
            + "% used, above the high watermark of "
            + watermarks.highPct()
            + "%; freeing to "
            + watermarks.lowPct()
            + "%");
  }

  /** Every model on disk but {@code except}, with its use, pins and whether work uses it. */
  private List<Candidate> candidates(ModelRef except) {
    Map<ModelRef, Long> held = ledger.scan();
    held.remove(except);
    if (held.isEmpty()) {
      return List.of();
    }
    Set<ModelRef> pinned = disks.pinned(nodeId);
    Set<ModelRef> inUse = new HashSet<>(disks.inUse(nodeId));
    inUse.addAll(runningHere.get());
    admitted.values().forEach(a -> inUse.add(a.model()));
    List<Candidate> out = new ArrayList<>();
    held.forEach(
        (m, bytes) ->
            out.add(
                new Candidate(
                    m, bytes, ledger.lastUsed(m), pinned.contains(m), inUse.contains(m))));
    return out;
  }

  /**
   * Bytes other admitted jobs have yet to write: what is free is partly theirs already. Counted
   * from what their copies reported written (a download reserves its whole model until it is done),
   * since a partial file's size (sparse, full size at once) tells nothing.
   */
  private long stillToWrite(ModelRef except) {
    long sum = 0;
    for (Admitted a : admitted.values()) {
      if (!a.model().equals(except)) {
        sum += Math.max(0, a.totalBytes() - ledger.finishedBytesOf(a.model()) - a.written().get());
      }
    }
    return sum;
  }

  /** Evicts each victim (database first, then files); returns the bytes freed. */
  private long evict(List<Candidate> victims, String reason) {
    long freed = 0;
    for (Candidate v : victims) {
      Path dir = ModelPaths.modelDir(dataDir, v.model());
      String refused = disks.evict(nodeId, v.model(), v.bytes(), reason, dir.toString());
      if (refused != null) {
        log.info("not evicting {}: {}", v.model().describe(), refused);
        continue;
      }
      ledger.evicted(v.model());
      try {
        ModelDirectory.deleteRecursively(dir);
      } catch (IOException e) {
        log.warn("evicting {}: deleting {} failed: {}", v.model().describe(), dir, e.toString());
      }
      freed += v.bytes();
      evictions.incrementAndGet();
      evictedBytes.addAndGet(v.bytes());
      log.info(
          "evicted {} ({} bytes, last used {}): {}",
          v.model().describe(),
          v.bytes(),
          v.lastUsed(),
          reason);
    }
    return freed;
  }

  /** Capacity and free bytes of the data directory's file system; zeros when unreadable. */
  private long[] space() {
    try {
      FileStore fs = Files.getFileStore(dataDir);
      return new long[] {fs.getTotalSpace(), fs.getUsableSpace()};
    } catch (IOException e) {
      log.warn("cannot read the capacity of {}: {}", dataDir, e.toString());
      return new long[] {0, 0};
    }
  }
}
