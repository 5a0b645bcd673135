package io.mooncake.dist.bench.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.worker.ClientMain;
import io.mooncake.dist.worker.NodeWorker;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One point of the fleet benchmark (bench/fleet.sh): N simulated nodes in this JVM, each a real
 * {@link NodeWorker} with the database sessions {@code mooncake_client} opens ({@link
 * ClientMain#openDatabase}), whose bytes cross a {@link SimNetwork} instead of sockets; two real
 * masters (started by the script) schedule them. Node 0 is the seed and already holds the model (a
 * sparse file of zeros, listed as its replicas), so the job is a pure fan-out: its ideal time is
 * S / B, every follower's downlink busy from start to end.
 */
public final class FleetBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  static String env(String name, String dflt) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? dflt : v;
  }

  public static void main(String[] args) throws Exception {
    // The simulated nodes' threads would keep the JVM up after main failed: report as usual, exit.
    Thread.currentThread()
        .setUncaughtExceptionHandler(
            (t, e) -> {
              t.getThreadGroup().uncaughtException(t, e);
              Runtime.getRuntime().halt(1);
            });
    int n = Integer.parseInt(env("N", "10"));
    int k = Integer.parseInt(env("K", "256"));
    long objectBytes = Long.parseLong(env("OBJ_MIB", "64")) << 20;
    double rate = Double.parseDouble(env("B_MIBPS", "256")) * (1 << 20);
    int concurrency = Integer.parseInt(env("CONCURRENCY", "8"));
    int idleSeconds = Integer.parseInt(env("IDLE_S", "20"));
    int timeoutSeconds = Integer.parseInt(env("JOB_TIMEOUT_S", "900"));
    String nodeUrl = env("NODE_DB_URL", null);
    // The mooncake_client flags the simulated nodes run with (see README's flag table).
    int poolSize = Integer.parseInt(env("CLIENT_POOL", String.valueOf(concurrency + 4)));
    boolean listen = !env("CLIENT_LISTEN", "1").equals("0");
    boolean mayMigrate = !env("CLIENT_MIGRATE", "1").equals("0");
    long idlePollMs = Long.parseLong(env("CLIENT_IDLE_POLL_MS", "5000"));
    long heartbeatMs = Long.parseLong(env("CLIENT_HEARTBEAT_MS", "2000"));
    boolean masterLink = env("CLIENT_MASTER_LINK", "0").equals("1");
    String adminUrl = env("ADMIN_DB_URL", null);
    List<String> masters = List.of(env("MASTERS", "http://127.0.0.1:18291").split(","));
    long postmaster = Long.parseLong(env("PG_PID", "0"));
    List<Long> masterPids = CpuMeter.pids(env("MASTER_PIDS", ""));
    List<Long> bouncerPids = CpuMeter.pids(env("BOUNCER_PID", ""));
    List<Long> self = List.of(ProcessHandle.current().pid());
    Path data = Path.of(env("DATA", "/dev/shm/mooncake-fleet"));
    long size = k * objectBytes;
    double ideal = size / rate;
    String model = "fleet";
    List<String> objectIds = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      objectIds.add(String.format("%s/r1/chunk-%04d", model, i));
    }

    String threads = env("SIM_THREADS", "virtual");
    if (!threads.equals("virtual") && !threads.equals("platform")) {
      throw new IllegalArgumentException("SIM_THREADS must be virtual or platform, not " + threads);
    }
    boolean virtual = threads.equals("virtual");
    String fair = env("SIM_FAIR", "max-min");
    if (!fair.equals("max-min") && !fair.equals("naive")) {
      throw new IllegalArgumentException("SIM_FAIR must be max-min or naive, not " + fair);
    }
    SimNetwork net =
        new SimNetwork(rate, fair.equals("max-min"), Integer.parseInt(env("SIM_TICK_MS", "100")));
    PgMeter meter = new PgMeter(adminUrl, postmaster);
    List<NodeWorker> workers = Collections.synchronizedList(new ArrayList<>());
    List<Database> dbs = Collections.synchronizedList(new ArrayList<>());
    List<String> up = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<String> firstFailure = new AtomicReference<>();

    // The seed's model: a sparse file of zeros at the final path, listed as its replicas.
    String seedId = "127.0.0.1:30000";
    Path seedFile = data.resolve("n0/models/local/" + model + "/r1/bin/model.bin");
    Files.createDirectories(seedFile.getParent());
    try (RandomAccessFile f = new RandomAccessFile(seedFile.toFile(), "rw")) {
      f.setLength(size);
    }
    SimNetwork.Node seedNet = net.node(seedId);
    seedNet.holds.addAll(objectIds);

    long t0 = System.nanoTime();
    ExecutorService starter = Executors.newFixedThreadPool(8);
    List<Future<?>> starts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = "127.0.0.1:" + (30000 + i);
      Path dir = data.resolve("n" + i);
      starts.add(
          starter.submit(
              () -> {
                Database db = null;
                try {
                  Files.createDirectories(dir);
                  NodeId nodeId = NodeId.parse(id);
                  db =
                      ClientMain.openDatabase(
                          nodeUrl,
                          poolSize,
                          mayMigrate,
                          nodeId,
                          virtual ? Thread.ofVirtual().name("pool-" + id + "-", 0).factory() : null);
                  NodeWorker w =
                      new NodeWorker(
                              new NodeWorker.Settings(
                                  nodeId,
                                  dir.toRealPath(),
                                  "127.0.0.1",
                                  concurrency,
                                  Duration.ofMillis(heartbeatMs),
                                  Duration.ofSeconds(30),
                                  Duration.ofMillis(1000)),
                              db,
                              net.node(id))
                          .virtualThreads(virtual)
                          .listen(listen)
                          .idlePoll(Duration.ofMillis(idlePollMs))
                          .masters(
                              masterLink
                                  ? masters.stream().map(java.net.URI::create).toList()
                                  : List.of())
                          .start();
                  workers.add(w);
                  dbs.add(db);
                  up.add(id);
                } catch (Exception | Error e) {
                  firstFailure.compareAndSet(null, id + ": " + e);
                  if (db != null) {
                    db.close();
                  }
                }
                return null;
              }));
    }
    for (Future<?> f : starts) {
      f.get();
    }
    starter.shutdown();
    System.err.printf(
        Locale.ROOT,
        "fleet: %d of %d nodes started in %.1f s, %d client backends now%s%n",
        up.size(),
        n,
        (System.nanoTime() - t0) / 1e9,
        meter.connections(),
        firstFailure.get() == null ? "" : "; first failure: " + firstFailure.get());
    String status = "completed";
    double jobSeconds = Double.NaN;
    double idlePct = Double.NaN;
    double idleStmtsPerNodeS = Double.NaN;
    double cpuPerCopy = Double.NaN;
    // The machine's busy CPU a copy, and the simulator's, the masters' and PgBouncer's shares.
    double[] machine = {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
    double stmtsPerCopy = Double.NaN;
    double xactsPerCopy = Double.NaN;
    long copies = 0;
    double p99 = Double.NaN;
    double p50 = Double.NaN;
    if (!up.contains(seedId)) {
      status = "no-seed";
    } else {
      try (Connection c = DriverManager.getConnection(adminUrl);
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)"
                      + " VALUES (?, ?, ?, ?, ?, ?)")) {
        for (int i = 0; i < k; i++) {
          ps.setString(1, objectIds.get(i));
          ps.setString(2, seedId);
          ps.setLong(3, objectBytes);
          ps.setString(4, net.zeroDigest(objectBytes));
          ps.setString(5, seedFile.toRealPath().toString());
          ps.setLong(6, i * objectBytes);
          ps.addBatch();
        }
        ps.executeBatch();
      }
      // Warm-up: the seed alone verifies its copy once (and stamps the file, so the timed job's
      // verification skips the hash, as on a seed that staged the model before).
      String warm = runJob(masters, "fleet-warmup", model, size, k, objectIds, List.of(seedId), 600);
      System.err.println("fleet: warm-up job (seed verifies its model): " + warm);

      // Idle window: every node up, no work.
      Thread.sleep(3000);
      double cpu0 = meter.cpuMs();
      long st0 = meter.statements();
      var idleBefore = meter.perStatement();
      Thread.sleep(idleSeconds * 1000L);
      double cpu1 = meter.cpuMs();
      long st1 = meter.statements();
      System.err.print(
          "fleet: statements while idle (" + idleSeconds + " s), most called:\n"
              + PgMeter.top(idleBefore, meter.perStatement(), 8));
      idlePct = (cpu1 - cpu0) / (idleSeconds * 1000.0) * 100;
      idleStmtsPerNodeS = (st1 - st0) / (double) idleSeconds / up.size();

      // The timed job: every started node a target, the seed first.
      List<String> targets = new ArrayList<>(up);
      targets.remove(seedId);
      Collections.sort(targets);
      targets.add(0, seedId);
      double cpu2 = meter.cpuMs();
      double[] at2 = {
        CpuMeter.machineBusyMs(),
        CpuMeter.processMs(self),
        CpuMeter.processMs(masterPids),
        CpuMeter.processMs(bouncerPids)
      };
      long st2 = meter.statements();
      long x2 = meter.transactions();
      var jobBefore = meter.perStatement();
      List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
      long start = System.nanoTime();
      String jobId = "fleet-" + n;
      Thread poller =
          Thread.ofPlatform()
              .daemon()
              .start(
                  () -> {
                    int i = 0;
                    while (!Thread.currentThread().isInterrupted()) {
                      String m = masters.get(i++ % masters.size());
                      long a = System.nanoTime();
                      try {
                        HttpResponse<String> r =
                            HTTP.send(
                                HttpRequest.newBuilder(
                                        URI.create(
                                            m + "/api/v1/model-distribution/jobs?job_id=" + jobId))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200) {
                          latencies.add((System.nanoTime() - a) / 1e6);
                        }
                        Thread.sleep(250);
                      } catch (InterruptedException e) {
                        return;
                      } catch (Exception e) {
                        // not posted yet, or a master busy: no sample
                      }
                    }
                  });
      status = runJob(masters, jobId, model, size, k, objectIds, targets, timeoutSeconds);
      jobSeconds = (System.nanoTime() - start) / 1e9;
      poller.interrupt();
      double cpu3 = meter.cpuMs();
      double[] at3 = {
        CpuMeter.machineBusyMs(),
        CpuMeter.processMs(self),
        CpuMeter.processMs(masterPids),
        CpuMeter.processMs(bouncerPids)
      };
      long st3 = meter.statements();
      long x3 = meter.transactions();
      System.err.print(
          "fleet: statements during the job, most called:\n"
              + PgMeter.top(jobBefore, meter.perStatement(), 24));
      copies =
          meter.rows(
              "SELECT count(*) FROM tasks WHERE job_id = '"
                  + jobId
                  + "' AND task_type = 'REPLICA_COPY' AND state = 'succeeded'");
      cpuPerCopy = (cpu3 - cpu2) / Math.max(1, copies);
      for (int i = 0; i < machine.length; i++) {
        machine[i] = (at3[i] - at2[i]) / Math.max(1, copies);
      }
      stmtsPerCopy = (st3 - st2) / (double) Math.max(1, copies);
      xactsPerCopy = (x3 - x2) / (double) Math.max(1, copies);
      List<Double> l = new ArrayList<>(latencies);
      Collections.sort(l);
      if (!l.isEmpty()) {
        p99 = l.get(Math.min(l.size() - 1, (int) Math.ceil(l.size() * 0.99) - 1));
        p50 = l.get(l.size() / 2);
      }
      System.err.printf(
          Locale.ROOT,
          "fleet: job %s %s in %.1f s (ideal S/B %.1f s); %d snapshots, p50 %.1f ms; postgres"
              + " cpu %.1f s, %d statements, %d transactions during the job%n",
          jobId,
          status,
          jobSeconds,
          ideal,
          l.size(),
          p50,
          (cpu3 - cpu2) / 1000,
          st3 - st2,
          x3 - x2);
    }
    System.out.printf(
        Locale.ROOT,
        "fleet nodes=%d copies=%d job_x_ideal=%.2f pg_cpu_ms_per_copy=%.3f stmts_per_copy=%.2f"
            + " server_conns_peak=%d idle_pg_core_pct=%.2f snapshot_p99_ms=%.1f"
            + " status=%s nodes_up=%d idle_stmts_per_node_s=%.3f xacts_per_copy=%.2f"
            + " machine_cpu_ms_per_copy=%.3f sim_cpu_ms_per_copy=%.3f masters_cpu_ms_per_copy=%.3f"
            + " bouncer_cpu_ms_per_copy=%.3f%n",
        n,
        copies,
        jobSeconds / ideal,
        cpuPerCopy,
        stmtsPerCopy,
        meter.peakConnections(),
        idlePct,
        p99,
        status,
        up.size(),
        idleStmtsPerNodeS,
        xactsPerCopy,
        machine[0],
        machine[1],
        machine[2],
        machine[3]);
    System.out.flush();
    ExecutorService stopper = Executors.newFixedThreadPool(8);
    for (NodeWorker w : workers) {
      stopper.submit(w::close);
    }
    stopper.shutdown();
    stopper.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
    for (Database db : dbs) {
      db.close();
    }
    net.close();
    meter.close();
    System.exit(0);
  }

  /** POSTs a job to the first master and waits for it to end; returns its final status. */
  static String runJob(
      List<String> masters,
      String jobId,
      String model,
      long size,
      int k,
      List<String> objectIds,
      List<String> targets,
      int timeoutSeconds)
      throws Exception {
    var body = JSON.createObjectNode();
    body.put("job_id", jobId);
    var m = body.putObject("model");
    m.put("model_id", model).put("revision", "r1").put("format", "bin").put("provider", "local");
    var man = body.putObject("manifest");
    man.put("model_id", model).put("revision", "r1").put("format", "bin").put("provider", "local");
    man.put("total_size_bytes", size).put("file_manifest_version", "v1");
    var file = man.putArray("files").addObject();
    file.put("path", "model.bin")
        .put("size_bytes", size)
        .put("checksum", "dummy")
        .put("download_url", "file:///nonexistent/fleet/model.bin");
    var art = file.putObject("artifact");
    art.put("artifact_key", model + "-r1");
    var ids = art.putArray("object_ids");
    objectIds.forEach(ids::add);
    file.putObject("chunk_layout")
        .put("chunk_size_bytes", size / k)
        .put("chunk_count", k)
        .put("object_prefix", model + "/r1");
    body.put("seed_node_id", targets.get(0));
    var t = body.putArray("target_nodes");
    targets.forEach(t::add);
    // Retried on either master, as a control plane would: the POST is idempotent by job_id, and a
    // master busy with a thousand node links may not accept a connection within 5 s.
    HttpResponse<String> posted = null;
    for (int attempt = 0; posted == null; attempt++) {
      try {
        posted =
            HTTP.send(
                HttpRequest.newBuilder(
                        URI.create(
                            masters.get(attempt % masters.size()) + "/api/v1/model-distribution/jobs"))
                    .header("content-type", "application/json")
                    .timeout(Duration.ofSeconds(120))
                    .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
      } catch (java.io.IOException e) {
        if (attempt >= 9) {
          throw e;
        }
        System.err.println("fleet: POST job failed (" + e + "), again");
      }
    }
    if (posted.statusCode() / 100 != 2) {
      throw new IllegalStateException("POST job: " + posted.statusCode() + " " + posted.body());
    }
    long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
    int i = 0;
    while (System.nanoTime() < deadline) {
      String master = masters.get(i++ % masters.size());
      try {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(
                        URI.create(master + "/api/v1/model-distribution/jobs?job_id=" + jobId))
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode snap = JSON.readTree(r.body());
        String s = snap.path("status").asText();
        if (s.equals("completed") || s.equals("failed") || s.equals("canceled")) {
          if (!s.equals("completed")) {
            System.err.println("fleet: job " + jobId + " " + s + ": " + shorten(r.body()));
          }
          return s;
        }
      } catch (Exception e) {
        System.err.println("fleet: snapshot of " + jobId + " from " + master + ": " + e);
      }
      Thread.sleep(200);
    }
    return "timeout";
  }

  private static String shorten(String s) {
    return s.length() > 2000 ? s.substring(0, 2000) + "..." : s;
  }
}
