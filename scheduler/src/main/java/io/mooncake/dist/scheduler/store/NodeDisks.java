package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.EVICTIONS;
import static io.mooncake.dist.db.jooq.Tables.MODEL_PINS;
import static io.mooncake.dist.db.jooq.Tables.NODE_MODELS;

import io.mooncake.dist.scheduler.domain.HeldModel;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;

/**
 * What the nodes' disks hold and what may leave them (issue 22): bytes held per model and its last
 * use ({@code node_models}), the operators' pins ({@code model_pins}), the models active jobs use
 * on a node, and the eviction itself, which withdraws the model's replica rows (so no copy takes it
 * from this node again) and records it in {@code evictions} in one transaction.
 */
public final class NodeDisks {
  private final DSLContext dsl;

  public NodeDisks(DSLContext dsl) {
    this.dsl = dsl;
  }

  /**
   * A node's figures for one model: {@code bytes} held (negative: the model is gone from the node)
   * and when it was last used there.
   */
  public record Usage(String nodeId, ModelRef model, long bytes, Instant lastUsed) {
    public boolean gone() {
      return bytes < 0;
    }
  }

  /** A pin: {@code model} is never evicted on {@code nodeId}. */
  public record Pin(String nodeId, ModelRef model, String pinnedBy, String pinnedAt) {}

  /**
   * Writes the changed figures of any number of nodes in at most two statements (an upsert and a
   * delete), whatever the batch: the heartbeat path calls this only when a node sent changes.
   */
  public void record(Collection<Usage> changes) {
    List<Usage> upserts = changes.stream().filter(u -> !u.gone()).toList();
    List<Usage> gone = changes.stream().filter(Usage::gone).toList();
    if (!upserts.isEmpty()) {
      dsl.connection(
          c -> {
            try (PreparedStatement ps = c.prepareStatement(UPSERT)) {
              bindKeys(c, ps, upserts);
              ps.setArray(
                  6, c.createArrayOf("bigint", upserts.stream().map(Usage::bytes).toArray()));
              ps.setArray(
                  7,
                  c.createArrayOf(
                      "timestamptz",
                      upserts.stream().map(u -> Timestamp.from(u.lastUsed())).toArray()));
              ps.executeUpdate();
            }
          });
    }
    if (!gone.isEmpty()) {
      dsl.connection(
          c -> {
            try (PreparedStatement ps = c.prepareStatement(DELETE)) {
              bindKeys(c, ps, gone);
              ps.executeUpdate();
            }
          });
    }
  }

  private static void bindKeys(java.sql.Connection c, PreparedStatement ps, List<Usage> us)
      throws java.sql.SQLException {
    ps.setArray(1, c.createArrayOf("text", us.stream().map(Usage::nodeId).toArray()));
    ps.setArray(2, c.createArrayOf("text", us.stream().map(u -> u.model().provider()).toArray()));
    ps.setArray(3, c.createArrayOf("text", us.stream().map(u -> u.model().modelId()).toArray()));
    ps.setArray(4, c.createArrayOf("text", us.stream().map(u -> u.model().revision()).toArray()));
    ps.setArray(5, c.createArrayOf("text", us.stream().map(u -> u.model().format()).toArray()));
  }

  private static final String UPSERT =
      """
      INSERT INTO node_models (node_id, provider, model_id, revision, format, bytes, last_used_at)
      SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[],
                           ?::timestamptz[])
      ON CONFLICT (node_id, provider, model_id, revision, format) DO UPDATE
         SET bytes = excluded.bytes, last_used_at = excluded.last_used_at, updated_at = now()
      """;

  private static final String DELETE =
      """
      DELETE FROM node_models m
       USING unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
             AS g(node_id, provider, model_id, revision, format)
       WHERE m.node_id = g.node_id AND m.provider = g.provider AND m.model_id = g.model_id
         AND m.revision = g.revision AND m.format = g.format
      """;

