package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.NODES;
import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;

import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/** Which node holds which object: published on task success, consulted for reuse and sources. */
public final class ReplicaCatalog {
  private final DSLContext dsl;

  public ReplicaCatalog(DSLContext dsl) {
    this.dsl = dsl;
  }

  /**
   * Inserts or refreshes replicas inside the caller's transaction, all in one statement (a seed
   * publishes every object of the model again when its download succeeds: ten thousand objects were
   * ten thousand statements). Rows go in key order, so two publishers lock shared rows in the same
   * order; a replica listed twice counts once, the later entry winning.
   */
  static void publish(DSLContext tx, List<Replica> replicas) {
    if (replicas.isEmpty()) {
      return;
    }
    Map<List<String>, Replica> unique = new LinkedHashMap<>();
    for (Replica r : replicas) {
      unique.put(List.of(r.objectId(), r.nodeId()), r);
    }
    List<Replica> rows = new ArrayList<>(unique.values());
    int n = rows.size();
    String[] objects = new String[n];
    String[] nodes = new String[n];
    Long[] sizes = new Long[n];
    String[] digests = new String[n];
    String[] paths = new String[n];
    Long[] offsets = new Long[n];
    for (int i = 0; i < n; i++) {
      Replica r = rows.get(i);
      objects[i] = r.objectId();
      nodes[i] = r.nodeId();
      sizes[i] = r.sizeBytes();
      digests[i] = r.digest();
      paths[i] = r.filePath();
      offsets[i] = r.fileOffset();
    }
    tx.connection(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(PUBLISH)) {
            ps.setArray(1, c.createArrayOf("text", objects));
            ps.setArray(2, c.createArrayOf("text", nodes));
            ps.setArray(3, c.createArrayOf("bigint", sizes));
            ps.setArray(4, c.createArrayOf("text", digests));
            ps.setArray(5, c.createArrayOf("text", paths));
            ps.setArray(6, c.createArrayOf("bigint", offsets));
            ps.executeUpdate();
          }
        });
  }

  /** The head of every replica publication; a SELECT of the six columns follows. */
  private static final String UPSERT_INTO =
      "INSERT INTO object_replicas AS o (object_id, node_id, size_bytes, digest, file_path,"
          + " file_offset)\n";

  /** A re-published replica replaces the row (a re-download may have moved its file). */
  private static final String UPSERT_CONFLICT =
      """
      ON CONFLICT (object_id, node_id) DO UPDATE
         SET size_bytes = excluded.size_bytes, digest = excluded.digest, file_path = excluded.file_path,
             file_offset = excluded.file_offset, created_at = now()
      """;

  private static final String PUBLISH =
      UPSERT_INTO
          + """
          SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[])
              AS v (object_id, node_id, size_bytes, digest, file_path, file_offset)
           ORDER BY object_id, node_id
          """
          + UPSERT_CONFLICT;

  /**
   * True when {@code nodeId} lists a replica of every object of the job, each of the right size.
   */
  public static boolean holdsAllObjects(DSLContext dsl, String jobId, String nodeId) {
    int missing =
        dsl.fetchCount(
            DSL.selectOne()
                .from(JOB_OBJECTS)
                .leftJoin(OBJECT_REPLICAS)
                .on(
                    OBJECT_REPLICAS
                        .OBJECT_ID
                        .eq(JOB_OBJECTS.OBJECT_ID)
                        .and(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
                        .and(OBJECT_REPLICAS.SIZE_BYTES.eq(JOB_OBJECTS.LENGTH_BYTES)))
                .where(JOB_OBJECTS.JOB_ID.eq(jobId))
                .and(OBJECT_REPLICAS.OBJECT_ID.isNull()));
    return missing == 0;
  }

  /** Object id to digest for the job's objects as published by {@code nodeId}. */
  public static Map<String, String> digests(DSLContext dsl, String jobId, String nodeId) {
    Map<String, String> out = new HashMap<>();
    dsl.select(OBJECT_REPLICAS.OBJECT_ID, OBJECT_REPLICAS.DIGEST)
        .from(OBJECT_REPLICAS)
        .join(JOB_OBJECTS)
        .on(JOB_OBJECTS.OBJECT_ID.eq(OBJECT_REPLICAS.OBJECT_ID))
        .where(JOB_OBJECTS.JOB_ID.eq(jobId))
        .and(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .fetch()
        .forEach(r -> out.put(r.value1(), r.value2()));
    return out;
  }

  /** Consecutive serve failures after which a holder is tried last. */
  public static final int AVOID_AFTER_FAILURES = 3;

  /** How long after its last failure a marked holder stays avoided. */
  public static final Duration AVOID_FOR = Duration.ofMinutes(5);

  /**
   * Where a copy of {@code objectId} for job {@code jobId} can come from, in one statement (it runs
   * for every copy). Two kinds of source, other than {@code excludeNode}:
   *
   * <ul>
   *   <li>holders: nodes that publish a replica with the expected digest, live ones first and then
   *       those whose heartbeat is late by less than {@link #LAPSED};
   *   <li>arriving: nodes running a copy of this object for this job right now (row written within
   *       {@code fresh}) from a source that is itself a holder, and live. They serve what has
   *       landed while the rest arrives (cut-through relaying). Only pulls from a holder count, so
   *       a relay chain is at most holder, arriving node, reader: no two nodes can ever wait on
   *       each other.
   * </ul>
   *
   * At most {@link #SAMPLE} of them, in one order: the first {@link #SAMPLE} holders and the first
   * {@link #SAMPLE} arriving nodes after {@code excludeNode} in node-id order (a ring, wrapping
   * around), of which {@link #SAMPLE} are kept (on time and not avoided first, otherwise at
   * random), ordered: late holders last, sources not currently avoided first (see {@link
   * #AVOIDED}), then least busy (fewest copies currently reading from them, so no single uplink
   * carries more than its share), holders before arriving nodes at equal load, ties at random. Also
   * the job's seed, its number of followers, and whether a node other than {@code excludeNode} is
   * pulling this object from that seed right now (as for arriving nodes, a stalled pull does not
   * count). Constant SQL on plain JDBC, like the claim: rendering it with jOOQ for every copy cost
   * more client CPU than running it, and kept the JIT busy compiling the renderer on every node.
   */
  public CopySources sources(
      String jobId,
      String objectId,
      String digest,
      String excludeNode,
      Duration liveness,
      Duration fresh) {
    return dsl.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SOURCES)) {
            ps.setString(1, jobId);
            ps.setString(2, objectId);
            ps.setString(3, digest);
            ps.setString(4, excludeNode);
            ps.setDouble(5, liveness.toMillis() / 1000.0);
            ps.setDouble(6, fresh.toMillis() / 1000.0);
            ps.setInt(7, AVOID_AFTER_FAILURES);
            ps.setDouble(8, AVOID_FOR.toSeconds());
            ps.setInt(9, SAMPLE);
            ps.setDouble(10, LAPSED.toSeconds());
            SourceRows rows = new SourceRows();
            try (var rs = ps.executeQuery()) {
              while (rs.next()) {
                rows.add(rs, 1);
              }
            }
            return rows.sources();
          }
        });
  }

  /**
   * Collects the rows {@code copy_sources} returns for one copy (its twelve columns, from {@code
   * at} on) into a {@link CopySources}.
   */
  static final class SourceRows {
    private final List<Replica> holders = new ArrayList<>();
    private final java.util.Set<String> arriving = new java.util.HashSet<>();
    private final java.util.Set<String> struck = new java.util.HashSet<>();
    private boolean held;
    private String seed;
    private boolean seedBusy;
    private int followers;

    void add(java.sql.ResultSet rs, int at) throws java.sql.SQLException {
      seed = rs.getString(at);
      seedBusy = rs.getBoolean(at + 1);
      followers = rs.getInt(at + 2);
      held = rs.getBoolean(at + 11);
      String node = rs.getString(at + 4);
      if (node != null) {
        if (rs.getBoolean(at + 10)) {
          struck.add(node);
        }
        holders.add(
            new Replica(
                rs.getString(at + 3),
                node,
                rs.getLong(at + 5),
                rs.getString(at + 6),
                rs.getString(at + 7),
                rs.getLong(at + 8)));
        if (rs.getBoolean(at + 9)) {
          arriving.add(node);
        }
      }
    }

    CopySources sources() {
      return new CopySources(
          List.copyOf(holders),
          java.util.Set.copyOf(arriving),
          java.util.Set.copyOf(struck),
          seed,
          seedBusy,
          Math.max(0, followers),
          held);
    }
  }

  /**
   * The answer of {@link #sources}: every source best first ({@code holders}, whose {@code
   * filePath} is null for an arriving node), which of them are still receiving the object, which
   * have serve failures on record (a good copy from them clears those, see {@link #holderServed};
   * the others need no write), the job's seed, whether its pull of this object is taken, how many
   * followers the job has (targets other than the seed), counted up to 2 (the worker only asks
   * whether there is more than one), and whether the asking node itself publishes a replica with
   * the expected digest (an earlier job staged it).
   */
  public record CopySources(
      List<Replica> holders,
      java.util.Set<String> arriving,
      java.util.Set<String> struck,
      String seedNodeId,
      boolean seedPullInFlight,
      int followers,
      boolean heldHere) {}

  /**
   * How many live sources (holders and arriving nodes) a copy's lookup reads and ranks by load:
   * reading every holder made the lookup O(N) per copy, N² per object, at a thousand nodes (issue
   * 19). Each asking node reads the next {@code SAMPLE} holders after itself in node-id order (a
   * ring, V015), so every holder sits in about {@code SAMPLE} nodes' windows; the least busy of 8
   * balances uplinks nearly as well as the least busy of all ("power of d choices": two choices
   * already cut the worst load from log n / log log n to log log n); with fewer sources, all of
   * them count. It was 32 until the lookup was the statement with the most Postgres time at 100
   * nodes (83 s of a 153 s job, bench/fleet.sh): each candidate costs it a node probe and a count
   * of the copies reading from it.
   */
  public static final int SAMPLE = 8;

  /**
   * Always one row per source, or one row of nulls (but the seed's answers) when there is none. The
   * query is the database function {@code copy_sources} (migration V012, bounded by V015): PL/pgSQL
   * keeps its (forced generic) plan until a vacuum or analyze of a table it reads invalidates it,
   * where a statement sent through a transaction-mode pooler without prepared statements was
   * planned on every copy, 4.8 ms each at 100 nodes (issue 19). It ranks by load the {@link
   * #SAMPLE} sources after the asking node on the node-id ring, not avoided ones first; its
   * avoidance rule is {@link #AVOIDED}'s, with the same constants passed in.
   */
  private static final String SOURCES = "SELECT * FROM copy_sources(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

  /**
   * How long a holder whose heartbeat is late stays a source, tried after every live one: a late
   * heartbeat is no proof of death when the control plane is overloaded (at 1,000 simulated nodes
   * most heartbeats were late while every node still served, and copies failed "no live node holds
   * object"); a dead holder costs a copy one failed connection. The masters' default node grace.
   */
  public static final Duration LAPSED = Duration.ofMinutes(5);

  /**
   * Whether a node is currently avoided as a copy source: {@value #AVOID_AFTER_FAILURES} failures
   * in a row, the last within {@link #AVOID_FOR}; what {@code GET /api/v1/nodes} reports. The
   * lookup's function ({@code copy_sources}, V012) spells the same rule in SQL with these constants
   * passed in; {@code HolderStrikesTest} checks that the two agree.
   */
  static final org.jooq.Field<Boolean> AVOIDED =
      DSL.field(
          "coalesce({0} >= {1} AND {2} > now() - make_interval(secs => {3}), false)",
          Boolean.class,
          NODES.SERVE_FAILURES,
          DSL.inline(AVOID_AFTER_FAILURES),
          NODES.SERVE_FAILED_AT,
          DSL.inline(AVOID_FOR.toSeconds()));

  /** A copy from {@code holder} failed: one more strike, and the error an operator will see. */
  public void holderFailed(String holder, String error) {
    dsl.update(NODES)
        .set(NODES.SERVE_FAILURES, NODES.SERVE_FAILURES.plus(1))
        .set(NODES.SERVE_FAILED_AT, DSL.currentOffsetDateTime())
        .set(NODES.SERVE_LAST_ERROR, error.length() > 2000 ? error.substring(0, 2000) : error)
        .where(NODES.NODE_ID.eq(holder))
        .execute();
  }

  /**
   * A copy from {@code holder} succeeded: its strikes are cleared (no write when it had none).
   * Constant SQL on plain JDBC: it runs after every copy.
   */
  public void holderServed(String holder) {
    dsl.connection(
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE nodes SET serve_failures = 0 WHERE node_id = ? AND serve_failures > 0")) {
            ps.setString(1, holder);
            ps.executeUpdate();
          }
        });
  }

  /**
   * Whether {@code nodeId}'s replicas of {@code objectIds} (the objects of one file, as it copied
   * and checked them) carry exactly the digests the seed of {@code jobId} publishes, and that
   * seed's placement is staged with its checksum verified. Then the file's bytes are, object for
   * object, the seed's bytes whose whole-file checksum the seed matched, so hashing the whole file
   * again proves nothing new.
   */
  public boolean matchesVerifiedSeed(String jobId, String nodeId, List<String> objectIds) {
    if (objectIds.isEmpty()) {
      return false;
    }
    Integer matching =
        dsl.resultQuery(
                """
        SELECT count(*)
          FROM unnest({0}::text[]) AS o(object_id)
          JOIN jobs j ON j.job_id = {1}
          JOIN placements sp ON sp.job_id = j.job_id AND sp.node_id = j.seed_node_id
                            AND sp.state = 'staged' AND sp.checksum_verified
          JOIN object_replicas mine ON mine.object_id = o.object_id AND mine.node_id = {2}
          JOIN object_replicas seed ON seed.object_id = o.object_id AND seed.node_id = j.seed_node_id
                                   AND seed.digest = mine.digest
        """,
                DSL.val(objectIds.toArray(String[]::new)), DSL.val(jobId), DSL.val(nodeId))
            .fetchOne(0, Integer.class);
    return matching != null && matching == objectIds.size();
  }

  /** Where this node's own replica of an object is, if it publishes one. */
  public Optional<Replica> local(String nodeId, String objectId) {
    return dsl.selectFrom(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.OBJECT_ID.eq(objectId))
        .and(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .fetchOptional(
            r ->
                new Replica(
                    r.getObjectId(),
                    r.getNodeId(),
                    r.getSizeBytes(),
                    r.getDigest(),
                    r.getFilePath(),
                    r.getFileOffset()));
  }

  /** Every replica a node publishes (for its start-up reconciliation). */
  public List<Replica> ofNode(String nodeId) {
    return dsl.selectFrom(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .fetch(
            r ->
                new Replica(
                    r.getObjectId(),
                    r.getNodeId(),
                    r.getSizeBytes(),
                    r.getDigest(),
                    r.getFilePath(),
                    r.getFileOffset()));
  }

  /** Withdraws this node's replicas of the given objects (a failed or restarted download). */
  public void removeAll(String nodeId, List<String> objectIds) {
    dsl.deleteFrom(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .and(OBJECT_REPLICAS.OBJECT_ID.in(objectIds))
        .execute();
  }

  /**
   * Withdraws this node's replicas whose file lies under directory {@code dir} (a deleted model
   * directory); returns how many. A plain prefix test ({@code starts_with}), so {@code _} and
   * {@code %} in names are not LIKE wildcards.
   */
  public int removeUnder(String nodeId, String dir) {
    String prefix = dir.endsWith("/") ? dir : dir + "/";
    return dsl.deleteFrom(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .and(DSL.condition("starts_with({0}, {1})", OBJECT_REPLICAS.FILE_PATH, DSL.val(prefix)))
        .execute();
  }

  /** Withdraws a replica that is missing or corrupt on disk. */
  public void remove(String nodeId, String objectId) {
    dsl.deleteFrom(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.OBJECT_ID.eq(objectId))
        .and(OBJECT_REPLICAS.NODE_ID.eq(nodeId))
        .execute();
  }
}
