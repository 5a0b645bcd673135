package io.mooncake.dist.tests.support;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A master and clients as real processes on one test database, with the short heartbeats and leases
 * the fault and relay tests use, and the waits they share.
 */
public final class ProcessCluster {
  private final Processes procs;
  private final PostgresDatabase pg;

  public ProcessCluster(Processes procs, PostgresDatabase pg) {
    this.procs = procs;
    this.pg = pg;
  }

  /** Starts {@code bin/mooncake_master} (no auth, any source) and waits for its /health. */
  public Api startMaster(String name) {
    int port = TestFiles.freePort();
    procs.start(
        name,
        "mooncake_master",
        "--http-port",
        String.valueOf(port),
        "--allow-any-source",
        "--db-url",
        pg.url(),
        "--scheduler-tick-ms",
        "200",
        "--no-auth");
    Api api = new Api("http://127.0.0.1:" + port);
    Processes.await(
        name + " /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
    return api;
  }

  /**
   * Starts {@code bin/mooncake_client} as {@code nodeId} on {@code dir}, with {@code extra} flags.
   */
  public Process startClient(String name, String nodeId, Path dir, String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--node-id",
                nodeId,
                "--data-dir",
                dir.toString(),
                "--db-url",
                pg.url(),
                "--poll-ms",
                "200",
                "--heartbeat-ms",
                "500",
                "--lease-seconds",
                "5"));
    args.addAll(List.of(extra));
    return procs.start(name, "mooncake_client", args.toArray(String[]::new));
  }

  /** Waits until the master lists at least {@code n} live nodes. */
  public static void awaitLive(Api api, int n) {
    Processes.await(
        n + " live nodes",
        Duration.ofSeconds(60),
        () -> {
          int live = 0;
          for (JsonNode node : api.get("/api/v1/nodes").json().get("nodes")) {
            live += node.get("live").asBoolean() ? 1 : 0;
          }
          return live >= n;
        });
  }

  /** The placement of {@code node} in a job snapshot. */
  public static JsonNode placement(JsonNode job, String node) {
    for (JsonNode p : job.get("placements")) {
      if (p.get("node_id").asText().equals(node)) {
        return p;
      }
    }
    throw new AssertionError(node + " not in " + job);
  }
}
