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
      ObjectSink sink) {
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

  /** Stops the publisher (what is still queued is not handed out) and waits for it. */
  @Override
  public void close() {
    synchronized (this) {
      stopped = true;
      queued.clear();
      notifyAll();
    }
    join();
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
        for (Done d : batch) {
          synchronized (this) {
            if (stopped) {
              return;
            }
          }
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
