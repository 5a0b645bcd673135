package io.mooncake.dist.tests.support;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.scheduler.loop.SchedulerLoop;
import io.mooncake.dist.worker.NodeWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A master (HTTP on an ephemeral port plus its scheduler loop) and node workers in this JVM, over a
 * real Postgres, real sockets and real files: the integration-test rig. End-to-end tests use
 * separate processes instead ({@link Processes}).
 */
public final class InProcessCluster implements AutoCloseable {
  private final Database db;
  private final SchedulerLoop scheduler;
  private final WebServer server;
  private final List<NodeWorker> workers = new ArrayList<>();
  private final Api api;

  public InProcessCluster(Database db) {
    this(db, io.mooncake.dist.master.validation.SourcePolicy.ALLOW_ALL);
  }

  /** A cluster whose API admits only the sources {@code sources} allows. */
  public InProcessCluster(Database db, io.mooncake.dist.master.validation.SourcePolicy sources) {
    this.db = db;
    this.scheduler = new SchedulerLoop(db, Duration.ofMillis(100)).start();
    this.server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(r -> MasterRouting.routing(r, db, scheduler::wake, sources))
            .build()
            .start();
    this.api = new Api("http://127.0.0.1:" + server.port());
  }

  public Api api() {
    return api;
  }

  public SchedulerLoop scheduler() {
    return scheduler;
  }

  /** Starts a worker on a free port; returns its node id. */
  public String addNode(Path dataDir) throws InterruptedException {
    return addNode(dataDir, TestFiles.freePort());
  }

  public String addNode(Path dataDir, int port) throws InterruptedException {
    return addNode(dataDir, port, io.mooncake.dist.transfer.ObjectDigest.Algorithm.CRC32C_CRC32);
  }

  /** As {@link #addNode(Path, int)}, publishing downloaded objects' digests in {@code digest}. */
  public String addNode(
      Path dataDir, int port, io.mooncake.dist.transfer.ObjectDigest.Algorithm digest)
      throws InterruptedException {
    return addNode(
        dataDir, port, digest, io.mooncake.dist.worker.disk.DiskKeeper.Watermarks.DEFAULT);
  }

  /** A worker that evicts above {@code watermarks} (issue 22). */
  public String addNode(Path dataDir, io.mooncake.dist.worker.disk.DiskKeeper.Watermarks watermarks)
      throws InterruptedException {
    return addNode(
        dataDir,
        TestFiles.freePort(),
        io.mooncake.dist.transfer.ObjectDigest.Algorithm.CRC32C_CRC32,
        watermarks);
  }

  private String addNode(
      Path dataDir,
      int port,
      io.mooncake.dist.transfer.ObjectDigest.Algorithm digest,
      io.mooncake.dist.worker.disk.DiskKeeper.Watermarks watermarks)
      throws InterruptedException {
    NodeId id = new NodeId("127.0.0.1", port);
    NodeWorker w =
        new NodeWorker(
                new NodeWorker.Settings(
                    id,
                    dataDir,
                    "127.0.0.1",
                    4,
                    Duration.ofMillis(500),
                    Duration.ofSeconds(10),
                    Duration.ofMillis(200)),
                db)
            .objectDigest(digest)
            .watermarks(watermarks)
            .start();
    workers.add(w);
    return id.toString();
  }

  /** Stops the worker of {@code nodeId} (its registration stays, no longer heartbeating). */
  public void stopNode(String nodeId) {
    workers.removeIf(
        w -> {
          boolean it = w.nodeId().equals(nodeId);
          if (it) {
            w.close();
          }
          return it;
        });
  }

  @Override
  public void close() {
    workers.forEach(NodeWorker::close);
    server.stop();
    scheduler.close();
  }
}
