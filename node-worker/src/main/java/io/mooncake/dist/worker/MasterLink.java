package io.mooncake.dist.worker;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.NodeSignature;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's link to the masters ({@code --master-url}): its heartbeats go to a master, which writes
 * the heartbeats of all its nodes in one statement, and its wake-ups come from a long-poll on a
 * master, which holds the one {@code LISTEN} session they come from. An idle node then issues no
 * database statement at all for either (issue 19). Requests are signed with the cluster secret
 * ({@link NodeSignature}).
 *
 * <p>Each node starts at the master its id hashes to (so a fleet spreads over the masters) and
 * moves to the next one when a request fails. When no master answers, {@link #heartbeat} says so
 * and the worker writes its heartbeat to the database itself, and the claim loop polls as without
 * the link: the link is an optimization, never a dependency.
 */
final class MasterLink implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MasterLink.class);

  /** What one long-poll asks the master to wait. */
  static final Duration LONG_POLL = Duration.ofSeconds(25);

  /**
   * One HTTP client for every link in the process (a client has one link; the fleet benchmark runs
   * a thousand in one JVM, and a client per link was a selector thread and a pool per node).
   */
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final List<URI> masters;
  private final NodeSignature signature;
  private final String nodeId;
  private final java.util.function.Consumer<Boolean> onWake;
  private final Duration heartbeatTimeout;
  private volatile int current;
  private volatile boolean listening;
  private volatile boolean running = true;
  private Thread poller;

  /**
   * @param masters the masters' base URLs ({@code http://host:port})
   * @param heartbeat the heartbeat interval: a heartbeat a master has not answered within it is
   *     written to the database instead, so a slow master never lets the node's liveness lapse
   * @param onWake run when a master says work may have arrived, with whether artifact deletions are
   *     among it, and whenever the link comes back after a failure (with true: a wake-up of either
   *     kind may have been lost meanwhile)
   */
  MasterLink(
      List<URI> masters,
      byte[] clusterSecret,
      String nodeId,
      Duration heartbeat,
      java.util.function.Consumer<Boolean> onWake) {
    if (masters.isEmpty()) {
      throw new IllegalArgumentException("no master URL");
    }
    this.masters = List.copyOf(masters);
    this.signature = new NodeSignature(clusterSecret);
    this.nodeId = nodeId;
    this.onWake = onWake;
    this.current = Math.floorMod(nodeId.hashCode(), masters.size());
    this.heartbeatTimeout =
        Duration.ofMillis(Math.max(1_000, Math.min(10_000, heartbeat.toMillis())));
  }

  /** Starts the long-poll for wake-ups on a thread of {@code thread}'s making. */
  MasterLink start(Thread.Builder thread) {
    poller = thread.start(this::pollWakeups);
    return this;
  }

  /**
   * Whether wake-ups arrive through the link right now: the last long-poll was answered. While
   * false, the worker polls the database at its usual cadence.
   */
  boolean listening() {
    return listening;
  }

  /**
   * Sends a heartbeat through a master, trying each once, all within the heartbeat interval.
   *
   * @return true when recorded; false when another instance has registered as this node since (the
   *     worker stops); empty when no master recorded it (the worker writes it itself)
   */
  Optional<Boolean> heartbeat(
      String instanceId,
      String leaseOwner,
      Collection<Long> runningTaskIds,
      List<Long> bytesDone,
      Duration lease,
      NodeRegistry.Disk disk) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("node_id", nodeId);
    body.put("instance_id", instanceId);
    body.put("lease_owner", leaseOwner);
    body.put("running_task_ids", runningTaskIds);
    if (bytesDone != null) {
      body.put("running_task_bytes", bytesDone);
    }
    body.put("lease_seconds", lease.toMillis() / 1000.0);
    if (disk != null) {
      body.put("disk", disk.toWire());
    }
    byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
    long deadline = System.nanoTime() + heartbeatTimeout.toNanos();
    for (int tried = 0; tried < masters.size() && running; tried++) {
      int at = current;
      URI master = masters.get(at);
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        HttpResponse<String> res =
            send(master, "POST", "/api/v1/nodes/heartbeat", "", bytes, Duration.ofNanos(left));
        if (res.statusCode() == 200) {
          return Optional.of(true);
        }
        if (res.statusCode() == 409) {
          return Optional.of(false);
        }
        log.warn("heartbeat through {} refused: HTTP {} {}", master, res.statusCode(), res.body());
      } catch (IOException e) {
        log.debug("heartbeat through {} failed: {}", master, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.empty();
      }
      moveOn(at);
    }
    return Optional.empty();
  }

  private void pollWakeups() {
    String token = "";
    long backoffMs = 500;
    while (running) {
      int at = current;
      URI master = masters.get(at);
      String query =
          "node_id="
              + URLEncoder.encode(nodeId, StandardCharsets.UTF_8)
              + "&since="
              + URLEncoder.encode(token, StandardCharsets.UTF_8)
              + "&wait_ms="
              + LONG_POLL.toMillis();
      try {
        HttpResponse<String> res =
            send(
                master,
                "GET",
                "/api/v1/nodes/wakeups",
                query,
                new byte[0],
                LONG_POLL.plus(Duration.ofSeconds(10)));
        if (res.statusCode() != 200) {
          throw new IOException("HTTP " + res.statusCode() + " " + res.body());
        }
        JsonNode answer = Json.MAPPER.readTree(res.body());
        token = answer.path("token").asText("");
        boolean wasListening = listening;
        listening = true;
        backoffMs = 500;
        // A master that does not say which kind (before V023) is taken to mean both.
        boolean deletions = answer.path("deletions").asBoolean(true) || !wasListening;
        if (answer.path("woken").asBoolean(true) || deletions) {
          onWake.accept(deletions);
        }
      } catch (IOException | RuntimeException e) {
        if (listening) {
          log.warn(
              "wake-ups from {} failed, polling the database meanwhile: {}", master, e.toString());
        }
        listening = false;
        onWake.accept(true);
        moveOn(at);
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          return;
        }
        backoffMs = Math.min(10_000, backoffMs * 2);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** After a failure at master {@code at}, use the next one (unless another thread already did). */
  private void moveOn(int at) {
    if (masters.size() > 1 && current == at) {
      current = (at + 1) % masters.size();
    }
  }

  private HttpResponse<String> send(
      URI master, String method, String path, String query, byte[] body, Duration timeout)
      throws IOException, InterruptedException {
    URI uri = master.resolve(path + (query.isEmpty() ? "" : "?" + query));
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .header(
                "Authorization",
                signature.header(nodeId, System.currentTimeMillis(), method, path, body));
    request =
        method.equals("GET")
            ? request.GET()
            : request
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() {
    running = false;
    if (poller != null) {
      poller.interrupt();
    }
  }
}
