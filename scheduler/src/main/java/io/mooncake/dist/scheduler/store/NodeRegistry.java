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
    return heartbeat(nodeId, instanceId, null);
  }

  /**
   * What a heartbeat reports of the node's data directory (issue 22): the file system's capacity
   * and free bytes, the node's eviction watermarks (percent used), and the per-model figures that
   * changed since the last recorded heartbeat (usually none).
   */
  public record Disk(
      long capacityBytes,
      long freeBytes,
      int highWatermarkPct,
      int lowWatermarkPct,
      List<NodeDisks.Usage> changed) {
    public Disk {
      changed = List.copyOf(changed);
    }

    /** The node link's {@code disk} object: figures, and the changed models. */
    public java.util.Map<String, Object> toWire() {
      java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
      m.put("capacity_bytes", capacityBytes);
      m.put("free_bytes", freeBytes);
      m.put("high_watermark_pct", highWatermarkPct);
      m.put("low_watermark_pct", lowWatermarkPct);
      List<java.util.Map<String, Object>> models = new java.util.ArrayList<>();
      for (NodeDisks.Usage u : changed) {
        java.util.Map<String, Object> e = new java.util.LinkedHashMap<>();
        e.put("provider", u.model().provider());
        e.put("model_id", u.model().modelId());
        e.put("revision", u.model().revision());
        e.put("format", u.model().format());
        e.put("bytes", u.bytes());
        e.put("last_used_at", u.lastUsed().toString());
        models.add(e);
      }
      m.put("changed_models", models);
      return m;
    }

    /**
     * Reads {@link #toWire()}'s object as sent by {@code nodeId}.
     *
     * @throws IllegalArgumentException naming the field that is missing or invalid
     */
    public static Disk fromWire(String nodeId, com.fasterxml.jackson.databind.JsonNode n) {
      List<NodeDisks.Usage> changed = new java.util.ArrayList<>();
      var models = n.path("changed_models");
      for (int i = 0; i < models.size(); i++) {
        var e = models.get(i);
        String at = "disk.changed_models[" + i + "]";
        io.mooncake.dist.scheduler.domain.ModelRef model =
            new io.mooncake.dist.scheduler.domain.ModelRef(
                text(e, "model_id", at),
                text(e, "revision", at),
                text(e, "format", at),
                text(e, "provider", at));
        java.time.Instant used;
        try {
          used = java.time.Instant.parse(text(e, "last_used_at", at));
        } catch (java.time.format.DateTimeParseException x) {
          throw new IllegalArgumentException(at + ".last_used_at: not an ISO-8601 instant");
        }
        if (!e.path("bytes").canConvertToLong()) {
          throw new IllegalArgumentException(at + ".bytes: must be a whole number");
        }
        changed.add(new NodeDisks.Usage(nodeId, model, e.path("bytes").asLong(), used));
      }
      int high = n.path("high_watermark_pct").asInt(0);
      int low = n.path("low_watermark_pct").asInt(0);
      if (!n.path("capacity_bytes").canConvertToLong()
          || !n.path("free_bytes").canConvertToLong()) {
        throw new IllegalArgumentException(
            "disk.capacity_bytes and disk.free_bytes: whole numbers");
      }
      return new Disk(
          n.path("capacity_bytes").asLong(), n.path("free_bytes").asLong(), high, low, changed);
    }

    private static String text(com.fasterxml.jackson.databind.JsonNode e, String f, String at) {
      String v = e.path(f).asText("");
      if (v.isEmpty() || v.length() > 512) {
        throw new IllegalArgumentException(at + "." + f + ": required, at most 512 characters");
      }
      return v;
    }
  }

  private boolean heartbeat(String nodeId, String instanceId, Disk disk) {
    var update = dsl.update(NODES).set(NODES.HEARTBEAT_AT, DSL.currentOffsetDateTime());
    if (disk != null) {
      update =
          update
              .set(NODES.CAPACITY_BYTES, disk.capacityBytes())
              .set(NODES.FREE_BYTES, disk.freeBytes())
              .set(NODES.HIGH_WATERMARK_PCT, disk.highWatermarkPct())
              .set(NODES.LOW_WATERMARK_PCT, disk.lowWatermarkPct());
    }
    boolean recorded =
        update.where(NODES.NODE_ID.eq(nodeId)).and(NODES.INSTANCE_ID.eq(instanceId)).execute() == 1;
    if (recorded && disk != null && !disk.changed().isEmpty()) {
      new NodeDisks(dsl).record(disk.changed());
    }
    return recorded;
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
    return heartbeat(nodeId, instanceId, leaseOwner, runningTaskIds, lease, null);
  }

  /**
   * As above, also reporting the node's disk ({@code null}: nothing to report): capacity and free
   * bytes go into the node row by the same statement; changed per-model figures, when there are
   * any, by one more.
   */
  public boolean heartbeat(
      String nodeId,
      String instanceId,
      String leaseOwner,
      java.util.Collection<Long> runningTaskIds,
      Duration lease,
      Disk disk) {
    return heartbeat(nodeId, instanceId, leaseOwner, runningTaskIds, null, lease, disk);
  }

  /**
   * As above, also recording the running tasks' progress: {@code bytesDone} lists, in the order of
   * {@code runningTaskIds}, each task's bytes so far, or -1 where the count has not moved since the
   * last heartbeat ({@code null}: none moved). A moved count is written with {@code updated_at}, so
   * a stalled transfer's row ages (how a stalled pull stops counting as in flight for others), as
   * the separate progress write did. Progress rides on the lease renewal that writes these rows
   * anyway: one statement fewer per node and second of transfer (issue 19).
   */
  public boolean heartbeat(
      String nodeId,
      String instanceId,
      String leaseOwner,
      java.util.Collection<Long> runningTaskIds,
      List<Long> bytesDone,
      Duration lease,
      Disk disk) {
    if (runningTaskIds.isEmpty()) {
      return heartbeat(nodeId, instanceId, disk);
    }
    Long[] bytes = Beat.progressOf(runningTaskIds, bytesDone);
    boolean recorded =
        dsl.connectionResult(
            c -> {
              try (java.sql.PreparedStatement ps = c.prepareStatement(HEARTBEAT_AND_RENEW)) {
                ps.setArray(1, c.createArrayOf("bigint", runningTaskIds.toArray()));
                ps.setArray(2, c.createArrayOf("bigint", bytes));
                ps.setString(3, leaseOwner);
                ps.setDouble(4, lease.toMillis() / 1000.0);
                setDisk(ps, 5, disk);
                ps.setString(9, nodeId);
                ps.setString(10, instanceId);
                return ps.executeUpdate() == 1;
              }
            });
    if (recorded && disk != null && !disk.changed().isEmpty()) {
      new NodeDisks(dsl).record(disk.changed());
    }
    return recorded;
  }

  private static void setDisk(java.sql.PreparedStatement ps, int at, Disk disk)
      throws java.sql.SQLException {
    if (disk == null) {
      for (int i = 0; i < 4; i++) {
        ps.setNull(at + i, i < 2 ? java.sql.Types.BIGINT : java.sql.Types.INTEGER);
      }
      return;
    }
    ps.setLong(at, disk.capacityBytes());
    ps.setLong(at + 1, disk.freeBytes());
    ps.setInt(at + 2, disk.highWatermarkPct());
    ps.setInt(at + 3, disk.lowWatermarkPct());
  }

  /**
   * The progress part of a lease renewal: a count that moved (not -1) is written, with {@code
   * updated_at} when it differs from the row's.
   */
  private static final String PROGRESS_SET =
      """
      bytes_done = CASE WHEN leases.bytes >= 0 THEN leases.bytes ELSE t.bytes_done END,
      updated_at = CASE WHEN leases.bytes >= 0 AND leases.bytes <> t.bytes_done THEN now() ELSE t.updated_at END""";

  /**
   * Renews only the task rows nobody holds locked right now ({@code SKIP LOCKED}): a locked row is
   * being finished (its own node's outcome) or rescued (the scheduler), and a heartbeat that waited
   * for it was a node that looked dead for as long as that transaction lasted (issue 19).
   */
  private static final String HEARTBEAT_AND_RENEW =
      """
      WITH leases AS (
        SELECT t.task_id, r.bytes
          FROM tasks t
          JOIN unnest(?::bigint[], ?::bigint[]) AS r(task_id, bytes) ON t.task_id = r.task_id
         WHERE t.lease_owner = ? AND t.state = 'processing'
           FOR UPDATE OF t SKIP LOCKED),
      renewed AS (
        UPDATE tasks t SET lease_expires_at = now() + make_interval(secs => ?),
               %s
          FROM leases WHERE t.task_id = leases.task_id)
      UPDATE nodes SET heartbeat_at = now(),
             capacity_bytes = coalesce(?::bigint, capacity_bytes),
             free_bytes = coalesce(?::bigint, free_bytes),
             high_watermark_pct = coalesce(?::integer, high_watermark_pct),
             low_watermark_pct = coalesce(?::integer, low_watermark_pct)
       WHERE node_id = ? AND instance_id = ?
      """
          .formatted(PROGRESS_SET);

  /** One node's heartbeat as a master batches it: its instance and the leases it renews. */
  public record Beat(
      String nodeId,
      String instanceId,
      String leaseOwner,
      java.util.Collection<Long> runningTaskIds,
      Duration lease,
      Disk disk,
      List<Long> bytesDone) {
    /**
     * {@code bytesDone}: per running task, in order, its bytes so far or -1 when unchanged; null
     * when no count moved.
     */
    public Beat {
      if (bytesDone != null && bytesDone.size() != runningTaskIds.size()) {
        throw new IllegalArgumentException(
            "bytesDone lists "
                + bytesDone.size()
                + " counts for "
                + runningTaskIds.size()
                + " running tasks");
      }
    }

    /** A heartbeat that reports no progress. */
    public Beat(
        String nodeId,
        String instanceId,
        String leaseOwner,
        java.util.Collection<Long> runningTaskIds,
        Duration lease,
        Disk disk) {
      this(nodeId, instanceId, leaseOwner, runningTaskIds, lease, disk, null);
    }

    /** Per task of {@code ids}, its count from {@code bytesDone}, or -1 (unchanged). */
    static Long[] progressOf(java.util.Collection<Long> ids, List<Long> bytesDone) {
      Long[] out = new Long[ids.size()];
      for (int i = 0; i < out.length; i++) {
        Long b = bytesDone == null ? null : bytesDone.get(i);
        out[i] = b == null || b < 0 ? -1L : b;
      }
      return out;
    }

    /** A heartbeat that reports no disk figures (an older client). */
    public Beat(
        String nodeId,
        String instanceId,
        String leaseOwner,
        java.util.Collection<Long> runningTaskIds,
        Duration lease) {
      this(nodeId, instanceId, leaseOwner, runningTaskIds, lease, null);
    }
  }

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
    Long[] capacity = new Long[beats.size()];
    Long[] free = new Long[beats.size()];
    Integer[] high = new Integer[beats.size()];
    Integer[] low = new Integer[beats.size()];
    Long[] taskIds = new Long[tasks];
    String[] owners = new String[tasks];
    Double[] seconds = new Double[tasks];
    Long[] progress = new Long[tasks];
    int i = 0;
    int t = 0;
    for (Beat b : beats) {
      nodes[i] = b.nodeId();
      if (b.disk() != null) {
        capacity[i] = b.disk().capacityBytes();
        free[i] = b.disk().freeBytes();
        high[i] = b.disk().highWatermarkPct();
        low[i] = b.disk().lowWatermarkPct();
      }
      instances[i++] = b.instanceId();
      Long[] bytes = Beat.progressOf(b.runningTaskIds(), b.bytesDone());
      int j = 0;
      for (Long id : b.runningTaskIds()) {
        taskIds[t] = id;
        owners[t] = b.leaseOwner();
        progress[t] = bytes[j++];
        seconds[t++] = b.lease().toMillis() / 1000.0;
      }
    }
    Beaten beaten =
        dsl.connectionResult(
            c -> {
              try (java.sql.PreparedStatement ps = c.prepareStatement(HEARTBEAT_ALL)) {
                ps.setArray(1, c.createArrayOf("text", nodes));
                ps.setArray(2, c.createArrayOf("text", instances));
                ps.setArray(3, c.createArrayOf("bigint", capacity));
                ps.setArray(4, c.createArrayOf("bigint", free));
                ps.setArray(5, c.createArrayOf("integer", high));
                ps.setArray(6, c.createArrayOf("integer", low));
                ps.setArray(7, c.createArrayOf("bigint", taskIds));
                ps.setArray(8, c.createArrayOf("text", owners));
                ps.setArray(9, c.createArrayOf("float8", seconds));
                ps.setArray(10, c.createArrayOf("bigint", progress));
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
    // Per-model figures only of the nodes that sent changes and were recorded: one statement for
    // the whole batch, none when nothing changed (the usual heartbeat).
    List<NodeDisks.Usage> changed =
        beats.stream()
            .filter(b -> b.disk() != null && beaten.recorded().contains(b.nodeId()))
            .flatMap(b -> b.disk().changed().stream())
            .toList();
    if (!changed.isEmpty()) {
      new NodeDisks(dsl).record(changed);
    }
    return beaten;
  }

  private static final String HEARTBEAT_ALL =
      """
      WITH b AS (SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::integer[],
                                      ?::integer[])
                   AS b(node_id, instance_id, capacity, free, high, low)),
      mine AS (
        SELECT n.node_id FROM nodes n JOIN b ON b.node_id = n.node_id AND b.instance_id = n.instance_id),
      free AS (
        SELECT n.node_id FROM nodes n WHERE n.node_id IN (SELECT node_id FROM mine)
           FOR UPDATE SKIP LOCKED),
      beat AS (
        UPDATE nodes n SET heartbeat_at = now(),
               capacity_bytes = coalesce(b.capacity, n.capacity_bytes),
               free_bytes = coalesce(b.free, n.free_bytes),
               high_watermark_pct = coalesce(b.high, n.high_watermark_pct),
               low_watermark_pct = coalesce(b.low, n.low_watermark_pct)
          FROM free, b
         WHERE n.node_id = free.node_id AND b.node_id = n.node_id AND b.instance_id = n.instance_id
        RETURNING n.node_id),
      leases AS (
        SELECT t.task_id, r.secs, r.bytes
          FROM tasks t
          JOIN unnest(?::bigint[], ?::text[], ?::float8[], ?::bigint[]) AS r(task_id, owner, secs, bytes)
            ON t.task_id = r.task_id AND t.lease_owner = r.owner AND t.state = 'processing'
           FOR UPDATE OF t SKIP LOCKED),
      renewed AS (
        UPDATE tasks t SET lease_expires_at = now() + make_interval(secs => leases.secs),
               %s
          FROM leases WHERE t.task_id = leases.task_id)
      SELECT mine.node_id, beat.node_id IS NOT NULL FROM mine LEFT JOIN beat ON beat.node_id = mine.node_id
      """
          .formatted(PROGRESS_SET);

  public List<NodeInfo> list() {
    OffsetDateTime now = dsl.select(DSL.currentOffsetDateTime()).fetchOne().value1();
    java.util.Map<String, List<io.mooncake.dist.scheduler.domain.HeldModel>> held =
        new NodeDisks(dsl).held();
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
                    r.get(NODES.SERVE_LAST_ERROR),
                    r.get(NODES.CAPACITY_BYTES),
                    r.get(NODES.FREE_BYTES),
                    r.get(NODES.HIGH_WATERMARK_PCT),
                    r.get(NODES.LOW_WATERMARK_PCT),
                    held.getOrDefault(r.get(NODES.NODE_ID), List.of()).stream()
                        .mapToLong(io.mooncake.dist.scheduler.domain.HeldModel::bytes)
                        .sum(),
                    held.getOrDefault(r.get(NODES.NODE_ID), List.of())));
  }

  public Optional<NodeInfo> find(String nodeId) {
    return list().stream().filter(n -> n.nodeId().equals(nodeId)).findFirst();
  }
}
