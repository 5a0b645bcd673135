package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.NODES;

import io.mooncake.dist.scheduler.domain.NodeInfo;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/** Registered nodes and their heartbeats. A node is live while its heartbeat is recent. */
public final class NodeRegistry {
  /**
   * A node that missed this long of heartbeats is shown as not live and is not used as a source.
   */
  public static final Duration LIVENESS = Duration.ofSeconds(10);

  private final DSLContext dsl;

  public NodeRegistry(DSLContext dsl) {
    this.dsl = dsl;
  }

  /** Registers (or re-registers after a restart) a node under a fresh instance id. */
  public void register(String nodeId, String host, int port, String dataDir, String instanceId) {
    dsl.insertInto(NODES)
        .set(NODES.NODE_ID, nodeId)
        .set(NODES.HOST, host)
        .set(NODES.PORT, port)
        .set(NODES.DATA_DIR, dataDir)
        .set(NODES.INSTANCE_ID, instanceId)
        .onConflict(NODES.NODE_ID)
        .doUpdate()
        .set(NODES.HOST, host)
        .set(NODES.PORT, port)
        .set(NODES.DATA_DIR, dataDir)
        .set(NODES.INSTANCE_ID, instanceId)
        .set(NODES.STARTED_AT, DSL.currentOffsetDateTime())
        .set(NODES.HEARTBEAT_AT, DSL.currentOffsetDateTime())
        .execute();
  }

  /** Records a heartbeat; false when another instance has since registered under this node id. */
  public boolean heartbeat(String nodeId, String instanceId) {
    return dsl.update(NODES)
            .set(NODES.HEARTBEAT_AT, DSL.currentOffsetDateTime())
            .where(NODES.NODE_ID.eq(nodeId))
            .and(NODES.INSTANCE_ID.eq(instanceId))
            .execute()
        == 1;
  }

  /**
   * A heartbeat that also renews the leases of the tasks this instance is running, in one statement
   * (issue 19: at a thousand busy nodes, the separate renewal was half of the heartbeat traffic);
   * false when another instance has since registered under this node id.
   */
  public boolean heartbeat(
      String nodeId,
      String instanceId,
      String leaseOwner,
      java.util.Collection<Long> runningTaskIds,
      Duration lease) {
    if (runningTaskIds.isEmpty()) {
      return heartbeat(nodeId, instanceId);
    }
    return dsl.connectionResult(
        c -> {
          try (java.sql.PreparedStatement ps = c.prepareStatement(HEARTBEAT_AND_RENEW)) {
            ps.setString(1, leaseOwner);
            ps.setArray(2, c.createArrayOf("bigint", runningTaskIds.toArray()));
            ps.setDouble(3, lease.toMillis() / 1000.0);
            ps.setString(4, nodeId);
            ps.setString(5, instanceId);
            return ps.executeUpdate() == 1;
          }
        });
  }

  /**
   * Renews only the task rows nobody holds locked right now ({@code SKIP LOCKED}): a locked row is
   * being finished (its own node's outcome) or rescued (the scheduler), and a heartbeat that waited
   * for it was a node that looked dead for as long as that transaction lasted (issue 19).
   */
  private static final String HEARTBEAT_AND_RENEW =
      """
      WITH leases AS (
        SELECT task_id FROM tasks
         WHERE lease_owner = ? AND state = 'processing' AND task_id = ANY (?)
           FOR UPDATE SKIP LOCKED),
      renewed AS (
        UPDATE tasks t SET lease_expires_at = now() + make_interval(secs => ?)
          FROM leases WHERE t.task_id = leases.task_id)
      UPDATE nodes SET heartbeat_at = now() WHERE node_id = ? AND instance_id = ?
      """;

  /** One node's heartbeat as a master batches it: its instance and the leases it renews. */
  public record Beat(
      String nodeId,
      String instanceId,
      String leaseOwner,
      java.util.Collection<Long> runningTaskIds,
      Duration lease) {}

  /**
   * What {@link #heartbeatAll} did for each node: recorded, or skipped because another transaction
   * held its row at that moment (it is still registered; its link tries again or writes the
   * heartbeat itself). A node in neither set has been replaced by another instance (or
   * deregistered) and must stop.
   */
  public record Beaten(java.util.Set<String> recorded, java.util.Set<String> busy) {}