  /** What the database holds for {@code nodeId}: read once when a client starts. */
  public List<Usage> reported(String nodeId) {
    return dsl.selectFrom(NODE_MODELS)
        .where(NODE_MODELS.NODE_ID.eq(nodeId))
        .fetch(
            r ->
                new Usage(
                    nodeId,
                    new ModelRef(r.getModelId(), r.getRevision(), r.getFormat(), r.getProvider()),
                    r.getBytes(),
                    r.getLastUsedAt().toInstant()));
  }

  /** The size of a job's model ({@code total_size_bytes}); 0 for an unknown job. */
  public long modelBytesOfJob(String jobId) {
    Long b =
        dsl.select(io.mooncake.dist.db.jooq.Tables.JOBS.TOTAL_SIZE_BYTES)
            .from(io.mooncake.dist.db.jooq.Tables.JOBS)
            .where(io.mooncake.dist.db.jooq.Tables.JOBS.JOB_ID.eq(jobId))
            .fetchOne(io.mooncake.dist.db.jooq.Tables.JOBS.TOTAL_SIZE_BYTES);
    return b == null ? 0 : b;
  }

  /** The models pinned on {@code nodeId}. */
  public Set<ModelRef> pinned(String nodeId) {
    Set<ModelRef> s = new HashSet<>();
    dsl.selectFrom(MODEL_PINS)
        .where(MODEL_PINS.NODE_ID.eq(nodeId))
        .fetch()
        .forEach(
            r ->
                s.add(
                    new ModelRef(r.getModelId(), r.getRevision(), r.getFormat(), r.getProvider())));
    return s;
  }

