package io.mooncake.dist.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;

/**
 * One run of the demo, step by step: database, work dir, master, model, clients, job, progress,
 * verification. It owns everything it starts, and {@link #close()} (called by the main thread, or
 * by the shutdown hook on Ctrl-C, whichever comes first) stops all of it.
 */
final class DemoRun implements AutoCloseable {
  static final int PREFERRED_HTTP_PORT = 8080;
  static final int PREFERRED_SEED_PORT = 25001;
  static final int PREFERRED_FOLLOWER_PORT = 25002;

  /** Hang guards, not performance limits: a cold JVM start plus migrations takes seconds. */
  static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

  static final Duration JOB_TIMEOUT = Duration.ofMinutes(10);
  static final Duration POLL = Duration.ofMillis(250);
  private static final double MIB = 1024.0 * 1024.0;

  /** What the user asked for; {@code httpPort} null means "8080 when free". */
  record Settings(
      Path root, String dbUrl, long sizeBytes, long chunkBytes, Integer httpPort, boolean keep) {}

  private final Settings settings;
  private final PrintStream out;
  private final ObjectMapper json = new ObjectMapper();
  private final long startNanos = System.nanoTime();

  // Read by the shutdown hook's thread, hence volatile.
  private volatile DatabaseChoice database;
  private volatile ClusterProcesses cluster;
  private volatile Path workDir;
  private volatile boolean succeeded;
  private volatile boolean interrupted;
  private boolean closed;

  DemoRun(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  void run() throws DemoFailure, IOException, InterruptedException {
    // The database first: without one there is nothing to show, and the demo says so in one line.
    database = DatabaseChoice.choose(settings.dbUrl(), out);
    out.printf(
        Locale.ROOT,
        "mooncake_demo: one master and two nodes on this machine, a %s model in %s chunks%n",
        mib(settings.sizeBytes()),
        mib(settings.chunkBytes()));
    out.println(
        "database  " + DatabaseChoice.redact(database.url()) + " (" + database.origin() + ")");

    workDir = Files.createTempDirectory("mooncake-demo-");
    out.println("work dir  " + workDir);
    requireSpace(workDir, 3 * settings.sizeBytes()); // the source plus one staged copy per node
    cluster = new ClusterProcesses(settings.root(), workDir.resolve("logs"));

    Set<Integer> taken = new HashSet<>();
    int httpPort =
        settings.httpPort() != null
            ? settings.httpPort()
            : Ports.preferredOrFree(PREFERRED_HTTP_PORT, taken);
    taken.add(httpPort);
    // The API is never open, not even here: the demo makes itself a write token, as an operator
    // would.
    String token = ApiToken.random();
    Path tokens = ApiToken.writeFile(workDir.resolve("api-tokens"), "write " + token + " demo\n");
    cluster.start(
        "master",
        "mooncake_master",
        List.of(
            "--http-port",
            String.valueOf(httpPort),
            "--db-url",
            database.url(),
            "--scheduler-tick-ms",
            "200",
            "--api-tokens-file",
            tokens.toString(),
            // Seeds may read the generated model's folder and nothing else, as a shared cluster
            // names its model roots (without a source rule the master refuses every job).
            "--allowed-sources",
            "file://" + workDir.toRealPath().resolve("source") + "/"));
    MasterClient api = new MasterClient(json, "http://127.0.0.1:" + httpPort, token);
    out.println(
        "master    "
            + api.base()
            + " starting (log "
            + cluster.log("master")
            + ", API token in "
            + tokens
            + ")");

    // Generated while the master's JVM starts: the two take about as long, and neither needs the
    // other.
    long genStart = System.nanoTime();
    SourceModel model =
        SourceModel.generate(
            workDir.resolve("source").resolve(CreateRequest.FILE), settings.sizeBytes());
    out.printf(
        Locale.ROOT,
        "model     %s  %s  %s  (generated in %.1f s)%n",
        model.file(),
        mib(model.sizeBytes()),
        model.checksum(),
        seconds(System.nanoTime() - genStart));

    // Clients start after the master is healthy, i.e. after it has migrated the schema: each
    // launcher migrates on start too, and one migrator at a time keeps the first run's log clean.
    cluster.await(
        "the master's GET /health",
        "master",
        STARTUP_TIMEOUT,
        () -> api.get("/health").status() == 200);
    out.println("master    healthy");

    String seed = "127.0.0.1:" + Ports.preferredOrFree(PREFERRED_SEED_PORT, taken);
    taken.add(port(seed));
    String follower = "127.0.0.1:" + Ports.preferredOrFree(PREFERRED_FOLLOWER_PORT, taken);
    startClient("seed", seed);
    startClient("follower", follower);
    cluster.await(
        "both nodes to be live in GET /api/v1/nodes",
        "follower",
        STARTUP_TIMEOUT,
        () -> live(api, seed) && live(api, follower));
    out.println("nodes     " + seed + " (seed) and " + follower + " (follower) live");

    String jobId = UUID.randomUUID().toString();
    JsonNode request =
        CreateRequest.build(
            json, jobId, model, settings.chunkBytes(), seed, List.of(seed, follower));
    long jobStart = System.nanoTime();
    MasterClient.Reply created = api.post(MasterClient.JOBS, request);
    if (created.status() != 201) {
      throw new DemoFailure(
          1,
          "the master refused the job: HTTP "
              + created.status()
              + " "
              + created.body()
              + "; see "
              + cluster.log("master"));
    }
    out.println(
        "job       " + jobId + " created (HTTP 201); polling every " + POLL.toMillis() + " ms");

    PlacementTimes times = new PlacementTimes();
    JsonNode last = poll(api, jobId, jobStart, times);
    long jobNanos = System.nanoTime() - jobStart;
    out.println(
        "snapshot  final, as GET " + MasterClient.JOBS + "?job_id=" + jobId + " returns it:");
    out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(last));
    if (!"completed".equals(last.path("status").asText())) {
      throw new DemoFailure(
          1,
          "job "
              + last.path("status").asText()
              + ": "
              + last.path("last_error").asText("")
              + "; see the logs in "
              + workDir.resolve("logs"));
    }
    verify(model, last);
    reportPhases(times, model, last.path("placements").size(), seconds(jobNanos));
    succeeded = true;
  }

