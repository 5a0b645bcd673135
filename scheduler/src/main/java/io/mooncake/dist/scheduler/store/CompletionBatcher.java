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
 * while a task finishing alone is recorded at once (no timer, no added latency).
 */
public final class CompletionBatcher {
  private final TaskQueue queue;
  private final int maxBatch;
  private final ReentrantLock flushLock = new ReentrantLock();
  private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();

  private record Waiting(Completion completion, CompletableFuture<Boolean> recorded) {}

  public CompletionBatcher(TaskQueue queue, int maxBatch) {
    if (maxBatch < 1) {
      throw new IllegalArgumentException("maxBatch must be positive, got " + maxBatch);
    }
    this.queue = queue;
    this.maxBatch = maxBatch;
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
    try {
      Set<Long> recorded = queue.succeedAll(batch.stream().map(Waiting::completion).toList());
      batch.forEach(b -> b.recorded().complete(recorded.contains(b.completion().taskId())));
    } catch (RuntimeException e) {
      batch.forEach(b -> b.recorded().completeExceptionally(e));
    }
  }
}
