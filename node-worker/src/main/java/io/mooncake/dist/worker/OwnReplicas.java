package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.Replica;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The replicas this node itself published (or found valid on its own disk at start), by object id.
 * The chunk server serves a replica row only when it matches an entry here: a row that someone with
 * database access wrote for this node, pointing at another file or range, is not served.
 */
final class OwnReplicas {
  private record Where(String filePath, long fileOffset, long sizeBytes) {}

  private final ConcurrentHashMap<String, Where> byObject = new ConcurrentHashMap<>();

  /** Records a replica this node is about to publish. */
  void published(Replica r) {
    byObject.put(r.objectId(), new Where(r.filePath(), r.fileOffset(), r.sizeBytes()));
  }

  /** Whether {@code r} names the same file and byte range as this node's own publication. */
  boolean isOwn(Replica r) {
    return new Where(r.filePath(), r.fileOffset(), r.sizeBytes())
        .equals(byObject.get(r.objectId()));
  }
}
