package io.mooncake.dist.worker;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.scheduler.store.ArtifactDeletions;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.worker.disk.ModelDirectory;
import io.mooncake.dist.worker.store.ModelStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's share of {@code DELETE /api/v1/model-distribution/artifacts}: claims this node's {@code
 * artifact_deletions} rows one at a time, removes the model directory recursively (never following
 * links, refusing anything outside the data directory), withdraws this node's replica rows under
 * it, and marks the row done (or failed with the reason). Called from the claim loop, at most once
 * per poll interval.
 */
final class DeleteArtifacts {
  private static final Logger log = LoggerFactory.getLogger(DeleteArtifacts.class);

  private ArtifactDeletions deletions;
  private long lastRunNanos;

  /** Processes this node's pending deletions, unless it did less than {@code poll} ago. */
  void runPending(
      Database db,
      String nodeId,
      String leaseOwner,
      ModelStore store,
      ReplicaCatalog replicas,
      Duration poll,
      Duration lease) {
    long now = System.nanoTime();
    if (lastRunNanos != 0 && now - lastRunNanos < poll.toNanos()) {
      return;
    }
    lastRunNanos = now;
    if (deletions == null) {
      deletions = new ArtifactDeletions(db.dsl());
    }
    for (Optional<ArtifactDeletions.Claimed> c;
        (c = deletions.claim(nodeId, leaseOwner, lease)).isPresent(); ) {
      ArtifactDeletions.Claimed claimed = c.get();
      try {
        Path dir = store.modelDir(claimed.model());
        Path models = store.dataDir().resolve("models");
        if (!dir.startsWith(models) || dir.equals(models)) {
          throw new IOException(
              "refusing to delete " + dir + ": not a model directory under " + models);
        }
        long files = ModelDirectory.deleteRecursively(dir);
        int rows = replicas.removeUnder(nodeId, dir.toString());
        deletions.done(claimed.deletionId(), leaseOwner);
        log.info(
            "deleted the artifacts of {} ({}, {} files, {} replica rows)",
            claimed.model(),
            dir,
            files,
            rows);
      } catch (IOException | RuntimeException e) {
        log.warn("deleting the artifacts of {} failed: {}", claimed.model(), e.toString());
        deletions.failed(claimed.deletionId(), leaseOwner, e.toString());
      }
    }
  }
}
