package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Hands each object of a download to its {@link ObjectSink} once its bytes are durable, on a thread
 * of its own, so the download never waits for an fsync or a database round trip. The writer calls
 * {@link #run} after every write; that queues the objects the write completed, with their digests.
 * The publisher takes everything queued, fsyncs the file once (which covers every byte written
 * before those objects were queued) and hands them out in order; while it does, the writer goes on
 * reading and writing. Done inline, as before, the seed's download waited for one fsync and one
 * publish per object: on a disk shared with seven followers writing, those took most of the 12-15 s
 * a 512 MiB download needed in bench/fanout.sh.
 *
 * <p>Each object handed out is first appended to the download's {@link DownloadJournal}, so an
 * attempt that breaks off later (or a process killed) leaves a record of what a retry may keep. An
 * object the hasher had already completed when the publisher started (kept from an earlier attempt)
 * is handed out at the first {@link #run}.
 *
 * <p>A failure of the publisher (the fsync, or the sink: a lost lease) is rethrown to the writer at
 * its next write and by {@link #finish}. {@link #close} stops the publisher and waits for it, so
 * nothing is handed out after a failed download has returned (its caller withdraws what was).
 */
final class BackgroundPublisher implements ChunkedFileWriter.AfterWrite, AutoCloseable {
  private record Done(ObjectPlan object, String digest) {}

  private final FilePlan file;
  private final List<ObjectPlan> inByteOrder;
  private final RangeHasher hasher;
  private final FileChannel out;
  private final Path partial;
  private final ObjectSink sink;
  private final DownloadJournal.Writer journal;
  private final Thread thread;
  private final List<Done> queued = new ArrayList<>();
  private int handedToQueue;
  private boolean finishing;
  private boolean stopped;
  private volatile StoreException failure;

  BackgroundPublisher(
      FilePlan file,
      List<ObjectPlan> inByteOrder,
      RangeHasher hasher,
      FileChannel out,
      Path partial,
      ObjectSink sink,
      DownloadJournal.Writer journal) {
    this.journal = journal;
    this.file = file;
    this.inByteOrder = inByteOrder;
    this.hasher = hasher;
    this.out = out;
    this.partial = partial;
    this.sink = sink;
    this.thread =
        Thread.ofPlatform()
            .name("publish-" + partial.getFileName())
            .daemon()
            .start(this::publishLoop);
  }

  /** After a write: queue the objects it completed; rethrow a failure of the publisher. */
  @Override
  public void run() throws StoreException {
    StoreException f = failure;
    if (f != null) {
      throw f;
    }
    int done = hasher.completedObjects();
    if (done == handedToQueue) {
      return;
    }
    synchronized (this) {
      for (int i = handedToQueue; i < done; i++) {
        ObjectPlan o = inByteOrder.get(i);
        queued.add(new Done(o, hasher.digestOf(o)));
      }
      notifyAll();
    }
    handedToQueue = done;
  }

  /** Waits until every queued object is handed out; rethrows the publisher's failure. */
  void finish() throws StoreException {
    synchronized (this) {
      finishing = true;
      notifyAll();
    }
    join();
    StoreException f = failure;
    if (f != null) {
      throw f;
    }
  }

  /**
   * Stops the publisher and waits for it. What is still queued is not handed out, but it is fsynced
   * and journaled, so a retry after a broken-off download keeps it too.
   */
  @Override
  public void close() {
    List<Done> left;
    synchronized (this) {
      stopped = true;
      left = new ArrayList<>(queued);
      queued.clear();
      notifyAll();
    }
    join();
    if (left.isEmpty() || failure != null) {
      return;
    }
    try {
      out.force(false);
    } catch (IOException e) {
      return; // not durable, so not recorded: a retry reads these objects again
    }
    for (Done d : left) {
      journal.append(d.object(), d.digest());
    }
  }

  private void join() {
    boolean interrupted = false;
    while (thread.isAlive()) {
      try {
        thread.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void publishLoop() {
    while (true) {
      List<Done> batch;
      synchronized (this) {
        while (queued.isEmpty() && !finishing && !stopped) {
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
        }
        if (stopped || queued.isEmpty()) {
          return;
        }
        batch = new ArrayList<>(queued);
        queued.clear();
      }
      try {
        try {
          out.force(false);
        } catch (IOException e) {
          throw FileOps.writeFailure(partial, e);
        }
        for (int i = 0; i < batch.size(); i++) {
          Done d = batch.get(i);
          synchronized (this) {
            if (stopped) {
              // Not handed out, but durable (the fsync above covers them): a retry keeps them.
              batch.subList(i, batch.size()).forEach(b -> journal.append(b.object(), b.digest()));
              return;
            }
          }
          // Durable now: a later attempt may keep it (after hashing it again).
          journal.append(d.object(), d.digest());
          sink.completed(file, d.object(), d.digest());
        }
      } catch (StoreException e) {
        failure = e;
        return;
      } catch (RuntimeException e) {
        failure =
            new StoreException("publishing objects of " + file.path() + " failed: " + e, true, e);
        return;
      }
    }
  }
}