  /**
   * The heartbeats of many nodes in one statement (a master batches what its node links send): each
   * node's row is touched when its instance is still the registered one, and each listed task still
   * held by that node's lease owner gets its lease renewed. Rows another transaction holds are
   * skipped, never waited for: one node's slow outcome transaction (holding its task row) or a node
   * writing its own heartbeat must not hold up the liveness of every node in the batch. At 300
   * simulated nodes, waiting made every node look dead for up to 20 s while a job started, and
   * copies failed for want of a live source (issue 19).
   */
  public Beaten heartbeatAll(List<Beat> beats) {
    if (beats.isEmpty()) {
      return new Beaten(java.util.Set.of(), java.util.Set.of());
    }
    int tasks = beats.stream().mapToInt(b -> b.runningTaskIds().size()).sum();
    String[] nodes = new String[beats.size()];
    String[] instances = new String[beats.size()];
    Long[] taskIds = new Long[tasks];
    String[] owners = new String[tasks];
    Double[] seconds = new Double[tasks];
    int i = 0;
    int t = 0;
    for (Beat b : beats) {
      nodes[i] = b.nodeId();
      instances[i++] = b.instanceId();
      for (Long id : b.runningTaskIds()) {
        taskIds[t] = id;
        owners[t] = b.leaseOwner();
        seconds[t++] = b.lease().toMillis() / 1000.0;
      }
    }
    return dsl.connectionResult(
        c -> {
          try (java.sql.PreparedStatement ps = c.prepareStatement(HEARTBEAT_ALL)) {
            ps.setArray(1, c.createArrayOf("text", nodes));
            ps.setArray(2, c.createArrayOf("text", instances));
            ps.setArray(3, c.createArrayOf("bigint", taskIds));
            ps.setArray(4, c.createArrayOf("text", owners));
            ps.setArray(5, c.createArrayOf("float8", seconds));
            java.util.Set<String> recorded = new java.util.HashSet<>();
            java.util.Set<String> busy = new java.util.HashSet<>();
            try (java.sql.ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                (rs.getBoolean(2) ? recorded : busy).add(rs.getString(1));
              }
            }
            return new Beaten(recorded, busy);
          }
        });
  }

  private static final String HEARTBEAT_ALL =
      """
      WITH b AS (SELECT * FROM unnest(?::text[], ?::text[]) AS b(node_id, instance_id)),
      mine AS (
        SELECT n.node_id FROM nodes n JOIN b ON b.node_id = n.node_id AND b.instance_id = n.instance_id),
      free AS (
        SELECT n.node_id FROM nodes n WHERE n.node_id IN (SELECT node_id FROM mine)
           FOR UPDATE SKIP LOCKED),
      beat AS (
        UPDATE nodes n SET heartbeat_at = now()
          FROM free, b
         WHERE n.node_id = free.node_id AND b.node_id = n.node_id AND b.instance_id = n.instance_id
        RETURNING n.node_id),
      leases AS (
        SELECT t.task_id, r.secs
          FROM tasks t
          JOIN unnest(?::bigint[], ?::text[], ?::float8[]) AS r(task_id, owner, secs)
            ON t.task_id = r.task_id AND t.lease_owner = r.owner AND t.state = 'processing'
           FOR UPDATE OF t SKIP LOCKED),
      renewed AS (
        UPDATE tasks t SET lease_expires_at = now() + make_interval(secs => leases.secs)
          FROM leases WHERE t.task_id = leases.task_id)
      SELECT mine.node_id, beat.node_id IS NOT NULL FROM mine LEFT JOIN beat ON beat.node_id = mine.node_id
      """;

  public List<NodeInfo> list() {
    OffsetDateTime now = dsl.select(DSL.currentOffsetDateTime()).fetchOne().value1();
    return dsl.select(NODES.asterisk(), ReplicaCatalog.AVOIDED.as("avoided"))
        .from(NODES)
        .orderBy(NODES.NODE_ID)
        .fetch(
            r ->
                new NodeInfo(
                    r.get(NODES.NODE_ID),
                    r.get(NODES.HOST),
                    r.get(NODES.PORT),
                    r.get(NODES.DATA_DIR),
                    r.get(NODES.INSTANCE_ID),
                    r.get(NODES.STARTED_AT).toString(),
                    r.get(NODES.HEARTBEAT_AT).toString(),
                    r.get(NODES.HEARTBEAT_AT).isAfter(now.minus(LIVENESS)),
                    r.get(NODES.SERVE_FAILURES),
                    r.get("avoided", Boolean.class),
                    r.get(NODES.SERVE_LAST_ERROR)));
  }

  public Optional<NodeInfo> find(String nodeId) {
    return list().stream().filter(n -> n.nodeId().equals(nodeId)).findFirst();
  }
}
