package io.mooncake.dist.worker;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.PgListener;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.domain.TaskType;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CompletionBatcher;
import io.mooncake.dist.scheduler.store.NodeDisks;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.transfer.ChunkSecurity;
import io.mooncake.dist.transfer.FileRange;
import io.mooncake.dist.transfer.ObjectDigest;
import io.mooncake.dist.worker.disk.DiskKeeper;
import io.mooncake.dist.worker.http.ClientEndpoint;
import io.mooncake.dist.worker.http.WorkerMetrics;
import io.mooncake.dist.worker.security.ClusterSecret;
import io.mooncake.dist.worker.store.ModelStore;
import io.mooncake.dist.worker.store.SourceCredentials;
import io.mooncake.dist.worker.store.SourceOpener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's worker: chunk server, registration, heartbeat (every few of which also renew task
 * leases, {@link RenewalCadence}) and the claim loop. Everything it knows lives in Postgres or in
 * its data directory, so killing and restarting it loses nothing: its unfinished tasks go back to
 * pending under the new instance.
 */
public final class NodeWorker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NodeWorker.class);

  /** Settings; see {@code mooncake_client --help}. */
  public record Settings(
      NodeId nodeId,
      Path dataDir,
      String bindHost,
      int concurrency,
      Duration heartbeat,
      Duration lease,
      Duration poll,
      long uploadBytesPerSecond,
      long downloadBytesPerSecond) {
    /** Without rate limits. */
    public Settings(
        NodeId nodeId,
        Path dataDir,
        String bindHost,
        int concurrency,
        Duration heartbeat,
        Duration lease,
        Duration poll) {
      this(nodeId, dataDir, bindHost, concurrency, heartbeat, lease, poll, 0, 0);
    }
  }

  private final Settings settings;
  private final String security;
  private final Database db;
  private final String nodeId;
  private final String leaseOwner;
  private final TaskQueue queue;

  /** Successes of tasks that finish together are recorded in one transaction. */
  private final CompletionBatcher completions;

  private final NodeRegistry registry;
  private final ReplicaCatalog replicas;
  private ModelStore store;
  private SourceCredentials credentials = SourceCredentials.NONE;
  private boolean fullReverify;
  private ObjectDigest.Algorithm publishes = ObjectDigest.Algorithm.CRC32C_CRC32;
  private final Transport transport;
  private final ExecutorService executor;
  private volatile boolean virtualThreads;
  private final Semaphore wake = new Semaphore(0);
  private final AtomicInteger inFlight = new AtomicInteger();

  /**
   * Copies of this node pulling from their job's seed right now (at most one; see SourcePlanner).
   */
  private final SeedSlot seedPulls = new SeedSlot(TaskExecutor.SEED_PULLS);

  /** A copy waiting in place for the seed slot gives its executor slot back meanwhile. */
  private final SeedSlot.Parking parking =
      new SeedSlot.Parking() {
        @Override
        public void park() {
          inFlight.decrementAndGet();
          wake.release();
        }

        @Override
        public void unpark() {
          inFlight.incrementAndGet();
        }
      };

  /** This node's seed pulls per job against its fair share (see SourcePlanner). */
  private final SeedShares seedShares;

  /** The replicas this node published itself: the only ones its chunk server serves. */
  private final OwnReplicas own = new OwnReplicas();

  /** Objects being received here, relayed while they arrive. */
  private final Arrivals arrivals = new Arrivals();

  private ProgressReporter progressReporter;

  /** When tasks this worker deferred or failed for a retry become claimable again. */
  private final DueTimes dueTimes = new DueTimes();

  /** This node's share of artifact deletions (DELETE /api/v1/model-distribution/artifacts). */
  private final DeleteArtifacts deleteArtifacts = new DeleteArtifacts();

  /**
   * Jobs whose placement on this node failed for good: their remaining copies fail fast and any
   * partial file they touch is removed again, since copies already in flight may recreate it.
   */
  private final java.util.Set<String> abandonedJobs =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** Tasks being executed right now: the only leases the heartbeat renews. */
  private final java.util.Set<Long> executing = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** The model of each task being executed: never evicted meanwhile. */
  private final java.util.Map<Long, ModelRef> executingModels =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Eviction watermarks ({@code --evict-high-watermark}, {@code --evict-low-watermark}). */
  private DiskKeeper.Watermarks watermarks = DiskKeeper.Watermarks.DEFAULT;

  /** Admission and eviction on this node's disk (issue 22); set by {@link #start()}. */
  private DiskKeeper disk;

  private Thread diskLoop;

  private final String instanceId = UUID.randomUUID().toString();
  private Transport.Served server;
  private PgListener listener;
  private Thread loop;
  private Thread heartbeat;
  private volatile boolean running = true;

  /** In-process counters behind {@code GET /metrics}. */
  private final WorkerMetrics metrics = new WorkerMetrics();

  /** -1 = no HTTP endpoint, 0 = an ephemeral port, else that port. */
  private int httpPort = -1;

  /** Hold a LISTEN session for wake-ups (off through a transaction-mode pooler). */
  private boolean listen = true;

  /** The longest claim poll interval: empty polls back off from {@code poll} up to this. */
  private Duration idlePoll;

  /**
   * How often the progress of running tasks is written (one statement for all of them) when the
   * heartbeat does not carry it (a heartbeat slower than {@link ProgressReporter#RIDE_AT_MOST}).
   * Each write also keeps a relaying copy fresh for {@code TaskExecutor.RELAY_FRESH} (15 s); the
   * status page polls every 2 s. Every 250 ms, it was the most frequent statement per copy at 100
   * nodes (issue 19).
   */
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(1);

  /** The masters of the node link ({@code --master-url}); empty for none. */
  private List<java.net.URI> masters = List.of();

  private MasterLink masterLink;

  /**
   * The longest claim wait while wake-ups arrive through the master link: a safety net for a lost
   * wake-up, not the way work is found.
   */
  static final Duration LINKED_IDLE_POLL = Duration.ofSeconds(60);

  /**
   * A notification of artifact deletions arrived (or one may have been missed): look at them on the
   * next pass, whatever the cadence. Task wake-ups do not set it (V023: deletions have their own
   * payload), or every release of a job would make every node poll its deletions.
   */
  private volatile boolean notified;

  private ClientEndpoint endpoint;
  private final long startedNanos = System.nanoTime();

  /** {@link System#nanoTime()} of the last successful heartbeat; 0 while none succeeded. */
  private volatile long lastHeartbeatNanos;

  /**
   * A worker whose chunk port admits the peers that prove the database's cluster secret, without
   * TLS.
   */
  public NodeWorker(Settings settings, Database db) {
    this(settings, db, ChunkSecurity.of(ClusterSecret.fromDatabase(db)));
  }

  /**
   * @param security what the chunk server demands of peers and the chunk client proves to them: the
   *     cluster secret (the same on every member) and TLS, if on
   */
  public NodeWorker(Settings settings, Database db, ChunkSecurity security) {
    this(
        settings,
        db,
        Transport.chunks(
            security, settings.uploadBytesPerSecond(), settings.downloadBytesPerSecond()));
  }

  /**
   * A worker whose objects cross the network through {@code transport} (the chunk protocol, or the
   * fleet benchmark's timing model); it closes the transport when closed.
   */
  public NodeWorker(Settings settings, Database db, Transport transport) {
    this.settings = settings;
    this.security = transport.toString();
    this.transport = transport;
    this.db = db;
    this.nodeId = settings.nodeId().toString();
    this.leaseOwner = nodeId + "/" + instanceId;
    this.queue = new TaskQueue(db.dsl());
    this.seedShares =
        new SeedShares(
            jobId ->
                io.mooncake.dist.scheduler.store.JobShape.read(
                    db.dsl(), jobId, RelayChain.MAX_FOLLOWERS));
    this.completions = new CompletionBatcher(queue, 64, new Refill());
    this.registry = new NodeRegistry(db.dsl());
    this.replicas = new ReplicaCatalog(db.dsl());
    this.store = newStore();
    // One thread more than the concurrency: the copy waiting in place for the seed slot keeps its
    // thread while it hands its slot back (SeedSlot).
    this.executor =
        Executors.newFixedThreadPool(
            settings.concurrency() + 1, r -> thread("task-" + nodeId, false).unstarted(r));
  }

  /**
   * Fetch HTTP(S) sources with the headers {@code credentials} configures for their URLs ({@code
   * --source-credentials}). Call before {@link #start()}.
   */
  public NodeWorker sourceCredentials(SourceCredentials credentials) {
    this.credentials = credentials;
    this.store = newStore();
    return this;
  }

  /**
   * Seed reuse re-hashes every file, even one unchanged since this node hashed it ({@code
   * --full-reverify}). Call before {@link #start()}.
   */
  public NodeWorker fullReverify(boolean on) {
    this.fullReverify = on;
    this.store = newStore();
    return this;
  }

  /**
   * The digest this node publishes for the objects it downloads as a seed ({@code --object-digest};
   * default {@code crc32c-crc32}). Followers verify with whatever the published digest names. Call
   * before {@link #start()}.
   */
  public NodeWorker objectDigest(ObjectDigest.Algorithm algorithm) {
    this.publishes = java.util.Objects.requireNonNull(algorithm, "algorithm");
    this.store = newStore();
    return this;
  }

  /**
   * Gives {@code <data-dir>/models} and everything in it to {@code group}, the group a serving
   * engine runs as ({@code --data-group}); what is created later inherits it. Call before {@link
   * #start()}.
   *
   * @throws IllegalArgumentException naming the group when it is unknown or cannot be given
   */
  public NodeWorker dataGroup(String group) {
    io.mooncake.dist.worker.store.DataTree.shareWith(store.dataDir(), group);
    return this;
  }

  private ModelStore newStore() {
    return new ModelStore(
        settings.dataDir(), new SourceOpener(credentials), fullReverify, publishes);
  }

  /**
   * Serve {@code GET /health} and {@code GET /metrics} on {@code port} of the bind host once
   * started: -1 = not at all (the default), 0 = an ephemeral port. Call before {@link #start()}.
   */
  public NodeWorker httpPort(int port) {
    this.httpPort = port;
    return this;
  }

  /**
   * Whether to hold a LISTEN session for wake-ups ({@code --no-listen} turns it off: a
   * transaction-mode pooler cannot keep one, and at a thousand nodes the sessions alone exceed
   * Postgres' default connection limit). Without it the claim loop polls, backing off to {@link
   * #idlePoll}. Call before {@link #start()}.
   */
  public NodeWorker listen(boolean on) {
    this.listen = on;
    return this;
  }

  /**
   * The longest claim poll interval ({@code --idle-poll-ms}): each poll that finds nothing doubles
   * the wait from {@code poll} up to this; work, a finished task or a notification resets it.
   * Artifact deletions are polled at this cadence (or at once on a notification). Call before
   * {@link #start()}.
   */
  public NodeWorker idlePoll(Duration max) {
    this.idlePoll = max;
    return this;
  }

  /**
   * Send heartbeats to and take wake-ups from these masters ({@code --master-url}; see {@link
   * MasterLink}); empty (the default) for the database alone. Call before {@link #start()}.
   */
  public NodeWorker masters(List<java.net.URI> masters) {
    this.masters = List.copyOf(masters);
    return this;
  }

  /**
   * Evict staged models, least recently used first, while more than {@code highPct} of the data
   * directory's file system is used, until at most {@code lowPct} is. Call before {@link #start()}.
   */
  public NodeWorker watermarks(DiskKeeper.Watermarks w) {
    this.watermarks = java.util.Objects.requireNonNull(w, "watermarks");
    return this;
  }

  /**
   * Run the worker's own threads (claim loop, heartbeat, wake-up long-poll, task threads) as
   * virtual threads instead of platform threads. For many workers in one JVM: the fleet benchmark
   * runs a thousand, whose 14,000 platform threads kept the kernel's run queue hundreds long and
   * starved the control plane it measures (issue 19). A real client, one worker per process, keeps
   * platform threads (the default). Call before {@link #start()}.
   */
  public NodeWorker virtualThreads(boolean on) {
    this.virtualThreads = on;
    return this;
  }

  /** A builder for one of the worker's own threads; a platform one is a daemon when asked. */
  private Thread.Builder thread(String name, boolean daemon) {
    return virtualThreads
        ? Thread.ofVirtual().name(name)
        : Thread.ofPlatform().daemon(daemon).name(name);
  }

  /** Starts serving, registers, reconciles the replica list with the disk, starts claiming. */
  public NodeWorker start() throws InterruptedException {
    server = transport.serve(settings.bindHost(), settings.nodeId().port(), this::locate);
    if (httpPort >= 0) {
      try {
        endpoint = ClientEndpoint.start(settings.bindHost(), httpPort, new EndpointSource());
      } catch (java.io.IOException e) {
        server.close();
        throw new java.io.UncheckedIOException(
            "cannot bind the HTTP endpoint on "
                + settings.bindHost()
                + ":"
                + httpPort
                + ": "
                + e.getMessage(),
            e);
      }
    }
    registry.register(
        nodeId,
        settings.nodeId().host(),
        settings.nodeId().port(),
        settings.dataDir().toString(),
        instanceId);
    int released = queue.releaseLeasesOfOtherInstances(nodeId, leaseOwner);
    if (released > 0) {
      log.info("re-queued {} tasks held by this node's previous run", released);
    }
    reconcileReplicas();
    disk =
        new DiskKeeper(
                nodeId,
                settings.dataDir(),
                watermarks,
                new NodeDisks(db.dsl()),
                () -> java.util.Set.copyOf(executingModels.values()))
            .load();
    io.mooncake.dist.worker.store.Readahead.warning(settings.dataDir())
        .ifPresent(w -> log.warn("{}", w));
    if (listen) {
      listener =
          new PgListener(
                  db,
                  List.of("mooncake_node"),
                  (ch, payload) -> {
                    boolean deletions =
                        payload == null
                            || payload.equals(
                                io.mooncake.dist.scheduler.store.ArtifactDeletions.NOTICE + nodeId);
                    if (deletions || nodeId.equals(payload)) {
                      if (deletions) {
                        notified = true;
                      }
                      wake.release();
                    }
                  })
              .start();
    }
    if (!masters.isEmpty()) {
      masterLink =
          new MasterLink(
                  masters,
                  ClusterSecret.fromDatabase(db),
                  nodeId,
                  settings.heartbeat(),
                  deletions -> {
                    if (deletions) {
                      notified = true;
                    }
                    wake.release();
                  })
              .start(thread("master-wakeups", true));
    }
    progressReporter = new ProgressReporter(queue, PROGRESS_EVERY, settings.heartbeat(), nodeId);
    heartbeat = thread("heartbeat", true).start(this::heartbeatLoop);
    // Virtual: it sleeps almost always, and a fleet benchmark runs a thousand workers per JVM.
    diskLoop = Thread.ofVirtual().name("disk-keeper-" + nodeId).start(this::diskLoop);
    loop = thread("claim-loop", false).start(this::claimLoop);
    log.info(
        "mooncake_client {} serving chunks to cluster members on {}:{} ({}), data dir {}",
        nodeId,
        settings.bindHost(),
        server.port(),
        security,
        settings.dataDir());
    if (endpoint != null) {
      log.info(
          "mooncake_client {} serving /health and /metrics on {}:{}",
          nodeId,
          settings.bindHost(),
          endpoint.port());
    }
    return this;
  }

  /** What the HTTP endpoint reads. */
  private final class EndpointSource implements ClientEndpoint.Source {
    @Override
    public String nodeId() {
      return nodeId;
    }

    @Override
    public String unhealthyReason() {
      if (!running) {
        return "the worker is stopped";
      }
      long last = lastHeartbeatNanos;
      long limit = 3 * settings.heartbeat().toNanos();
      if (last == 0) {
        return System.nanoTime() - startedNanos > limit
            ? "no heartbeat has succeeded yet"
            : "starting: no heartbeat yet";
      }
      long age = System.nanoTime() - last;
      return age <= limit
          ? null
          : "last successful heartbeat "
              + age / 1_000_000
              + " ms ago (more than 3 intervals of "
              + settings.heartbeat().toMillis()
              + " ms)";
    }

    @Override
    public long bytesServed() {
      return server == null ? 0 : server.bytesServed();
    }

    @Override
    public int tasksRunning() {
      return executing.size();
    }

    @Override
    public double heartbeatAgeSeconds() {
      long last = lastHeartbeatNanos;
      return last == 0 ? Double.NaN : (System.nanoTime() - last) / 1e9;
    }

    @Override
    public WorkerMetrics metrics() {
      return metrics;
    }

    @Override
    public long evictions() {
      return disk == null ? 0 : disk.evictions();
    }

    @Override
    public long evictedBytes() {
      return disk == null ? 0 : disk.evictedBytes();
    }
  }

  /**
   * Objects are byte ranges of the model files; the final file, or the partial one while copying.
   * An object this node is receiving right now is served as far as it has landed. A replica row is
   * served only when this node published it itself ({@link OwnReplicas}) and its file, links
   * resolved, is a regular file inside this node's models directory: a row naming any other file
   * (written by anyone with database access) is answered "not here", never streamed.
   */
  private Optional<FileRange> locate(String objectId) {
    Optional<FileRange> arriving = arrivals.find(objectId);
    if (arriving.isPresent()) {
      return arriving;
    }
    Optional<Replica> row = replicas.local(nodeId, objectId);
    if (row.isEmpty()) {
      return Optional.empty();
    }
    Replica r = row.get();
    if (!own.isOwn(r)) {
      log.warn(
          "not serving object {}: its replica row names {} (offset {}, {} bytes), which this node"
              + " did not publish",
          objectId,
          r.filePath(),
          r.fileOffset(),
          r.sizeBytes());
      return Optional.empty();
    }
    Optional<Path> file = servable(r);
    if (file.isPresent() && disk != null) {
      disk.ledger().modelOf(Path.of(r.filePath())).ifPresent(disk.ledger()::touch);
    }
    return file.map(p -> new FileRange(p, r.fileOffset(), r.sizeBytes()));
  }

  /** The real path of a replica's file (final, else partial) when it lies in the model store. */
  private Optional<Path> servable(Replica r) {
    try {
      return store.servableFile(Path.of(r.filePath()));
    } catch (IllegalArgumentException e) {
      log.warn("not serving object {}: {}", r.objectId(), e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * A replica whose bytes are gone from disk (wiped data dir), or whose row names a file outside
   * this node's model store, is withdrawn at start; the others are this node's own from an earlier
   * run.
   */
  private void reconcileReplicas() {
    for (Replica r : replicas.ofNode(nodeId)) {
      Optional<Path> file = servable(r);
      boolean ok = file.isPresent() && sizeOf(file.get()) >= r.fileOffset() + r.sizeBytes();
      if (!ok) {
        log.warn(
            "withdrawing replica {}: {} is missing, too short or outside the model store",
            r.objectId(),
            r.filePath());
        replicas.remove(nodeId, r.objectId());
      } else {
        own.published(r);
      }
    }
  }

  private static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (java.io.IOException e) {
      return -1;
    }
  }

  private void heartbeatLoop() {
    RenewalCadence cadence = RenewalCadence.of(settings.heartbeat(), settings.lease());
    int sinceRenewal = Integer.MAX_VALUE - 1;
    while (running) {
      try {
        boolean renew = cadence.due(sinceRenewal);
        List<Long> tasks = renew ? List.copyOf(executing) : List.of();
        List<Long> progress = renew ? progressReporter.moved(tasks) : null;
        NodeRegistry.Disk report = diskReport();
        Optional<Boolean> linked =
            masterLink == null
                ? Optional.empty()
                : masterLink.heartbeat(
                    instanceId, leaseOwner, tasks, progress, settings.lease(), report);
        boolean recorded =
            linked.isPresent()
                ? linked.get()
                : registry.heartbeat(
                    nodeId, instanceId, leaseOwner, tasks, progress, settings.lease(), report);
        if (recorded) {
          progressReporter.recorded(tasks, progress);
        }
        if (!recorded) {
          log.error("another mooncake_client registered as {}; this one stops", nodeId);
          running = false;
          wake.release();
          return;
        }
        if (report != null) {
          disk.recorded(report);
        }
        sinceRenewal = renew ? 0 : sinceRenewal + 1;
        lastHeartbeatNanos = System.nanoTime();
      } catch (RuntimeException e) {
        log.warn("heartbeat failed (database unreachable?): {}", e.getMessage());
      }
      try {
        Thread.sleep(settings.heartbeat().toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** What this heartbeat says of the disk; null (nothing) when it cannot be read: beat anyway. */
  private NodeRegistry.Disk diskReport() {
    try {
      return disk.report();
    } catch (RuntimeException e) {
      log.warn("cannot read the data directory for the heartbeat: {}", e.toString());
      return null;
    }
  }

  /** A watermark pass every heartbeat interval (issue 22). */
  private void diskLoop() {
    while (running) {
      try {
        disk.enforceWatermarks();
      } catch (RuntimeException e) {
        log.warn("eviction pass failed (database unreachable?): {}", e.getMessage());
      }
      try {
        Thread.sleep(settings.heartbeat().toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void claimLoop() {
    long pollMs = settings.poll().toMillis();
    long unlinkedMaxPollMs = Math.max(pollMs, idlePoll == null ? pollMs : idlePoll.toMillis());
    long waitMs = pollMs;
    while (running) {
      // Wake-ups through a master make polling a safety net only; without them, poll as configured.
      boolean linked = masterLink != null && masterLink.listening();
      long maxPollMs =
          linked ? Math.max(unlinkedMaxPollMs, LINKED_IDLE_POLL.toMillis()) : unlinkedMaxPollMs;
      waitMs = Math.min(waitMs, maxPollMs);
      try {
        boolean force = notified;
        notified = false;
        deleteArtifacts.runPending(
            db,
            nodeId,
            leaseOwner,
            store,
            replicas,
            force ? Duration.ZERO : Duration.ofMillis(maxPollMs),
            settings.lease());
      } catch (RuntimeException e) {
        log.warn("artifact deletion failed (database unreachable?): {}", e.getMessage());
      }
      int free = reserveSlots(0);
      long claimStarted = System.nanoTime();
      List<ClaimedTask> claimed = List.of();
      try {
        if (free > 0) {
          claimed =
              queue.claimWithSources(
                  nodeId, leaseOwner, free, settings.lease(), TaskExecutor.RELAY_FRESH);
        }
      } catch (RuntimeException e) {
        log.warn("claim failed (database unreachable?): {}", e.getMessage());
      } finally {
        dispatch(free, claimed);
      }
      // Back off while polls find nothing and nothing runs; work or a wake-up resets the wait. With
      // the link up, new work is announced, so an empty poll goes straight to the safety-net
      // interval (backing off from 1 s, a thousand idle nodes polled ~45 times a second for
      // their first minute: most of the idle statements at N = 1,000, issue 19).
      boolean idle = claimed.isEmpty() && inFlight.get() == 0;
      long sleepMs = idle ? waitMs : pollMs;
      waitMs = idle ? (linked ? maxPollMs : Math.min(maxPollMs, waitMs * 2)) : pollMs;
      if (claimed.isEmpty() || inFlight.get() >= settings.concurrency()) {
        // A deferred or retried task becomes claimable then; no notification announces it.
        sleepMs = dueTimes.sleepMs(claimStarted, System.nanoTime(), sleepMs);
        try {
          if (wake.tryAcquire(sleepMs, TimeUnit.MILLISECONDS)) {
            wake.drainPermits();
            waitMs = pollMs;
          }
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /**
   * Takes the slots free for claiming, plus {@code finishing} ones whose tasks are being recorded
   * right now (their threads give them back just after): counted in {@code inFlight} before the
   * claim, so the claim loop and a success's refill never claim for the same slot.
   *
   * @return how many slots were taken (0 when stopping)
   */
  private int reserveSlots(int finishing) {
    while (running) {
      int now = inFlight.get();
      int free = settings.concurrency() + finishing - now;
      if (free <= 0) {
        return 0;
      }
      if (inFlight.compareAndSet(now, now + free)) {
        return free;
      }
    }
    return 0;
  }

  /** Runs what a claim took for {@code reserved} slots and gives back the slots left over. */
  private void dispatch(int reserved, List<ClaimedTask> claimed) {
    if (reserved > claimed.size()) {
      inFlight.addAndGet(claimed.size() - reserved);
    }
    for (ClaimedTask t : claimed) {
      try {
        executor.execute(() -> runTask(t));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // Stopping: the task's lease lapses and it is rescued for this node's next run.
        inFlight.decrementAndGet();
        log.info("{} claimed while stopping; its lease will lapse", t.taskId());
      }
    }
  }

  /**
   * A finished task's slot refilled in the statement that records its success ({@link
   * TaskQueue#succeedAndClaim}): at N = 100 simulated nodes the success and the claim after it were
   * each about one statement a copy.
   */
  private final class Refill implements CompletionBatcher.Refill {
    @Override
    public int reserve(int finishing) {
      return reserveSlots(finishing);
    }

    @Override
    public void claimed(int reserved, List<ClaimedTask> tasks) {
      dispatch(reserved, tasks);
    }

    @Override
    public String nodeId() {
      return nodeId;
    }

    @Override
    public String leaseOwner() {
      return leaseOwner;
    }

    @Override
    public java.time.Duration lease() {
      return settings.lease();
    }

    @Override
    public java.time.Duration fresh() {
      return TaskExecutor.RELAY_FRESH;
    }
  }

  private void runTask(ClaimedTask task) {
    String what =
        task.type()
            + (task.objectId().isEmpty() ? "" : " " + task.objectId())
            + " of job "
            + task.jobId();
    executing.add(task.taskId());
    ModelRef model = task.payload().model();
    executingModels.put(task.taskId(), model);
    disk.ledger().touch(model);
    Progress progress = progressReporter.start(task.taskId(), leaseOwner);
    try {
      TaskExecutor exec =
          new TaskExecutor(
              nodeId,
              store,
              transport,
              replicas,
              queue,
              leaseOwner,
              settings.lease(),
              seedPulls,
              parking,
              arrivals,
              own,
              seedShares);
      Outcome outcome = null;
      TaskFailure failure;
      long startNanos = System.nanoTime();
      boolean placementTask =
          task.type() == TaskType.REPLICA_COPY || task.type() == TaskType.MATERIALIZE;
      try {
        if (placementTask && abandonedJobs.contains(task.jobId())) {
          throw new TaskFailure(
              "the placement of job " + task.jobId() + " on " + nodeId + " already failed", false);
        }
        admit(task);
        outcome = exec.execute(task, progress);
        failure = null;
      } catch (TaskDeferred d) {
        defer(task, what, d);
        return;
      } catch (TaskFailure f) {
        failure = f;
      } catch (org.jooq.exception.DataAccessException e) {
        // The database went away mid-task (restart, failover): another attempt will do.
        log.warn("{} lost the database: {}", what, e.getMessage());
        failure =
            new TaskFailure("database unreachable during the task: " + e.getMessage(), true, e);
      } catch (RuntimeException e) {
        log.error("{} hit an unexpected error", what, e);
        failure = new TaskFailure("unexpected error: " + e, false, e);
      }
      metrics.taskDuration(task.type().name(), System.nanoTime() - startNanos);
      record(task, what, outcome, failure);
      if (task.type() == TaskType.REPLICA_COPY) {
        arrivals.settled(task.objectId());
      }
      if (placementTask && abandonedJobs.contains(task.jobId())) {
        store.discardPartials(task.payload());
      }
    } finally {
      progressReporter.finished(progress);
      executingModels.remove(task.taskId());
      executing.remove(task.taskId());
      inFlight.decrementAndGet();
      wake.release();
    }
  }

  /**
   * Before a job's first byte moves here, its model must fit (after evicting what may go): else the
   * task fails for good, which fails the placement at once with the figures as its error.
   */
  private void admit(ClaimedTask task) throws TaskFailure {
    Optional<String> refused =
        disk.admit(
            task.jobId(),
            task.payload().model(),
            () ->
                task.type() == TaskType.REPLICA_COPY
                    ? new NodeDisks(db.dsl()).modelBytesOfJob(task.jobId())
                    : task.payload().totalBytes());
    if (refused.isPresent()) {
      throw new TaskFailure(refused.get(), false);
    }
  }

  /**
   * Hands a task that chose to wait back to the queue (no attempt used) and makes the claim loop
   * look again when it is due, sooner than its poll interval. Should the database be away, the
   * lease lapses and the task is rescued as usual.
   */
  private void defer(ClaimedTask task, String what, TaskDeferred d) {
    try {
      if (queue.defer(
          task.taskId(), leaseOwner, java.time.Duration.ofMillis(TaskDeferred.DELAY_MS))) {
        log.debug("{} waits: {}", what, d.getMessage());
        metrics.taskFinished(task.type().name(), WorkerMetrics.DEFERRED);
        dueTimes.add(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TaskDeferred.DELAY_MS));
      }
    } catch (RuntimeException e) {
      log.warn(
          "{} could not be deferred (database unreachable?); its lease will lapse: {}",
          what,
          e.getMessage());
    }
  }

  /**
   * Writes the outcome back, retrying while the database is unreachable (a restart takes seconds):
   * the work is done and durable, so it is worth keeping. Gives up after about a minute; the lease
   * then lapses (the heartbeat no longer renews it) and the task is rescued.
   */
  private void record(ClaimedTask task, String what, Outcome outcome, TaskFailure failure) {
    long backoffMs = 250;
    for (int attempt = 1; running() || attempt == 1; attempt++) {
      try {
        if (failure == null) {
          outcome.publish().forEach(own::published);
          if (!completions.succeed(
              new TaskQueue.Completion(
                  task.taskId(),
                  leaseOwner,
                  outcome.bytes(),
                  outcome.resultJson(),
                  outcome.publish()))) {
            log.warn("{} finished but its lease was lost; the outcome is discarded", what);
          } else {
            log.info("{} succeeded ({} bytes)", what, outcome.bytes());
            if (task.type() != TaskType.REPLICA_COPY) {
              // The placement's model is whole here: staged (or verified) just now.
              disk.ledger().touch(task.payload().model());
              disk.release(task.jobId());
            }
            metrics.taskFinished(task.type().name(), WorkerMetrics.SUCCEEDED);
            if (task.type() == TaskType.REPLICA_COPY) {
              metrics.bytesReceived(outcome.bytes());
              disk.wrote(task.jobId(), outcome.bytes());
            }
          }
        } else {
          String state =
              queue.fail(task.taskId(), leaseOwner, failure.getMessage(), failure.retryable());
          log.warn(
              "{} failed (attempt {}/{}, now {}): {}",
              what,
              task.attempt(),
              task.maxAttempts(),
              state,
              failure.getMessage());
          if (state != null) {
            metrics.taskFinished(
                task.type().name(),
                TaskState.FAILED.wire().equals(state) ? WorkerMetrics.FAILED : WorkerMetrics.RETRY);
          }
          if (TaskState.PENDING.wire().equals(state)) {
            // Retried here after its backoff; no notification announces that moment.
            dueTimes.add(System.nanoTime() + TaskQueue.retryBackoff(task.attempt()).toNanos());
          }
          if (TaskState.FAILED.wire().equals(state)
              && (task.type() == TaskType.REPLICA_COPY || task.type() == TaskType.MATERIALIZE)) {
            // The placement is lost: free the disk its partial files hold (e.g. after a full disk).
            abandonedJobs.add(task.jobId());
            store.discardPartials(task.payload());
            disk.release(task.jobId());
          } else if (TaskState.FAILED.wire().equals(state)
              && task.type() == TaskType.MODEL_DOWNLOAD) {
            // No attempt is left to resume the download: free what its partial files hold.
            store.discardPartials(task.payload());
            disk.release(task.jobId());
          }
        }
        return;
      } catch (RuntimeException e) {
        if (backoffMs > 60_000) {
          log.warn(
              "could not record the outcome of {}, giving up (its lease will lapse): {}",
              what,
              e.getMessage());
          return;
        }
        log.warn(
            "could not record the outcome of {} (database unreachable?), retrying in {} ms: {}",
            what,
            backoffMs,
            e.getMessage());
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
        backoffMs *= 2;
      }
    }
  }

  public boolean running() {
    return running;
  }

  /** This node's id, {@code host:port}. */
  public String nodeId() {
    return nodeId;
  }

  public int chunkPort() {
    return server.port();
  }

  /** The HTTP endpoint's port, or -1 when it is disabled. */
  public int httpPort() {
    return endpoint == null ? -1 : endpoint.port();
  }

  /** This worker's in-process counters. */
  public WorkerMetrics metrics() {
    return metrics;
  }

  @Override
  public void close() {
    running = false;
    if (endpoint != null) {
      endpoint.close();
    }
    if (loop != null) {
      loop.interrupt();
    }
    if (heartbeat != null) {
      heartbeat.interrupt();
    }
    if (diskLoop != null) {
      diskLoop.interrupt();
    }
    if (masterLink != null) {
      masterLink.close();
    }
    if (progressReporter != null) {
      progressReporter.close();
    }
    executor.shutdownNow();
    if (listener != null) {
      listener.close();
    }
    if (server != null) {
      server.close();
    }
    transport.close();
  }
}