  /**
   * The models active work uses on {@code nodeId}: those of every job not yet terminal with a
   * placement there that has not failed (it stages, or holds, the model for that job), and those of
   * jobs whose running copies read from this node right now.
   */
  public Set<ModelRef> inUse(String nodeId) {
    return dsl.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(IN_USE)) {
            ps.setString(1, nodeId);
            ps.setString(2, nodeId);
            Set<ModelRef> s = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                s.add(
                    new ModelRef(
                        rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)));
              }
            }
            return s;
          }
        });
  }

  private static final String IN_USE =
      """
      SELECT j.model_id, j.revision, j.format, j.provider
        FROM jobs j JOIN placements p ON p.job_id = j.job_id
       WHERE j.status IN ('planned', 'seeding', 'replicating')
         AND p.node_id = ? AND p.state <> 'failed'
      UNION
      SELECT j.model_id, j.revision, j.format, j.provider
        FROM tasks t JOIN jobs j ON j.job_id = t.job_id
       WHERE t.state = 'processing' AND t.source_node_id = ?
      """;

  /**
   * Evicts {@code model} from {@code nodeId} in the database, in one transaction: unless it is
   * pinned or in use there by then, withdraws the node's replica rows under {@code modelDir} (no
   * copy takes the model from this node again; a later job stages it anew), forgets its usage row
   * and records the eviction. The caller deletes the files afterwards.
   *
   * @return null when evicted; else why not (pinned, or the jobs using it)
   */
  public String evict(String nodeId, ModelRef model, long bytes, String reason, String modelDir) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          NodeDisks in = new NodeDisks(tx);
          if (in.pinned(nodeId).contains(model)) {
            return "pinned";
          }
          if (in.inUse(nodeId).contains(model)) {
            return "in use by an active job";
          }
          new ReplicaCatalog(tx).removeUnder(nodeId, modelDir);
          tx.deleteFrom(NODE_MODELS)
              .where(NODE_MODELS.NODE_ID.eq(nodeId))
              .and(NODE_MODELS.PROVIDER.eq(model.provider()))
              .and(NODE_MODELS.MODEL_ID.eq(model.modelId()))
              .and(NODE_MODELS.REVISION.eq(model.revision()))
              .and(NODE_MODELS.FORMAT.eq(model.format()))
              .execute();
          tx.insertInto(EVICTIONS)
              .set(EVICTIONS.NODE_ID, nodeId)
              .set(EVICTIONS.PROVIDER, model.provider())
              .set(EVICTIONS.MODEL_ID, model.modelId())
              .set(EVICTIONS.REVISION, model.revision())
              .set(EVICTIONS.FORMAT, model.format())
              .set(EVICTIONS.BYTES, Math.max(0, bytes))
              .set(EVICTIONS.REASON, reason.length() > 2000 ? reason.substring(0, 2000) : reason)
              .execute();
          return null;
        });
  }

  /** Pins {@code model} on each of {@code nodes} (already pinned: kept as it was). */
  public void pin(ModelRef model, List<String> nodes, String pinnedBy) {
    var insert =
        dsl.insertInto(
            MODEL_PINS,
            MODEL_PINS.NODE_ID,
            MODEL_PINS.PROVIDER,
            MODEL_PINS.MODEL_ID,
            MODEL_PINS.REVISION,
            MODEL_PINS.FORMAT,
            MODEL_PINS.PINNED_BY);
    for (String n : nodes) {
      insert =
          insert.values(
              n, model.provider(), model.modelId(), model.revision(), model.format(), pinnedBy);
    }
    insert.onConflictDoNothing().execute();
  }

  /** Unpins {@code model} on each of {@code nodes}; returns the nodes where it was pinned. */
  public List<String> unpin(ModelRef model, List<String> nodes) {
    return dsl.deleteFrom(MODEL_PINS)
        .where(MODEL_PINS.NODE_ID.in(nodes))
        .and(MODEL_PINS.PROVIDER.eq(model.provider()))
        .and(MODEL_PINS.MODEL_ID.eq(model.modelId()))
        .and(MODEL_PINS.REVISION.eq(model.revision()))
        .and(MODEL_PINS.FORMAT.eq(model.format()))
        .returning(MODEL_PINS.NODE_ID)
        .fetch(MODEL_PINS.NODE_ID);
  }

  /** Every pin, by node then model. */
  public List<Pin> pins() {
    return dsl.selectFrom(MODEL_PINS)
        .orderBy(
            MODEL_PINS.NODE_ID,
            MODEL_PINS.PROVIDER,
            MODEL_PINS.MODEL_ID,
            MODEL_PINS.REVISION,
            MODEL_PINS.FORMAT)
        .fetch(
            r ->
                new Pin(
                    r.getNodeId(),
                    new ModelRef(r.getModelId(), r.getRevision(), r.getFormat(), r.getProvider()),
                    r.getPinnedBy(),
                    r.getPinnedAt().toString()));
  }

  /**
   * The models each node holds, by node; pinned ones the node does not hold are listed at 0 bytes.
   */
  public Map<String, List<HeldModel>> held() {
    Map<String, List<HeldModel>> byNode = new LinkedHashMap<>();
    Set<String> pins = new HashSet<>();
    pins().forEach(p -> pins.add(p.nodeId() + "\n" + key(p.model())));
    dsl.selectFrom(NODE_MODELS)
        .orderBy(NODE_MODELS.NODE_ID, NODE_MODELS.LAST_USED_AT.desc())
        .fetch()
        .forEach(
            r -> {
              ModelRef m =
                  new ModelRef(r.getModelId(), r.getRevision(), r.getFormat(), r.getProvider());
              boolean pinned = pins.remove(r.getNodeId() + "\n" + key(m));
              byNode
                  .computeIfAbsent(r.getNodeId(), k -> new ArrayList<>())
                  .add(new HeldModel(m, r.getBytes(), r.getLastUsedAt().toString(), pinned));
            });
    for (Pin p : pins()) {
      if (pins.contains(p.nodeId() + "\n" + key(p.model()))) {
        byNode
            .computeIfAbsent(p.nodeId(), k -> new ArrayList<>())
            .add(new HeldModel(p.model(), 0, null, true));
      }
    }
    return byNode;
  }

  private static String key(ModelRef m) {
    return m.provider() + "\n" + m.modelId() + "\n" + m.revision() + "\n" + m.format();
  }
}
