package io.mooncake.dist.scheduler.store;

import io.mooncake.dist.scheduler.store.TaskQueue.Completion;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Group commit for task successes. A worker thread that finishes a task hands its completion in and
 * waits; whichever thread holds the flush lock records every completion queued so far with one
 * {@link TaskQueue#succeedAll} (one transaction), so tasks finishing together cost one commit,
 * while a task finishing alone is recorded at once (no timer, no added latency). With a {@link
 * Refill}, the same statement claims new tasks for the slots the finishing ones free ({@link
 * TaskQueue#succeedAndClaim}), and hands them to the refill.
 */
public final class CompletionBatcher {
  private final TaskQueue queue;
  private final int maxBatch;
  private final ReentrantLock flushLock = new ReentrantLock();
  private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();

  private final Refill refill;

  private record Waiting(Completion completion, CompletableFuture<Boolean> recorded) {}

  /**
   * Claims with a flush: the worker's side of {@link TaskQueue#succeedAndClaim}. {@link #reserve}
   * and {@link #claimed} are called by the flushing thread, once each per flush that reserved.
   */
  public interface Refill {
    /**
     * Reserves slots for tasks to claim along with {@code finishing} successes, whose own slots are
     * still taken until their threads return; 0 for none (the worker is stopping, or full).
     */
    int reserve(int finishing);

    /**
     * The tasks claimed for the {@code reserved} slots (maybe fewer, maybe none, and none when the
     * statement failed): the worker runs them and releases what is left of the reservation.
     */
    void claimed(int reserved, List<ClaimedTask> tasks);

    String nodeId();

    String leaseOwner();

    java.time.Duration lease();

    /** The source lookup's relay freshness window. */
    java.time.Duration fresh();
  }

  public CompletionBatcher(TaskQueue queue, int maxBatch) {
    this(queue, maxBatch, null);
  }

  /** With {@code refill} (may be null): every flush also claims for the slots it frees. */
  public CompletionBatcher(TaskQueue queue, int maxBatch, Refill refill) {
    if (maxBatch < 1) {
      throw new IllegalArgumentException("maxBatch must be positive, got " + maxBatch);
    }
    this.queue = queue;
    this.maxBatch = maxBatch;
    this.refill = refill;
  }

  /**
   * Records the success, possibly together with others, and returns once it is committed.
   *
   * @return false when the lease was gone (nothing written for this task)
   * @throws RuntimeException when the database could not record the batch
   */
  public boolean succeed(Completion completion) {
    Waiting mine = new Waiting(completion, new CompletableFuture<>());
    waiting.add(mine);
    flushLock.lock();
    try {
      while (!mine.recorded().isDone()) {
        flush();
      }
    } finally {
      flushLock.unlock();
    }
    try {
      return mine.recorded().join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : e;
    }
  }

  private void flush() {
    List<Waiting> batch = new ArrayList<>();
    Waiting w;
    while (batch.size() < maxBatch && (w = waiting.poll()) != null) {
      batch.add(w);
    }
    if (batch.isEmpty()) {
      return;
    }
    List<Completion> completions = batch.stream().map(Waiting::completion).toList();
    int reserved = refill == null ? 0 : refill.reserve(batch.size());
    List<ClaimedTask> claimed = List.of();
    try {
      Set<Long> recorded;
      if (reserved > 0) {
        TaskQueue.SucceededAndClaimed done =
            queue.succeedAndClaim(
                completions,
                refill.nodeId(),
                refill.leaseOwner(),
                reserved,
                refill.lease(),
                refill.fresh());
        recorded = done.recorded();
        claimed = done.claimed();
      } else {
        recorded = queue.succeedAll(completions);
      }
      batch.forEach(b -> b.recorded().complete(recorded.contains(b.completion().taskId())));
    } catch (RuntimeException e) {
      batch.forEach(b -> b.recorded().completeExceptionally(e));
    } finally {
      if (reserved > 0) {
        refill.claimed(reserved, claimed);
      }
    }
  }
}