  /**
   * The job's time is not a transfer rate: it is mostly the seed's first download (reading the
   * source, SHA-256 over every byte, writing), which the follower trails object by object. So each
   * placement is reported on its own, with the rate its bytes moved at, and the job as a whole is
   * said to be bounded by whichever finished last.
   */
  private void reportPhases(PlacementTimes times, SourceModel model, int nodes, double jobSeconds) {
    PlacementTimes.Phase seed = times.byRole("seed");
    PlacementTimes.Phase follower = times.byRole("follower");
    if (seed != null) {
      out.printf(
          Locale.ROOT,
          "seed      %s read the source file, SHA-256-verified every byte and stored it: %s%n",
          seed.nodeId(),
          rate(seed));
    }
    if (follower != null) {
      out.printf(
          Locale.ROOT,
          "follower  %s copied it from the seed, each object once the seed had stored it: %s%n",
          follower.nodeId(),
          rate(follower));
    }
    out.printf(
        Locale.ROOT,
        "done      %s on %d nodes in %.1f s; whole demo %.1f s%n",
        mib(model.sizeBytes()),
        nodes,
        jobSeconds,
        seconds(System.nanoTime() - startNanos));
    if (seed != null
        && follower != null
        && follower.stagedSeconds() - seed.stagedSeconds()
            <= Math.max(1.0, 0.15 * seed.stagedSeconds())) {
      out.println(
          "note      the follower finished right behind the seed: the job took as long as the "
              + "seed's first download from the source, and the copy between nodes went as fast as "
              + "the seed stored objects; the copy alone (from a seed already holding the model) is "
              + "what bench/transfer.sh times");
    }
  }

  private static String rate(PlacementTimes.Phase phase) {
    double bps = phase.bytesPerSecond();
    return Double.isNaN(bps)
        ? String.format(
            Locale.ROOT,
            "staged at %.1f s, between two polls: too fast to time",
            phase.stagedSeconds())
        : String.format(
            Locale.ROOT,
            "bytes moving from %.1f s to %.1f s, %.1f MiB/s",
            phase.firstBytesSeconds(),
            phase.stagedSeconds(),
            bps / MIB);
  }

  private void startClient(String name, String nodeId) throws IOException, DemoFailure {
    cluster.start(
        name,
        "mooncake_client",
        List.of(
            "--node-id",
            nodeId,
            "--data-dir",
            workDir.resolve("data").resolve(name).toString(),
            "--db-url",
            database.url(),
            "--poll-ms",
            "200"));
    out.println("client    " + nodeId + " (" + name + ") starting (log " + cluster.log(name) + ")");
  }

