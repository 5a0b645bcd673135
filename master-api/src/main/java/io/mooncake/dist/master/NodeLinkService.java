package io.mooncake.dist.master;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.master.nodelink.HeartbeatBatcher;
import io.mooncake.dist.master.nodelink.NodeWakeups;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.NodeSignature;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.NodeRegistry.Beat;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The node link: nodes that run with {@code --master-url} send their heartbeats here and long-poll
 * for wake-ups, instead of writing a heartbeat row and polling for work in Postgres themselves
 * (issue 19: a thousand idle nodes cost the database a statement per master batch, not thousands a
 * second). Requests are signed with the cluster secret ({@link NodeSignature}), not bearer tokens:
 * {@link ApiAccess} lets {@link #PATHS} through to be checked here.
 *
 * <ul>
 *   <li>{@code POST /api/v1/nodes/heartbeat} {@code {"node_id", "instance_id", "lease_owner",
 *       "running_task_ids": [..], "running_task_bytes": [..], "lease_seconds", "disk"}} ({@code
 *       running_task_bytes}, optional: each running task's bytes so far, -1 when unchanged since
 *       the last heartbeat; {@code disk}: {@link NodeRegistry.Disk#toWire}): 200 {@code
 *       {"recorded": true}}, or 409 when another instance has registered under the node's id (the
 *       node stops, as with a direct heartbeat);
 *   <li>{@code GET /api/v1/nodes/wakeups?node_id=..&since=<token>&wait_ms=..}: waits up to {@code
 *       wait_ms} (at most {@link #MAX_WAIT}) for work addressed to the node; 200 {@code {"woken":
 *       bool, "deletions": bool, "token": ".."}} ({@code deletions}: artifact deletions are among
 *       it).
 * </ul>
 */
final class NodeLinkService implements HttpService {
  /** The paths that take a node signature instead of a bearer token. */
  static final java.util.Set<String> PATHS =
      java.util.Set.of("/api/v1/nodes/heartbeat", "/api/v1/nodes/wakeups");

  static final Duration MAX_WAIT = Duration.ofSeconds(30);
  private static final int MAX_BODY = 1 << 20;

  private final Optional<NodeSignature> signature;
  private final HeartbeatBatcher heartbeats;
  private final NodeWakeups wakeups;

  /**
   * @param signature empty when the database holds no usable cluster secret: the node link then
   *     answers 503 and nodes fall back to the database
   */
  NodeLinkService(
      Optional<NodeSignature> signature, HeartbeatBatcher heartbeats, NodeWakeups wakeups) {
    this.signature = signature;
    this.heartbeats = heartbeats;
    this.wakeups = wakeups;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.post("/heartbeat", this::heartbeat).get("/wakeups", this::wakeups);
  }

  private void heartbeat(ServerRequest req, ServerResponse res) {
    byte[] body = readLimited(req);
    String nodeId = authenticate(req, body);
    JsonNode json;
    try {
      json = Json.MAPPER.readTree(body);
    } catch (IOException e) {
      throw new ApiError(400, "body", "invalid JSON");
    }
    if (json == null || !nodeId.equals(json.path("node_id").asText())) {
      throw new ApiError(403, "node_id", "a node may only send its own heartbeat");
    }
    String instance = json.path("instance_id").asText("");
    String owner = json.path("lease_owner").asText("");
    if (instance.isEmpty() || !owner.startsWith(nodeId + "/")) {
      throw new ApiError(
          400, "lease_owner", "instance_id and a lease_owner '<node_id>/...' are required");
    }
    List<Long> tasks = new ArrayList<>();
    json.path("running_task_ids").forEach(t -> tasks.add(t.asLong()));
    List<Long> progress = null;
    if (json.hasNonNull("running_task_bytes")) {
      List<Long> bytes = new ArrayList<>();
      json.get("running_task_bytes").forEach(b -> bytes.add(b.asLong(-1)));
      if (bytes.size() != tasks.size()) {
        throw new ApiError(
            400, "running_task_bytes", "must list one count per entry of running_task_ids");
      }
      progress = bytes;
    }
    double leaseSeconds = json.path("lease_seconds").asDouble(0);
    if (!(leaseSeconds > 0 && leaseSeconds <= 3600)) {
      throw new ApiError(400, "lease_seconds", "must be in (0, 3600]");
    }
    NodeRegistry.Disk disk = null;
    if (json.hasNonNull("disk")) {
      try {
        disk = NodeRegistry.Disk.fromWire(nodeId, json.get("disk"));
      } catch (IllegalArgumentException e) {
        throw new ApiError(400, "disk", e.getMessage());
      }
    }
    boolean recorded;
    try {
      recorded =
          heartbeats
              .submit(
                  new Beat(
                      nodeId,
                      instance,
                      owner,
                      tasks,
                      Duration.ofMillis((long) (leaseSeconds * 1000)),
                      disk,
                      progress))
              .get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new ApiError(503, null, "heartbeat not recorded: database unavailable; retry");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiError(503, null, "master stopping");
    }
    if (!recorded) {
      throw new ApiError(
          409, "instance_id", "another instance has registered as " + nodeId + " since");
    }
    Responses.json(res, 200, Map.of("recorded", true));
  }

  private void wakeups(ServerRequest req, ServerResponse res) {
    String nodeId = authenticate(req, new byte[0]);
    String asked = req.query().first("node_id").orElse("");
    if (!nodeId.equals(asked)) {
      throw new ApiError(403, "node_id", "a node may only wait for its own wake-ups");
    }
    long waitMs;
    try {
      waitMs = Long.parseLong(req.query().first("wait_ms").orElse("0"));
    } catch (NumberFormatException e) {
      throw new ApiError(400, "wait_ms", "must be a whole number of milliseconds");
    }
    waitMs = Math.max(0, Math.min(waitMs, MAX_WAIT.toMillis()));
    NodeWakeups.Answer answer;
    try {
      answer = wakeups.await(nodeId, req.query().first("since").orElse(""), waitMs);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiError(503, null, "master stopping");
    }
    Responses.json(
        res,
        200,
        Map.of("woken", answer.woken(), "deletions", answer.deletions(), "token", answer.token()));
  }

  /** The node a request's signature proves; 401 otherwise, 503 without a cluster secret. */
  private String authenticate(ServerRequest req, byte[] body) {
    if (signature.isEmpty()) {
      throw new ApiError(
          503, null, "this master has no cluster secret to check node signatures with");
    }
    StringBuilder why = new StringBuilder();
    Optional<String> node =
        signature
            .get()
            .verify(
                req.headers().first(HeaderNames.AUTHORIZATION).orElse(null),
                System.currentTimeMillis(),
                req.prologue().method().text(),
                req.path().absolute().path(),
                body,
                why);
    return node.orElseThrow(() -> new ApiError(401, null, why.toString()));
  }

  private static byte[] readLimited(ServerRequest req) {
    if (!req.content().hasEntity()) {
      throw new ApiError(400, "body", "request body is required");
    }
    try (InputStream in = req.content().inputStream()) {
      byte[] bytes = in.readNBytes(MAX_BODY + 1);
      if (bytes.length > MAX_BODY) {
        throw new ApiError(413, "body", "request body exceeds " + MAX_BODY + " bytes");
      }
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
