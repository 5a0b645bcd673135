package io.mooncake.dist.master.nodelink;

import io.mooncake.dist.scheduler.store.NodeDisks;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.NodeRegistry.Beat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit of the heartbeats node links send to this master: a request waits while one thread
 * writes everything that arrived since its last write in one statement ({@link
 * NodeRegistry#heartbeatAll}), so a thousand nodes beating every 2 s cost Postgres a statement per
 * {@link #PACE} instead of 500 a second.
 */
public final class HeartbeatBatcher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HeartbeatBatcher.class);

  /** The least time between two writes: what a heartbeat may wait for company. */
  static final Duration PACE = Duration.ofMillis(200);

  private record Pending(Beat beat, CompletableFuture<Boolean> recorded) {}

  private final NodeRegistry registry;
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
  private final Thread writer;
  private volatile boolean running = true;

  public HeartbeatBatcher(NodeRegistry registry) {
    this.registry = registry;
    this.writer = Thread.ofPlatform().daemon().name("node-heartbeats").start(this::run);
  }

  /**
   * Records {@code beat} with the others of its batch.
   *
   * @return completes true when recorded, false when another instance has registered under the
   *     node's id; exceptionally when the database could not be written or the node's row was held
   *     by another transaction (the node then writes its heartbeat itself)
   */
  public CompletableFuture<Boolean> submit(Beat beat) {
    CompletableFuture<Boolean> f = new CompletableFuture<>();
    if (!running) {
      f.completeExceptionally(new IllegalStateException("the master is stopping"));
      return f;
    }
    queue.add(new Pending(beat, f));
    return f;
  }

  private void run() {
    List<Pending> batch = new ArrayList<>();
    while (running) {
      try {
        batch.add(queue.take());
        Thread.sleep(PACE.toMillis());
      } catch (InterruptedException e) {
        break;
      }
      queue.drainTo(batch);
      write(batch);
      batch.clear();
    }
    queue.drainTo(batch);
    batch.forEach(
        p -> p.recorded().completeExceptionally(new IllegalStateException("master stopping")));
  }

  private void write(List<Pending> batch) {
    // The latest beat of a node wins; one row per node keeps the statement's arrays small.
    java.util.Map<String, Beat> latest = new java.util.LinkedHashMap<>();
    // Per-model disk figures are changes, not a state: a node's earlier beat in the batch keeps
    // those its latest beat does not repeat.
    batch.forEach(p -> latest.merge(p.beat().nodeId(), p.beat(), HeartbeatBatcher::later));
    RuntimeException failure = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      try {
        NodeRegistry.Beaten done = registry.heartbeatAll(new ArrayList<>(latest.values()));
        for (Pending p : batch) {
          String node = p.beat().nodeId();
          if (done.busy().contains(node)) {
            // Its row was held by another transaction: not recorded, still registered.
            p.recorded().completeExceptionally(new RowBusy(node));
          } else {
            p.recorded().complete(done.recorded().contains(node));
          }
        }
        return;
      } catch (RuntimeException e) {
        // A deadlock with a scheduler pass touching the same task rows is retried at once.
        failure = e;
        log.warn(
            "writing {} node heartbeats failed (attempt {}): {}",
            latest.size(),
            attempt,
            rootMessage(e));
      }
    }
    RuntimeException e = failure;
    batch.forEach(p -> p.recorded().completeExceptionally(e));
  }

  private static Beat later(Beat earlier, Beat later) {
    if (earlier.disk() == null || earlier.disk().changed().isEmpty() || later.disk() == null) {
      return later;
    }
    java.util.Map<io.mooncake.dist.scheduler.domain.ModelRef, NodeDisks.Usage> changes =
        new java.util.LinkedHashMap<>();
    earlier.disk().changed().forEach(u -> changes.put(u.model(), u));
    later.disk().changed().forEach(u -> changes.put(u.model(), u));
    NodeRegistry.Disk d = later.disk();
    return new Beat(
        later.nodeId(),
        later.instanceId(),
        later.leaseOwner(),
        later.runningTaskIds(),
        later.lease(),
        new NodeRegistry.Disk(
            d.capacityBytes(),
            d.freeBytes(),
            d.highWatermarkPct(),
            d.lowWatermarkPct(),
            List.copyOf(changes.values())));
  }

  /** A heartbeat skipped because its node's row was locked at that moment. */
  static final class RowBusy extends RuntimeException {
    RowBusy(String node) {
      super("the row of node " + node + " was held by another transaction", null, false, false);
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.toString();
  }

  @Override
  public void close() {
    running = false;
    writer.interrupt();
  }
}
