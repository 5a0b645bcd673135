package io.mooncake.dist.master;

import static io.mooncake.dist.db.jooq.Tables.CLUSTER_SECRET;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.PgListener;
import io.mooncake.dist.master.nodelink.HeartbeatBatcher;
import io.mooncake.dist.master.nodelink.NodeWakeups;
import io.mooncake.dist.scheduler.domain.NodeSignature;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a master runs for the node link ({@link NodeLinkService}): the cluster secret it checks
 * signatures with, the heartbeat batcher, and one {@code LISTEN mooncake_node} session whose
 * notifications it hands to the nodes long-polling it.
 */
public final class NodeLink implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NodeLink.class);

  private final Optional<NodeSignature> signature;
  private final HeartbeatBatcher heartbeats;
  private final NodeWakeups wakeups = new NodeWakeups();
  private final PgListener listener;

  private NodeLink(Database db, boolean live) {
    this.signature = live ? secret(db) : Optional.empty();
    this.heartbeats = live ? new HeartbeatBatcher(new NodeRegistry(db.dsl())) : null;
    this.listener =
        live
            ? new PgListener(
                    db,
                    List.of("mooncake_node"),
                    (channel, payload) -> {
                      if (payload == null) {
                        wakeups.wakeAll(); // (re)connected: anything may have been missed
                      } else {
                        wakeups.wake(payload);
                      }
                    })
                .start()
            : null;
  }

  /** The node link of a running master. */
  public static NodeLink start(Database db) {
    return new NodeLink(db, true);
  }

  /** A node link that answers 503 (route listings, tests of other routes). */
  static NodeLink disabled(Database db) {
    return new NodeLink(db, false);
  }

  NodeLinkService service() {
    return new NodeLinkService(signature, heartbeats, wakeups);
  }

  private static Optional<NodeSignature> secret(Database db) {
    try {
      String secret =
          db.dsl()
              .select(CLUSTER_SECRET.SECRET)
              .from(CLUSTER_SECRET)
              .fetchOne(CLUSTER_SECRET.SECRET);
      if (secret == null || secret.isEmpty()) {
        log.warn("no cluster secret in the database: the node link (--master-url) is off");
        return Optional.empty();
      }
      return Optional.of(new NodeSignature(secret.getBytes(StandardCharsets.UTF_8)));
    } catch (RuntimeException e) {
      log.warn(
          "cannot read the cluster secret: the node link (--master-url) is off: {}",
          e.getMessage());
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    if (listener != null) {
      listener.close();
    }
    if (heartbeats != null) {
      heartbeats.close();
    }
  }
}