  private static boolean live(MasterClient api, String nodeId)
      throws IOException, InterruptedException {
    MasterClient.Reply r = api.get("/api/v1/nodes");
    if (r.status() != 200 || r.json() == null) {
      return false;
    }
    for (JsonNode n : r.json().path("nodes")) {
      if (nodeId.equals(n.path("node_id").asText()) && n.path("live").asBoolean(false)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Polls the snapshot until the job is terminal, printing each change; fails on a dead process or
   * timeout.
   */
  private JsonNode poll(MasterClient api, String jobId, long jobStart, PlacementTimes times)
      throws DemoFailure, InterruptedException {
    ProgressPrinter progress = new ProgressPrinter(out, jobStart);
    long deadline = jobStart + JOB_TIMEOUT.toNanos();
    JsonNode last = null;
    String lastProblem = null;
    while (System.nanoTime() < deadline) {
      cluster.requireAllRunning();
      try {
        MasterClient.Reply r = api.job(jobId);
        if (r.status() == 200 && r.json() != null) {
          last = r.json();
          progress.update(last);
          times.observe(last, seconds(System.nanoTime() - jobStart));
          if (last.path("status").asText().matches("completed|failed|canceled")) {
            return last;
          }
        } else {
          lastProblem = "HTTP " + r.status() + " " + r.body();
        }
      } catch (IOException e) {
        lastProblem = e.toString(); // a slow answer: the next poll will tell
      }
      Thread.sleep(POLL.toMillis());
    }
    throw new DemoFailure(
        1,
        "job "
            + jobId
            + " not finished after "
            + JOB_TIMEOUT.toMinutes()
            + " min; last snapshot "
            + last
            + (lastProblem == null ? "" : ", last error " + lastProblem)
            + "; see the logs in "
            + workDir.resolve("logs"));
  }

  /** Every placement's staged {@code model.bin} must be the source, byte for byte. */
  private void verify(SourceModel model, JsonNode snapshot) throws DemoFailure, IOException {
    List<String> where = new ArrayList<>();
    for (JsonNode p : snapshot.path("placements")) {
      String node = p.path("node_id").asText();
      String localPath = p.path("local_path").asText(null);
      if (localPath == null) {
        throw new DemoFailure(1, "placement on " + node + " has no local_path");
      }
      Path staged = Path.of(localPath).resolve(CreateRequest.FILE);
      if (!Files.isRegularFile(staged)) {
        throw new DemoFailure(1, "staged file missing on " + node + ": " + staged);
      }
      long mismatch = Files.mismatch(model.file(), staged);
      if (mismatch != -1) {
        throw new DemoFailure(
            1,
            "staged bytes differ from the source on "
                + node
                + " at offset "
                + mismatch
                + ": "
                + staged);
      }
      where.add(staged.toString());
    }
    if (where.size() != 2) {
      throw new DemoFailure(1, "expected 2 placements, the snapshot has " + where.size());
    }
    out.println("verified  bytes identical on both nodes: " + String.join(", ", where));
  }

  private static void requireSpace(Path dir, long bytes) throws IOException, DemoFailure {
    long usable = Files.getFileStore(dir).getUsableSpace();
    if (usable < bytes + (64L << 20)) {
      throw new DemoFailure(
          2,
          "not enough disk space in "
              + dir.getParent()
              + ": the demo needs about "
              + mib(bytes)
              + " (the model and one copy per node), "
              + mib(usable)
              + " free; try a smaller --size-mib");
    }
  }

  boolean interrupted() {
    return interrupted;
  }

  /** The shutdown hook's entry: Ctrl-C or a kill before the run finished. */
  void interrupt() {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    interrupted = true;
    out.println();
    out.println("interrupted: stopping everything the demo started");
    close();
  }

  /**
   * Stops the processes and the container, then tidies the work dir: removed after a success, but
   * after a failure only the bulky model copies go and the logs stay for reading. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (cluster != null) {
      cluster.close();
    }
    if (database != null) {
      database.close();
    }
    Path dir = workDir;
    if (dir == null) {
      return;
    }
    if (settings.keep()) {
      out.println("kept      " + dir + " (logs in " + dir.resolve("logs") + ")");
    } else if (succeeded) {
      deleteQuietly(dir);
      out.println("stopped   master and clients; removed " + dir + " (use --keep to keep it)");
    } else if (Files.isDirectory(dir.resolve("logs"))) {
      deleteQuietly(dir.resolve("source"));
      deleteQuietly(dir.resolve("data"));
      out.println(
          "logs      kept in "
              + dir.resolve("logs")
              + " (rerun with --keep to keep the model files too)");
    } else {
      deleteQuietly(dir); // failed before anything was started: nothing worth keeping
    }
  }

  private static void deleteQuietly(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      System.err.println("mooncake_demo: could not remove " + dir + ": " + e);
    }
  }

  private static int port(String nodeId) {
    return Integer.parseInt(nodeId.substring(nodeId.lastIndexOf(':') + 1));
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }

  static String mib(long bytes) {
    return bytes % (1L << 20) == 0
        ? (bytes >> 20) + " MiB"
        : String.format(Locale.ROOT, "%.1f MiB", bytes / MIB);
  }
}
