package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;

/**
 * Receives each object of a download as soon as its bytes are durable and its digest known, so the
 * caller can publish it while the rest of the file is still being read. Called from the download's
 * {@link BackgroundPublisher} thread, one object at a time, in byte order.
 */
@FunctionalInterface
public interface ObjectSink {
  /**
   * @throws StoreException to abort the download (e.g. the task's lease is gone)
   */
  void completed(FilePlan file, ObjectPlan object, String digest) throws StoreException;
}
