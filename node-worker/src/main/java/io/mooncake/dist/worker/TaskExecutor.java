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
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.transfer.ByteSink;
import io.mooncake.dist.transfer.ChunkTransferException;
import io.mooncake.dist.transfer.DirectFileSink;
import io.mooncake.dist.transfer.FetchResult;
import io.mooncake.dist.transfer.ObjectDigest;
import io.mooncake.dist.worker.store.ModelStore;
import io.mooncake.dist.worker.store.StoreException;
import java.io.IOException;
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

  /**
   * A pull from the seed, or a relaying copy, whose row was not written for this long no longer
   * holds other copies back or serves as a source. More than twice {@link RenewalCadence#AT_MOST}:
   * a running copy's progress is written with its lease's renewal (5 s until issue 19's renewals
   * every few heartbeats).
   */
  static final java.time.Duration RELAY_FRESH = java.time.Duration.ofSeconds(15);

  /**
   * Pulls from the seed one follower runs at once. One: the seed's uplink is split among the
   * followers' pulls, and every other follower relays each of those objects as it arrives, at the
   * pace it arrives. A follower's slots must be able to fill its downlink with such relays
   * (concurrency x uplink / seed pulls >= downlink), so more seed pulls per follower would starve
   * it.
   */
  static final int SEED_PULLS = 1;

  /**
   * How many times a copy looks its sources up again because a source it chose refused before any
   * byte (busy: it already sends the object to {@link Transport#READERS_PER_OBJECT} readers; or a
   * receiving follower that was claimed but has not begun to receive answered "not here"), instead
   * of walking on through the list the claim read; after that it walks on. Each costs one lookup.
   */
  static final int RELOOKS = 3;

  private final String nodeId;
  private final ModelStore store;
  private final Transport client;
  private final ReplicaCatalog replicas;
  private final TaskQueue leases;

  /** How long a publish while running renews the task's lease for (the node's lease). */
  private final java.time.Duration lease;

  private final String leaseOwner;

  /**
   * This node's copies currently pulling from their job's seed (see SourcePlanner: one at a time),
   * and the one copy waiting in place for that slot.
   */
  private final SeedSlot seedPulls;

  /** How a copy waiting in place for the seed slot hands its executor slot back meanwhile. */
  private final SeedSlot.Parking parking;

  private final Arrivals arrivals;

  /** How many objects of each job this node pulled from the seed, against its fair share. */
  private final SeedShares shares;

  /** What this node publishes, recorded before the row is visible, for the chunk server. */
  private final OwnReplicas own;

  TaskExecutor(
      String nodeId,
      ModelStore store,
      Transport client,
      ReplicaCatalog replicas,
      TaskQueue leases,
      String leaseOwner,
      java.time.Duration lease,
      SeedSlot seedPulls,
      SeedSlot.Parking parking,
      Arrivals arrivals,
      OwnReplicas own,
      SeedShares shares) {
    this.parking = parking;
    this.own = own;
    this.shares = shares;
    this.seedPulls = seedPulls;
    this.arrivals = arrivals;
    this.nodeId = nodeId;
    this.store = store;
    this.client = client;
    this.replicas = replicas;
    this.leases = leases;
    this.leaseOwner = leaseOwner;
    this.lease = lease;
  }

  Outcome execute(ClaimedTask task, Progress progress) throws TaskFailure, TaskDeferred {
    try {
      return switch (task.type()) {
        case MODEL_DOWNLOAD -> download(task, progress);
        case MODEL_VERIFY -> verify(task);
        case REPLICA_COPY -> copy(task, progress);
        case MATERIALIZE -> materialize(task);
      };
    } catch (StoreException e) {
      throw new TaskFailure(e.getMessage(), e.retryable(), e);
    }
  }

  /**
   * Reads the source into the model files, publishing each object as soon as it is durable (so
   * followers can start on it), and all of them again with the task's success. A failure withdraws
   * what this attempt published: a failed seed must not be a source. The bytes stay on disk when a
   * retry can use them; the next attempt re-checks and re-publishes them before reading on.
   */
  private Outcome download(ClaimedTask task, Progress progress) throws StoreException {
    TaskPayload payload = task.payload();
    // A seed that took over from a failed one reads only what no live node holds; its replicas
    // of the held objects come from its copies and are not this task's to withdraw.
    java.util.Set<String> held =
        payload.fillsIn() ? java.util.Set.copyOf(payload.held()) : java.util.Set.of();
    List<String> objectIds =
        payload.files().stream()
            .flatMap(f -> f.objects().stream())
            .map(ObjectPlan::objectId)
            .filter(id -> !held.contains(id))
            .toList();
    // Replicas left by an earlier attempt are withdrawn: the objects it kept are published again
    // only once this attempt has hashed them again (ModelStore's resume), the rest are rewritten.
    replicas.removeAll(nodeId, objectIds);
    Map<String, String> digests;
    try {
      digests =
          store.download(
              payload,
              progress,
              (file, object, digest) -> {
                Replica r =
                    new Replica(
                        object.objectId(),
                        nodeId,
                        object.length(),
                        digest,
                        store.finalPath(payload.model(), file).toString(),
                        object.offset());
                own.published(r);
                if (!leases.publishWhileLeased(task.taskId(), leaseOwner, lease, List.of(r))) {
                  // Retryable so the bytes stay for whoever runs the rescued task next (this
                  // node again): the lease is gone, so the outcome itself is discarded anyway.
                  throw new StoreException("lease on the download was lost; stopping", true);
                }
              });
    } catch (StoreException | RuntimeException e) {
      replicas.removeAll(nodeId, objectIds);
      throw e;
    }
    List<Replica> publish = new ArrayList<>();
    for (FilePlan file : payload.files()) {
      String path = store.finalPath(payload.model(), file).toString();
      for (ObjectPlan o : file.objects()) {
        if (!digests.containsKey(o.objectId())) {
          continue;
        }
        publish.add(
            new Replica(
                o.objectId(), nodeId, o.length(), digests.get(o.objectId()), path, o.offset()));
      }
    }
    return new Outcome(payload.bytesToFetch(), result(payload), publish);
  }

  /**
   * Seed reuse: the replicas listed for this node must still hash to their digests. Each object is
   * re-published (lease-guarded) the moment it matches, which records when it was last checked and
   * stops the pass if the lease is gone.
   */
  private Outcome verify(ClaimedTask task) throws TaskFailure {
    TaskPayload payload = task.payload();
    try {
      store.verify(
          payload,
          (file, object, digest) -> {
            Replica r =
                new Replica(
                    object.objectId(),
                    nodeId,
                    object.length(),
                    digest,
                    store.finalPath(payload.model(), file).toString(),
                    object.offset());
            own.published(r);
            if (!leases.publishWhileLeased(task.taskId(), leaseOwner, lease, List.of(r))) {
              throw new StoreException("lease on the verification was lost; stopping", false);
            }
          });
    } catch (StoreException e) {
      // The listed replicas are not trustworthy: withdraw them so nobody copies from them.
      payload.files().forEach(f -> f.objects().forEach(o -> replicas.remove(nodeId, o.objectId())));
      throw new TaskFailure(
          "seed reuse rejected, replica check failed: " + e.getMessage(), false, e);
    }
    return new Outcome(payload.totalBytes(), result(payload), List.of());
  }

  /**
   * Pulls one object from a live source in {@link SourcePlanner}'s order (followers that hold it or
   * are receiving it, least busy first, the seed last), trying the next one when a source fails or
   * sends bytes whose digest does not match what the seed published, or looking them up again when
   * a source refuses before any byte (busy serving the object to others, or a receiving follower
   * that has not begun to receive it) ({@link #RELOOKS}), and handing the copy back when every
   * source it tried was busy; waits instead when only the seed holds it and this node already pulls
   * another object from there: in place, without an executor slot, for the one copy of the node
   * that may ({@link SeedSlot}), else back in the queue ({@link TaskDeferred}). While it runs, the
   * object is in {@link Arrivals}: other followers relay it from here as it lands.
   */
  private Outcome copy(ClaimedTask task, Progress progress)
      throws TaskFailure, StoreException, TaskDeferred {
    long taskId = task.taskId();
    String jobId = task.jobId();
    TaskPayload payload = task.payload();
    FilePlan file = payload.files().get(0);
    ObjectPlan object = file.objects().get(0);
    if (object.digest() == null) {
      throw new TaskFailure(
          "object " + object.objectId() + " has no published digest on the seed", false);
    }
    ObjectDigest.Algorithm algorithm;
    try {
      algorithm = ObjectDigest.Algorithm.of(object.digest());
    } catch (IllegalArgumentException e) {
      throw new TaskFailure(
          "object "
              + object.objectId()
              + ": the seed's published digest is unusable: "
              + e.getMessage(),
          false);
    }
    Path finalPath = store.finalPath(payload.model(), file);
    Replica mine =
        new Replica(
            object.objectId(),
            nodeId,
            object.length(),
            object.digest(),
            finalPath.toString(),
            object.offset());
    // Whether this copy is the node's one copy waiting in place for its seed slot, since when.
    boolean waiting = false;
    long waitingSince = 0;
    boolean seedTakenOnce = false;
    // Sources that refused this copy before any byte (busy, or a receiving follower that answered
    // "not here"): skipped by its later rounds.
    java.util.Set<String> notHere = new java.util.HashSet<>();
    try {
      for (int round = 0; ; round++) {
        // The claim looked the sources up and named the first one other than the seed in the row
        // (TaskQueue.claimWithSources); a later round looks again.
        boolean claimed = round == 0 && task.sources() != null;
        ReplicaCatalog.CopySources found =
            claimed
                ? task.sources()
                : replicas.sources(
                    jobId,
                    object.objectId(),
                    object.digest(),
                    nodeId,
                    NodeRegistry.LIVENESS,
                    RELAY_FRESH);
        if (claimed && task.recordedSource() != null) {
          progress.sourceRecorded(task.recordedSource());
        }
        if (round == 0 && found.heldHere() && alreadyHeld(object, finalPath, algorithm)) {
          return new Outcome(object.length(), null, List.of(mine));
        }
        boolean relaying = found.followers() > 1;
        RelayChain.Place chain =
            relaying
                ? shares.chainPlace(jobId, found.seedNodeId(), nodeId)
                : RelayChain.Place.NO_CHAIN;
        if (chain.standing() == RelayChain.Standing.ON) {
          try {
            return copyAlongChain(
                payload,
                file,
                object,
                algorithm,
                finalPath,
                mine,
                chain.predecessor(),
                chain.predecessor().equals(found.seedNodeId()),
                progress);
          } catch (OffChain e) {
            shares.leaveChain(jobId);
            log.info(
                "job {}: leaving the relay chain, object {} goes by the other sources: {}",
                jobId,
                object.objectId(),
                e.getMessage());
            continue;
          }
        }
        List<Replica> sources =
            SourcePlanner.skipping(
                RelayChain.readsFromRelays(chain.standing())
                    ? found.holders()
                    : SourcePlanner.wholeHolders(found.holders(), found.arriving()),
                notHere);
        // The share is asked only when the seed is the one source left: asking starts the copy's
        // patience (SeedShares.PATIENCE).
        boolean onlySeed =
            sources.size() == 1 && sources.get(0).nodeId().equals(found.seedNodeId());
        SourcePlanner.Plan plan =
            SourcePlanner.plan(
                object.objectId(),
                sources,
                found.seedNodeId(),
                found.seedPullInFlight(),
                relaying && seedPulls.busy(),
                relaying
                    && onlySeed
                    && !found.seedPullInFlight()
                    && !seedPulls.busy()
                    && shares.holdBack(jobId, taskId));
        // Only the seed holds it: take one of this node's seed slots, or wait if other copies took
        // them first. With a single follower nobody can relay, and several objects in flight from
        // the seed are what keeps that one link full.
        boolean seedSlot =
            plan instanceof SourcePlanner.Plan.Fetch f
                && relaying
                && f.order().size() == 1
                && f.order().get(0).nodeId().equals(found.seedNodeId());
        boolean slotFull = seedSlot && !seedPulls.tryTake();
        if (slotFull || plan instanceof SourcePlanner.Plan.Wait) {
          SourcePlanner.Plan.Wait w =
              slotFull
                  ? SourcePlanner.seedSlotTaken(found.seedNodeId())
                  : (SourcePlanner.Plan.Wait) plan;
          if (w.why() == SourcePlanner.Why.OWN_SLOT) {
            if (!waiting && seedPulls.becomeWaiter()) {
              waiting = true;
              waitingSince = System.nanoTime();
            }
            if (waiting && SeedSlot.keepsWaiting(System.nanoTime() - waitingSince)) {
              awaitSeedSlot();
              continue;
            }
          }
          throw new TaskDeferred(w.reason());
        }
        if (waiting) {
          // It runs: another copy may wait in its place.
          seedPulls.endWait();
          waiting = false;
        }
        List<Replica> holders = ((SourcePlanner.Plan.Fetch) plan).order();
        try {
          // Any pull from the seed, the planned one or the last resort after every relay failed
          // (one that was claimed but not yet receiving answers "does not hold"), takes the
          // object's one seed pull first: at N = 1,000 those fallbacks were 55 seed pulls in
          // flight for 14 objects, 39 of them for one object.
          SeedPull seedPull =
              relaying && holders.stream().anyMatch(h -> h.nodeId().equals(found.seedNodeId()))
                  ? new SeedPull(
                      found.seedNodeId(),
                      () -> {
                        boolean taken =
                            leases.takeSeedPull(
                                taskId,
                                leaseOwner,
                                jobId,
                                object.objectId(),
                                found.seedNodeId(),
                                RELAY_FRESH);
                        if (taken) {
                          shares.pulled(jobId, taskId);
                        }
                        return taken;
                      })
                  : null;
          return copyFrom(
              payload,
              file,
              object,
              algorithm,
              finalPath,
              mine,
              holders,
              found.arriving(),
              found.struck(),
              seedPull,
              notHere.size() < RELOOKS,
              0,
              progress);
        } catch (SourceRefused e) {
          // Look again: who receives the object now, and how many read from each.
          notHere.add(e.nodeId);
        } catch (SeedTaken e) {
          if (seedTakenOnce) {
            throw new TaskDeferred(
                "object "
                    + object.objectId()
                    + " is on its way from the seed "
                    + found.seedNodeId()
                    + " to another follower; taking it from that follower instead of a second copy from the seed");
          }
          seedTakenOnce = true;
          // Another follower won the object's seed pull a moment ago: it now relays the object.
        } finally {
          if (seedSlot) {
            seedPulls.release();
          }
        }
      }
    } finally {
      if (waiting) {
        seedPulls.endWait();
      }
    }
  }

  /**
   * Waits, without holding an executor slot, until this node's seed slot is free or {@link
   * SeedSlot#STEP} has passed; the caller then looks the sources up again.
   */
  private void awaitSeedSlot() throws TaskDeferred {
    parking.park();
    try {
      seedPulls.awaitFree(SeedSlot.STEP);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TaskDeferred("interrupted while waiting for this node's seed slot");
    } finally {
      parking.unpark();
    }
  }

  /**
   * Copies the object from this node's predecessor in the job's relay chain ({@link RelayChain}):
   * the seed, for the chain's first follower, with as many copies at once as the node runs; else
   * the follower before it, which relays the object as it lands, asked again every {@link
   * RelayChain#STEP} until it has begun to receive the object, for at most {@link
   * RelayChain#PATIENCE}.
   *
   * @throws OffChain when the predecessor does not serve the object in time, refuses it or fails
   * @throws TaskFailure when the copy fails here (writing to this node's disk)
   */
  private Outcome copyAlongChain(
      TaskPayload payload,
      FilePlan file,
      ObjectPlan object,
      ObjectDigest.Algorithm algorithm,
      Path finalPath,
      Replica mine,
      String predecessor,
      boolean fromSeed,
      Progress progress)
      throws TaskFailure, StoreException, TaskDeferred {
    Replica source =
        new Replica(object.objectId(), predecessor, object.length(), object.digest(), null, 0);
    long waitUntil = fromSeed ? 0 : System.nanoTime() + RelayChain.PATIENCE.toNanos();
    try {
      return copyFrom(
          payload,
          file,
          object,
          algorithm,
          finalPath,
          mine,
          List.of(source),
          fromSeed ? java.util.Set.of() : java.util.Set.of(predecessor),
          java.util.Set.of(),
          null,
          true,
          waitUntil,
          progress);
    } catch (SourceRefused e) {
      throw new OffChain(
          predecessor
              + " did not begin to send object "
              + object.objectId()
              + " within "
              + RelayChain.PATIENCE.toSeconds()
              + " s");
    } catch (TaskFailure e) {
      if (!e.sourcesFailed()) {
        throw e; // this node's disk, not the predecessor
      }
      throw new OffChain(e.getMessage());
    }
  }

  /** This node leaves its job's relay chain: the copy looks its sources up instead. */
  private static final class OffChain extends RuntimeException {
    OffChain(String why) {
      super(why, null, false, false);
    }
  }

  /**
   * The pause between two asks of a chain predecessor that has not begun to receive the object: a
   * poll of another node, which tells nobody when it begins (its "not here" is all there is),
   * bounded by {@link RelayChain#PATIENCE}.
   */
  private static void pause(java.time.Duration d) throws TaskDeferred {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TaskDeferred("interrupted while waiting for a relay to begin");
    }
  }

  /** The one pull of an object from the seed, taken in Postgres just before it starts. */
  private record SeedPull(String seed, java.util.function.BooleanSupplier take) {}

  /** Another follower is already pulling the object from the seed: look for sources again. */
  private static final class SeedTaken extends RuntimeException {
    SeedTaken() {
      super(null, null, false, false);
    }
  }

  /**
   * A source refused before any byte came: busy serving the object to others, or a receiving
   * follower that has not begun to receive it ("not here"). Look the sources up again.
   */
  private static final class SourceRefused extends RuntimeException {
    final String nodeId;

    SourceRefused(String nodeId) {
      super(null, null, false, false);
      this.nodeId = nodeId;
    }
  }

  /**
   * A database hiccup here is no reason to fail the copy: at worst the seed sends the object twice.
   */
  private static boolean takeSeedPull(SeedPull pull) {
    try {
      return pull.take().getAsBoolean();
    } catch (RuntimeException e) {
      log.warn("cannot record the pull from the seed: {}", e.toString());
      return true;
    }
  }

  private Outcome copyFrom(
      TaskPayload payload,
      FilePlan file,
      ObjectPlan object,
      ObjectDigest.Algorithm algorithm,
      Path finalPath,
      Replica mine,
      List<Replica> holders,
      java.util.Set<String> arriving,
      java.util.Set<String> struck,
      SeedPull seedPull,
      boolean relook,
      long waitUntil,
      Progress progress)
      throws TaskFailure, StoreException, TaskDeferred {
    if (holders.isEmpty()) {
      throw new TaskFailure(
          "no node holds object "
              + object.objectId()
              + " (none live, none heard from within "
              + ReplicaCatalog.LAPSED.toMinutes()
              + " min)",
          true);
    }
    String lastError = null;
    // Whether every source tried so far refused to serve for now (BUSY): then the copy waits.
    boolean onlyBusy = true;
    // Bytes of the object already in our file from a fetch that broke off: the next holder sends
    // only the rest (a range request), and the whole object is then checked by reading it back.
    long landed = 0;
    for (Replica holder : holders) {
      NodeId source = NodeId.parse(holder.nodeId());
      boolean fromArriving = arriving.contains(holder.nodeId());
      boolean busy = false;
      long from = landed;
      ByteSink sink = null;
      io.mooncake.dist.transfer.FileRange here = null;
      boolean verified = false;
      try (ModelStore.ObjectTarget target = store.openObjectTarget(payload.model(), file)) {
        // Registered before the source is named in the row: once others see this copy, it serves.
        here =
            arrivals.begin(
                object.objectId(), target.path(), object.offset(), object.length(), from);
        if (seedPull != null
            && holder.nodeId().equals(seedPull.seed())
            && !takeSeedPull(seedPull)) {
          throw new SeedTaken();
        }
        progress.source(holder.nodeId());
        long at = object.offset() + from;
        FetchResult r;
        while (true) {
          sink =
              here.arrival()
                  .tracking(
                      target.blockSize() > 0 && DirectFileSink.aligned(at, target.blockSize())
                          ? new DirectFileSink(
                              target::direct, target.buffered(), at, target.blockSize())
                          : ByteSink.positional(target.buffered(), at),
                      from);
          try {
            r =
                client.fetch(
                    source.host(),
                    source.port(),
                    object.objectId(),
                    from,
                    object.length() - from,
                    sink,
                    algorithm,
                    bytes -> progress.accept(from + bytes));
            break;
          } catch (ChunkTransferException e) {
            // A chain's predecessor that has not begun to receive the object yet: ask again in a
            // moment, this copy's own arrival (and whoever reads it) staying open meanwhile.
            if (!RelayChain.waitsFor(e.kind(), sink.stored(), waitUntil, System.nanoTime())) {
              throw e;
            }
            pause(RelayChain.STEP);
          }
        }
        // Direct writes are on the device already; this makes the tail and the metadata durable.
        target.buffered().force(false);
        String digest = from == 0 ? r.digest() : readBack(finalPath, object, algorithm);
        if (r.bytes() == object.length() - from && ObjectDigest.same(digest, object.digest())) {
          arrivals.verified(here);
          verified = true;
          if (struck.contains(holder.nodeId())) {
            // One good copy clears its strikes; a holder with none needs no write.
            strikes(() -> replicas.holderServed(holder.nodeId()));
          }
          if (from > 0) {
            log.info(
                "object {}: resumed at byte {} from {} after an interrupted fetch; verified whole",
                object.objectId(),
                from,
                holder.nodeId());
          }
          return new Outcome(object.length(), null, List.of(mine));
        }
        landed = 0;
        if (from == 0) {
          lastError =
              "digest mismatch for object "
                  + object.objectId()
                  + " from "
                  + holder.nodeId()
                  + ": expected "
                  + object.digest()
                  + ", got "
                  + digest;
          if (!fromArriving) {
            // The holder's bytes do not match the digest it published: drop that replica so nobody
            // else copies it (its own node re-checks or re-copies when a job needs the object
            // again).
            replicas.remove(holder.nodeId(), object.objectId());
          }
        } else {
          // Two holders contributed; which one was wrong is unknown, so neither replica is dropped.
          lastError =
              "digest mismatch for object "
                  + object.objectId()
                  + " resumed at byte "
                  + from
                  + " from "
                  + holder.nodeId()
                  + ": expected "
                  + object.digest()
                  + ", got "
                  + digest
                  + "; fetching it whole";
        }
      } catch (ChunkTransferException e) {
        if (e.kind() == ChunkTransferException.Kind.LOCAL_IO
            && e.getCause() instanceof IOException io) {
          // Our disk, not the peer: another holder would not help.
          StoreException local = store.writeFailure(finalPath, io);
          throw new TaskFailure(
              "copy of object " + object.objectId() + ": " + local.getMessage(),
              local.retryable(),
              e);
        }
        landed = from + (sink == null ? 0 : sink.stored());
        busy = e.kind() == ChunkTransferException.Kind.BUSY;
        if (relook
            && landed == 0
            && (busy || fromArriving && e.kind() == ChunkTransferException.Kind.NOT_FOUND)) {
          log.debug(
              "object {}: {} does not serve it now ({}); looking again",
              object.objectId(),
              holder.nodeId(),
              e.getMessage());
          throw new SourceRefused(holder.nodeId());
        }
        lastError =
            "copy of object "
                + object.objectId()
                + " from "
                + holder.nodeId()
                + " failed: "
                + e.getMessage()
                + (landed > 0
                    ? " (" + landed + " bytes kept; the next holder sends the rest)"
                    : "");
      } catch (IOException e) {
        throw new TaskFailure(
            "cannot write object " + object.objectId() + " to " + finalPath + ": " + e.getMessage(),
            true,
            e);
      } finally {
        if (here != null && !verified) {
          arrivals.failed(object.objectId(), here);
        }
      }
      String error = lastError;
      onlyBusy &= busy;
      if (!fromArriving && !busy) {
        // A node relaying an object it is still receiving fails when its own source does: no
        // strike; nor does a node that is busy serving others.
        strikes(() -> replicas.holderFailed(holder.nodeId(), error));
      }
      log.warn("{}; trying the next holder", lastError);
    }
    if (onlyBusy) {
      throw new TaskDeferred(
          "every source of object "
              + object.objectId()
              + " it was offered is busy serving it to others; asking again shortly");
    }
    throw new TaskFailure.SourcesFailed(lastError);
  }

  /** The digest of the object's bytes as they now stand in our file (after a resumed fetch). */
  private String readBack(Path finalPath, ObjectPlan object, ObjectDigest.Algorithm algorithm)
      throws StoreException {
    Path file =
        store
            .existingFile(finalPath)
            .orElseThrow(
                () ->
                    new StoreException(
                        "the file of object " + object.objectId() + " vanished: " + finalPath,
                        true));
    return store.digestRange(file, object.offset(), object.length(), algorithm);
  }

  /** Holder bookkeeping is advisory: a database hiccup here must not fail the copy itself. */
  private static void strikes(Runnable update) {
    try {
      update.run();
    } catch (RuntimeException e) {
      log.warn("cannot record the holder's serve outcome: {}", e.toString());
    }
  }

  /** A node that already holds the object (e.g. staged by an earlier job) verifies it locally. */
  private boolean alreadyHeld(ObjectPlan object, Path finalPath, ObjectDigest.Algorithm algorithm) {
    Optional<Replica> local = replicas.local(nodeId, object.objectId());
    if (local.isEmpty() || !ObjectDigest.same(object.digest(), local.get().digest())) {
      return false;
    }
    Optional<Path> existing = store.existingFile(finalPath);
    try {
      return existing.isPresent()
          && ObjectDigest.same(
              object.digest(),
              store.digestRange(existing.get(), object.offset(), object.length(), algorithm));
    } catch (StoreException e) {
      return false;
    }
  }

  private Outcome materialize(ClaimedTask task) throws StoreException {
    // Every copy of the job on this node is done.
    shares.forget(task.jobId());
    TaskPayload payload = task.payload();
    long bytes =
        store.materialize(
            payload,
            file -> {
              try {
                return replicas.matchesVerifiedSeed(
                    task.jobId(),
                    nodeId,
                    file.objects().stream().map(ObjectPlan::objectId).toList());
              } catch (RuntimeException e) {
                log.warn(
                    "cannot compare {} with the seed's digests, hashing it instead: {}",
                    file.path(),
                    e.toString());
                return false;
              }
            });
    return new Outcome(bytes, result(payload), List.of());
  }

  private String result(TaskPayload payload) {
    return Json.write(Map.of("local_path", store.modelDir(payload.model()).toString()));
  }
}
