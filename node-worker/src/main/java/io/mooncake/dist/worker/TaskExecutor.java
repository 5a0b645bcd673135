package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.transfer.ChunkClient;
import io.mooncake.dist.transfer.ChunkTransferException;
import io.mooncake.dist.transfer.FetchResult;
import io.mooncake.dist.worker.store.ModelStore;
import io.mooncake.dist.worker.store.StoreException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs one claimed task of any type against the local store and the transfer client. */
final class TaskExecutor {
  private static final Logger log = LoggerFactory.getLogger(TaskExecutor.class);

  private final String nodeId;
  private final ModelStore store;
  private final ChunkClient client;
  private final ReplicaCatalog replicas;

  TaskExecutor(String nodeId, ModelStore store, ChunkClient client, ReplicaCatalog replicas) {
    this.nodeId = nodeId;
    this.store = store;
    this.client = client;
    this.replicas = replicas;
  }

  Outcome execute(ClaimedTask task, Progress progress) throws TaskFailure {
    try {
      return switch (task.type()) {
        case MODEL_DOWNLOAD -> download(task.payload(), progress);
        case MODEL_VERIFY -> verify(task.payload());
        case REPLICA_COPY -> copy(task.payload(), progress);
        case MATERIALIZE -> materialize(task.payload());
      };
    } catch (StoreException e) {
      throw new TaskFailure(e.getMessage(), e.retryable(), e);
    }
  }

  /** Reads the source into the model files and publishes every object with its digest. */
  private Outcome download(TaskPayload payload, Progress progress) throws StoreException {
    Map<String, String> digests = store.download(payload, progress);
    List<Replica> publish = new ArrayList<>();
    for (FilePlan file : payload.files()) {
      String path = store.finalPath(payload.model(), file).toString();
      for (ObjectPlan o : file.objects()) {
        publish.add(new Replica(o.objectId(), nodeId, o.length(), digests.get(o.objectId()), path, o.offset()));
      }
    }
    return new Outcome(payload.totalBytes(), result(payload), publish);
  }

  /** Seed reuse: the replicas listed for this node must still hash to their digests. */
  private Outcome verify(TaskPayload payload) throws TaskFailure {
    try {
      store.verify(payload);
    } catch (StoreException e) {
      // The listed replicas are not trustworthy: withdraw them so nobody copies from them.
      payload.files().forEach(f -> f.objects().forEach(o -> replicas.remove(nodeId, o.objectId())));
      throw new TaskFailure("seed reuse rejected, replica check failed: " + e.getMessage(), false, e);
    }
    return new Outcome(payload.totalBytes(), result(payload), List.of());
  }

  /**
   * Pulls one object from the least busy live holder, trying the next holder when one fails or
   * sends bytes whose digest does not match what the seed published.
   */
  private Outcome copy(TaskPayload payload, Progress progress) throws TaskFailure, StoreException {
    FilePlan file = payload.files().get(0);
    ObjectPlan object = file.objects().get(0);
    if (object.digest() == null) {
      throw new TaskFailure("object " + object.objectId() + " has no published digest on the seed", false);
    }
    Path finalPath = store.finalPath(payload.model(), file);
    Replica mine = new Replica(object.objectId(), nodeId, object.length(), object.digest(), finalPath.toString(), object.offset());
    if (alreadyHeld(object, finalPath)) {
      return new Outcome(object.length(), null, List.of(mine));
    }
    List<Replica> holders = replicas.liveHolders(object.objectId(), nodeId, NodeRegistry.LIVENESS);
    if (holders.isEmpty()) {
      throw new TaskFailure("no live node holds object " + object.objectId(), true);
    }
    String lastError = null;
    for (Replica holder : holders) {
      NodeId source = NodeId.parse(holder.nodeId());
      progress.source(holder.nodeId());
      try (FileChannel target = store.openForObjectWrite(payload.model(), file)) {
        FetchResult r = client.fetchBlocking(source.host(), source.port(), object.objectId(), 0, object.length(),
            target, object.offset(), progress);
        String digest = "sha256:" + r.sha256Hex();
        if (r.bytes() == object.length() && digest.equals(object.digest())) {
          target.force(false);
          return new Outcome(object.length(), null, List.of(mine));
        }
        lastError = "digest mismatch for object " + object.objectId() + " from " + holder.nodeId()
            + ": expected " + object.digest() + ", got " + digest;
      } catch (ChunkTransferException e) {
        lastError = "copy of object " + object.objectId() + " from " + holder.nodeId() + " failed: " + e.getMessage();
      } catch (IOException e) {
        throw new TaskFailure("cannot write object " + object.objectId() + " to " + finalPath + ": " + e.getMessage(),
            true, e);
      }
      log.warn("{}; trying the next holder", lastError);
    }
    throw new TaskFailure(lastError, true);
  }

  /** A node that already holds the object (e.g. staged by an earlier job) verifies it locally. */
  private boolean alreadyHeld(ObjectPlan object, Path finalPath) {
    Optional<Replica> local = replicas.local(nodeId, object.objectId());
    if (local.isEmpty() || !object.digest().equals(local.get().digest())) {
      return false;
    }
    Optional<Path> existing = store.existingFile(finalPath);
    try {
      return existing.isPresent() && object.digest().equals(store.digestRange(existing.get(), object.offset(), object.length()));
    } catch (StoreException e) {
      return false;
    }
  }

  private Outcome materialize(TaskPayload payload) throws StoreException {
    long bytes = store.materialize(payload);
    return new Outcome(bytes, result(payload), List.of());
  }

  private String result(TaskPayload payload) {
    return Json.write(Map.of("local_path", store.modelDir(payload.model()).toString()));
  }
}
