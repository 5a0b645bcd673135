package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;

/**
 * Receives each object of a download as soon as its bytes are durable and its digest known, so
 * the caller can publish it while the rest of the file is still being read.
 */
@FunctionalInterface
public interface ObjectSink {
  /**
   * @throws StoreException to abort the download (e.g. the task's lease is gone)
   */
  void completed(FilePlan file, ObjectPlan object, String digest) throws StoreException;

  /**
   * An after-write hook that fsyncs and hands out every object completed since the last call.
   * One fsync covers every object completed by that write.
   */
  static ChunkedFileWriter.AfterWrite publishing(FilePlan file, List<ObjectPlan> inByteOrder, RangeHasher hasher,
      FileChannel out, Path partial, ObjectSink sink) {
    int[] published = {0};
    return () -> {
      int done = hasher.completedObjects();
      if (done == published[0]) {
        return;
      }
      try {
        out.force(false);
      } catch (IOException e) {
        throw FileOps.writeFailure(partial, e);
      }
      for (int i = published[0]; i < done; i++) {
        ObjectPlan o = inByteOrder.get(i);
        sink.completed(file, o, hasher.digestOf(o));
      }
      published[0] = done;
    };
  }
}
