package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPTS;

import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.domain.TaskType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.ResultQuery;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The task queue's worker side: claim under a lease, renew, report progress, finish (one at a time
 * or in batches). Every write after the claim is guarded by {@code lease_owner} and {@code state =
 * 'processing'}, so a worker that lost its lease (expired and rescued, its node restarted, or
 * failed for being gone longer than the node grace) cannot overwrite the outcome. The master side
 * is here too: lease rescue and node grace.
 */
public final class TaskQueue {
  /** Retry delay after attempt n: 2^n seconds, at most 60. */
  /** The longest wait before a retry. */
  public static final int MAX_BACKOFF_SECONDS = 60;

  private static final Field<OffsetDateTime> BACKOFF =
      DSL.field(
          "now() + make_interval(secs => least(" + MAX_BACKOFF_SECONDS + ", power(2, {0})))",
          SQLDataType.TIMESTAMPWITHTIMEZONE,
          TASKS.ATTEMPTS);

  /**
   * How long a task whose attempt number {@code attempts} failed waits before it is claimable again
   * ({@link #fail}'s backoff): a worker that does not poll uses it to look again when it is due.
   */
  public static java.time.Duration retryBackoff(int attempts) {
    return java.time.Duration.ofSeconds(
        (long) Math.min(MAX_BACKOFF_SECONDS, Math.pow(2, Math.max(0, attempts))));
  }

  /** A success to record: the task, the lease it was claimed under, and what it produced. */
  public record Completion(
      long taskId, String leaseOwner, long bytesDone, String resultJson, List<Replica> publish) {
    public Completion {
      publish = List.copyOf(publish);
    }
  }

  private final DSLContext dsl;

  public TaskQueue(DSLContext dsl) {
    this.dsl = dsl;
  }

  private static Field<OffsetDateTime> nowPlus(Duration d) {
    return DSL.field(
        "now() + make_interval(secs => {0})",
        SQLDataType.TIMESTAMPWITHTIMEZONE, DSL.val(d.toMillis() / 1000.0));
  }

  /**
   * The claim, {@code mooncake_claim} (V019): up to a limit of the node's ready tasks, oldest due
   * first, taken with {@code SKIP LOCKED}, and with a lookup each claimed copy's sources ({@code
   * copy_sources}, as {@link ReplicaCatalog#sources}), the first one other than the seed named as
   * the copy's source in its row (what the worker then tries first; a seed pull is still taken on
   * its own, {@link #takeSeedPull}). Claim, lookup and the source's write were three statements per
   * copy (issue 19). The lookup reads the tasks as they were when the claim began, so it never sees
   * the copies this claim takes: none of them is this node's source or relay anyway. One row per
   * (claimed task, source), best source first; a task without a lookup (not a copy, a copy without
   * a release, or a claim without lookups) has one row of nulls after its own columns. A function
   * with a forced generic plan: planned once per server connection, and its plan reads the claim
   * index whatever the limit ({@code QueuePlanTest}).
   *
   * <p>Binds ({@link #claimBinds}): node, limit, lease owner and the lease's seconds, whether to
   * look sources up, then the lookup's liveness, freshness, avoidance count and window, sample size
   * and lapse.
   */
  private static final String CLAIM_CALL = "mooncake_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

  private static final String CLAIM_WITH_SOURCES =
      "SELECT * FROM " + CLAIM_CALL + " c ORDER BY c.task_id, c.s_ord";

  /**
   * Successes ({@code mooncake_succeed}, as {@link #succeedAll}) and a claim ({@link
   * #CLAIM_WITH_SOURCES}) in one statement: a finished copy's slot is refilled in the round trip
   * that records it, instead of a second statement right after (issue 19: the success and the claim
   * were each about one statement a copy). The successes touch processing rows, the claim takes
   * pending ones. The claim's rows as {@link #CLAIM_WITH_SOURCES}'s, then one row per recorded
   * success with its task id in the last column ({@code done_id}) and nulls before it. Both parts
   * are functions with forced generic plans; this statement's own plan is two function scans
   * (written inline, its claim was planned on every call: 5.3 ms a plan).
   *
   * <p>Binds: the function's eleven arrays, then {@link #CLAIM_WITH_SOURCES}'s.
   */
  private static final String SUCCEED_AND_CLAIM =
      "WITH done AS MATERIALIZED (SELECT task_id FROM mooncake_succeed(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)) "
          + "SELECT u.* FROM (SELECT c.*, NULL::bigint AS done_id FROM "
          + CLAIM_CALL
          + """
           c
           UNION ALL
          SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                 NULL, NULL, NULL, NULL, NULL, NULL, d.task_id
            FROM done d) u
           ORDER BY u.task_id NULLS LAST, u.s_ord
          """;

  /**
   * Claims up to {@code limit} of the node's ready tasks in one statement ({@link #CLAIM_CALL},
   * without lookups), oldest due first, returned in that order. Plain JDBC on the hot path:
   * rendering the statement with jOOQ on every claim cost more client CPU than the database spent
   * running it.
   */
  public List<ClaimedTask> claim(String nodeId, String leaseOwner, int limit, Duration lease) {
    return claim(nodeId, leaseOwner, limit, lease, null);
  }

  /**
   * {@link #claim}, with each copy's sources looked up and its first source other than the seed
   * named in its row, in the same statement ({@link #CLAIM_WITH_SOURCES}); {@code fresh} is the
   * lookup's relay freshness window.
   */
  public List<ClaimedTask> claimWithSources(
      String nodeId, String leaseOwner, int limit, Duration lease, Duration fresh) {
    return claim(nodeId, leaseOwner, limit, lease, java.util.Objects.requireNonNull(fresh));
  }

  /** The claim, with lookups when {@code fresh} (their relay freshness window) is given. */
  private List<ClaimedTask> claim(
      String nodeId, String leaseOwner, int limit, Duration lease, Duration fresh) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive, got " + limit);
    }
    return dsl.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(CLAIM_WITH_SOURCES)) {
            int i = 0;
            for (Object bind : claimBinds(nodeId, leaseOwner, limit, lease, fresh)) {
              ps.setObject(++i, bind);
            }
            try (ResultSet rs = ps.executeQuery()) {
              return readClaims(rs, null);
            }
          }
        });
  }

  /** What {@link #succeedAndClaim} did: the successes recorded, the tasks claimed. */
  public record SucceededAndClaimed(Set<Long> recorded, List<ClaimedTask> claimed) {}

  /**
   * {@link #succeedAll} and {@link #claimWithSources} in one statement ({@link
   * #SUCCEED_AND_CLAIM}): the worker refills the slots its finished tasks free in the round trip
   * that records them. With a limit of 0 it is {@link #succeedAll}.
   */
  public SucceededAndClaimed succeedAndClaim(
      List<Completion> completions,
      String nodeId,
      String leaseOwner,
      int limit,
      Duration lease,
      Duration fresh) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, got " + limit);
    }
    if (limit == 0 || completions.isEmpty()) {
      Set<Long> recorded = succeedAll(completions);
      return new SucceededAndClaimed(
          recorded,
          limit == 0 ? List.of() : claimWithSources(nodeId, leaseOwner, limit, lease, fresh));
    }
    List<Completion> sorted =
        completions.stream().sorted(Comparator.comparingLong(Completion::taskId)).toList();
    return dsl.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(SUCCEED_AND_CLAIM)) {
            int i = bindCompletions(c, ps, sorted);
            for (Object bind : claimBinds(nodeId, leaseOwner, limit, lease, fresh)) {
              ps.setObject(++i, bind);
            }
            Set<Long> recorded = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
              List<ClaimedTask> claimed = readClaims(rs, recorded);
              return new SucceededAndClaimed(recorded, claimed);
            }
          }
        });
  }

  /**
   * The tasks of a claim's rows ({@link #CLAIM_CALL}), in the claim's order, each with its sources;
   * rows with a {@code done_id} (column 24) are recorded successes, added to {@code done}.
   */
  private static List<ClaimedTask> readClaims(ResultSet rs, Set<Long> done) throws SQLException {
    record Due(OffsetDateTime runAfter, ClaimedTask task) {}
    java.util.Map<Long, ClaimedTask> tasks = new java.util.LinkedHashMap<>();
    java.util.Map<Long, OffsetDateTime> due = new java.util.HashMap<>();
    java.util.Map<Long, String> recorded = new java.util.HashMap<>();
    java.util.Map<Long, ReplicaCatalog.SourceRows> sources = new java.util.HashMap<>();
    while (rs.next()) {
      if (done != null) {
        long doneId = rs.getLong(24);
        if (!rs.wasNull()) {
          done.add(doneId);
          continue;
        }
      }
      long id = rs.getLong(1);
      if (!tasks.containsKey(id)) {
        tasks.put(id, claimedTask(rs));
        due.put(id, rs.getObject(9, OffsetDateTime.class));
        recorded.put(id, rs.getString(10));
      }
      // A lookup's rows carry its seed (column 11) even when they list no source.
      if (rs.getString(11) != null || rs.getObject(12) != null) {
        sources.computeIfAbsent(id, k -> new ReplicaCatalog.SourceRows()).add(rs, 11);
      }
    }
    List<Due> claimed = new ArrayList<>(tasks.size());
    for (ClaimedTask t : tasks.values()) {
      ReplicaCatalog.SourceRows rows = sources.get(t.taskId());
      claimed.add(
          new Due(
              due.get(t.taskId()),
              rows == null
                  ? t
                  : new ClaimedTask(
                      t.taskId(),
                      t.jobId(),
                      t.nodeId(),
                      t.type(),
                      t.objectId(),
                      t.payload(),
                      t.attempt(),
                      t.maxAttempts(),
                      rows.sources(),
                      recorded.get(t.taskId()))));
    }
    claimed.sort(Comparator.comparing(Due::runAfter).thenComparingLong(d -> d.task().taskId()));
    return claimed.stream().map(Due::task).toList();
  }

  /** A claimed task from the claim's first eight columns ({@link #CLAIM_CALL}). */
  private static ClaimedTask claimedTask(ResultSet rs) throws SQLException {
    return new ClaimedTask(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        TaskType.valueOf(rs.getString(4)),
        rs.getString(5),
        Json.read(rs.getString(6), TaskPayload.class),
        rs.getInt(7),
        rs.getInt(8));
  }

  /** {@link #CLAIM_CALL}'s binds; lookups when {@code fresh} is given. */
  private static List<Object> claimBinds(
      String nodeId, String leaseOwner, int limit, Duration lease, Duration fresh) {
    return List.of(
        nodeId,
        limit,
        leaseOwner,
        lease.toMillis() / 1000.0,
        fresh != null,
        NodeRegistry.LIVENESS.toMillis() / 1000.0,
        fresh == null ? 0.0 : fresh.toMillis() / 1000.0,
        ReplicaCatalog.AVOID_AFTER_FAILURES,
        (double) ReplicaCatalog.AVOID_FOR.toSeconds(),
        ReplicaCatalog.SAMPLE,
        (double) ReplicaCatalog.LAPSED.toSeconds());
  }

  /**
   * The claim as a query, not executed, with lookups when {@code fresh} is given: for checks of its
   * plan.
   */
  public ResultQuery<Record> claimStatement(
      String nodeId, String leaseOwner, int limit, Duration lease, Duration fresh) {
    return dsl.resultQuery(
        CLAIM_WITH_SOURCES, claimBinds(nodeId, leaseOwner, limit, lease, fresh).toArray());
  }

  /**
   * Extends the leases of exactly these tasks, held by this owner. A worker renews only what it is
   * still executing: a task whose outcome it could not record (database down at that moment) must
   * lapse and be rescued, not stay leased forever by the heartbeat.
   */
  public int renewLeases(String leaseOwner, java.util.Collection<Long> taskIds, Duration lease) {
    if (taskIds.isEmpty()) {
      return 0;
    }
    return renew(dsl, leaseOwner, taskIds, lease);
  }

  /** Extends the leases of {@code taskIds} still held by {@code leaseOwner}; how many were. */
  private static int renew(
      DSLContext ctx, String leaseOwner, java.util.Collection<Long> taskIds, Duration lease) {
    return ctx.update(TASKS)
        .set(TASKS.LEASE_EXPIRES_AT, nowPlus(lease))
        .where(TASKS.LEASE_OWNER.eq(leaseOwner))
        .and(TASKS.STATE.eq(TaskState.PROCESSING.wire()))
        .and(TASKS.TASK_ID.in(taskIds))
        .execute();
  }

  /**
   * Records progress (and the chosen source); false when the lease is gone. Constant SQL on plain
   * JDBC: every running transfer calls it four times a second.
   */
  public boolean progress(long taskId, String leaseOwner, long bytesDone, String sourceNodeId) {
    return dsl.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(PROGRESS)) {
            ps.setLong(1, bytesDone);
            ps.setString(2, sourceNodeId);
            ps.setLong(3, taskId);
            ps.setString(4, leaseOwner);
            return ps.executeUpdate() == 1;
          }
        });
  }

  /**
   * Records the progress of several running tasks in one statement (a node reports all of its
   * transfers at once); a task whose lease is gone is left alone. The source stays as recorded.
   */
  public void progressAll(long[] taskIds, String[] leaseOwners, long[] bytesDone) {
    dsl.connection(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(PROGRESS_ALL)) {
            ps.setArray(
                1, c.createArrayOf("bigint", java.util.Arrays.stream(taskIds).boxed().toArray()));
            ps.setArray(2, c.createArrayOf("text", leaseOwners));
            ps.setArray(
                3, c.createArrayOf("bigint", java.util.Arrays.stream(bytesDone).boxed().toArray()));
            ps.executeUpdate();
          }
        });
  }

  private static final String PROGRESS_ALL =
      """
      UPDATE tasks t SET bytes_done = v.bytes_done, updated_at = now()
        FROM unnest(?::bigint[], ?::text[], ?::bigint[]) AS v (task_id, lease_owner, bytes_done)
       WHERE t.task_id = v.task_id AND t.lease_owner = v.lease_owner AND t.state = 'processing'
      """;

  private static final String PROGRESS =
      """
      UPDATE tasks SET bytes_done = ?, source_node_id = ?, updated_at = now()
       WHERE task_id = ? AND lease_owner = ? AND state = 'processing'
      """;

  /**
   * Names {@code seed} as the source of running copy {@code taskId} of {@code objectId}, unless
   * another copy of that object for this job already pulls it from the seed (row written within
   * {@code fresh}): then false, and the caller takes the object from that copy as it arrives. Two
   * followers that want the same new object at the same moment (copies of an object are released to
   * every follower at once) thus never both pull it from the seed: the check and the write run
   * under a transaction-scoped advisory lock on the object, so the second one sees the first. A
   * copy that finds the lock held answers false at once, as if the holder had taken the pull (it
   * takes it unless another copy already has): waiting for the lock queued a thousand nodes' copies
   * of a new object on it, 159-294 ms a call at N = 1,000, each waiter holding one of the pooler's
   * server connections. Also false when the lease is gone.
   */
  public boolean takeSeedPull(
      long taskId, String leaseOwner, String jobId, String objectId, String seed, Duration fresh) {
    return dsl.transactionResult(
        cfg ->
            cfg.dsl()
                .connectionResult(
                    c -> {
                      try (PreparedStatement lock =
                          c.prepareStatement(
                              "SELECT pg_try_advisory_xact_lock(hashtextextended(?, 7))")) {
                        lock.setString(1, jobId + "\n" + objectId);
                        try (ResultSet rs = lock.executeQuery()) {
                          if (!rs.next() || !rs.getBoolean(1)) {
                            return false;
                          }
                        }
                      }
                      try (PreparedStatement ps = c.prepareStatement(TAKE_SEED_PULL)) {
                        ps.setString(1, seed);
                        ps.setLong(2, taskId);
                        ps.setString(3, leaseOwner);
                        ps.setString(4, objectId);
                        ps.setString(5, jobId);
                        ps.setString(6, seed);
                        ps.setLong(7, taskId);
                        ps.setDouble(8, fresh.toMillis() / 1000.0);
                        return ps.executeUpdate() == 1;
                      }
                    }));
  }

  private static final String TAKE_SEED_PULL =
      """
      UPDATE tasks SET source_node_id = ?, updated_at = now()
       WHERE task_id = ? AND lease_owner = ? AND state = 'processing'
         AND NOT EXISTS (
               SELECT 1 FROM tasks t
                WHERE t.state = 'processing' AND t.task_type = 'REPLICA_COPY' AND t.object_id = ? AND t.job_id = ?
                  AND t.source_node_id = ? AND t.task_id <> ?
                  AND t.updated_at > now() - make_interval(secs => ?))
      """;

  /**
   * Marks the task succeeded and publishes its replicas in the same transaction, so an object is
   * listed as held exactly when the task that wrote it is recorded as done. False (and nothing
   * written) when the lease is gone.
   */
  public boolean succeed(
      long taskId, String leaseOwner, long bytesDone, String resultJson, List<Replica> publish) {
    return !succeedAll(List.of(new Completion(taskId, leaseOwner, bytesDone, resultJson, publish)))
        .isEmpty();
  }

  /**
   * Records several successes at once and publishes the replicas of the tasks that were still held,
   * in one statement ({@link #succeedAndPublish}: the publishing insert joins the update's {@code
   * RETURNING}, so only a task recorded as succeeded publishes, and both commit together). A
   * completion whose lease is gone changes nothing and is left out of the answer. One autocommitted
   * statement instead of a transaction of two (issue 19: with its BEGIN and COMMIT that was four
   * round trips per group commit).
   *
   * @return the ids of the tasks now recorded as succeeded
   */
  public Set<Long> succeedAll(List<Completion> completions) {
    if (completions.isEmpty()) {
      return Set.of();
    }
    List<Completion> sorted =
        completions.stream().sorted(Comparator.comparingLong(Completion::taskId)).toList();
    return dsl.connectionResult(c -> succeedAndPublish(c, sorted));
  }

  /**
   * Successes, one statement for any number of them ({@code mooncake_succeed}, V018): the rows
   * still held under the given lease (guarded row by row by {@code lease_owner} and {@code state =
   * 'processing'}) become succeeded, and the replicas of the tasks it recorded are published in the
   * same statement. The task row is the record of its succeeding attempt (V007: attempt number,
   * lease owner, claimed and finished at; {@code task_attempt_log} lists it with the failed ones),
   * so a success writes one row, not two. Arrays, not a VALUES list, so every batch size is one
   * statement; a function with a forced generic plan, so it is planned once per server connection
   * (as a plain statement it was planned on every call).
   */
  private static Set<Long> succeedAndPublish(Connection c, List<Completion> sorted)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT task_id FROM mooncake_succeed(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
      bindCompletions(c, ps, sorted);
      Set<Long> recorded = new HashSet<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          recorded.add(rs.getLong(1));
        }
      }
      return recorded;
    }
  }

  /**
   * Binds {@code mooncake_succeed}'s eleven arrays (the completions, then the replicas they
   * publish) as parameters 1-11 of {@code ps}.
   *
   * @return the last parameter index bound (11)
   */
  private static int bindCompletions(Connection c, PreparedStatement ps, List<Completion> sorted)
      throws SQLException {
    int n = sorted.size();
    Long[] ids = new Long[n];
    String[] owners = new String[n];
    Long[] bytes = new Long[n];
    String[] results = new String[n];
    // One row per (object, node): ON CONFLICT DO UPDATE may not touch a row twice in a statement.
    java.util.Map<List<String>, Long> taskOf = new java.util.LinkedHashMap<>();
    java.util.Map<List<String>, Replica> replicaOf = new java.util.LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      Completion done = sorted.get(i);
      ids[i] = done.taskId();
      owners[i] = done.leaseOwner();
      bytes[i] = done.bytesDone();
      results[i] = done.resultJson();
      for (Replica r : done.publish()) {
        List<String> key = List.of(r.objectId(), r.nodeId());
        taskOf.put(key, done.taskId());
        replicaOf.put(key, r);
      }
    }
    int m = replicaOf.size();
    Long[] rTasks = new Long[m];
    String[] rObjects = new String[m];
    String[] rNodes = new String[m];
    Long[] rSizes = new Long[m];
    String[] rDigests = new String[m];
    String[] rPaths = new String[m];
    Long[] rOffsets = new Long[m];
    int j = 0;
    for (var e : replicaOf.entrySet()) {
      Replica r = e.getValue();
      rTasks[j] = taskOf.get(e.getKey());
      rObjects[j] = r.objectId();
      rNodes[j] = r.nodeId();
      rSizes[j] = r.sizeBytes();
      rDigests[j] = r.digest();
      rPaths[j] = r.filePath();
      rOffsets[j++] = r.fileOffset();
    }
    ps.setArray(1, c.createArrayOf("bigint", ids));
    ps.setArray(2, c.createArrayOf("text", owners));
    ps.setArray(3, c.createArrayOf("bigint", bytes));
    ps.setArray(4, c.createArrayOf("text", results));
    ps.setArray(5, c.createArrayOf("bigint", rTasks));
    ps.setArray(6, c.createArrayOf("text", rObjects));
    ps.setArray(7, c.createArrayOf("text", rNodes));
    ps.setArray(8, c.createArrayOf("bigint", rSizes));
    ps.setArray(9, c.createArrayOf("text", rDigests));
    ps.setArray(10, c.createArrayOf("text", rPaths));
    ps.setArray(11, c.createArrayOf("bigint", rOffsets));
    return 11;
  }

  /**
   * Publishes replicas while the task is still running (a seed's objects, one by one, as its
   * download or its verification makes them durable), only if the caller still holds the lease, and
   * renews that lease for {@code lease}: an attempt that keeps publishing is alive, whether or not
   * its node's heartbeats get through. A seed verifying 256 objects under load published for longer
   * than its lease while its heartbeats queued behind a thousand nodes' copies; the lease lapsed,
   * the verification failed (it has one attempt) and the seed had to download the whole model again
   * (bench/fleet.sh at N = 1,000, issue 19).
   *
   * @return false (and nothing published) when the lease is gone
   */
  public boolean publishWhileLeased(
      long taskId, String leaseOwner, Duration lease, List<Replica> publish) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          boolean held = renew(tx, leaseOwner, List.of(taskId), lease) == 1;
          if (held) {
            ReplicaCatalog.publish(tx, publish);
          }
          return held;
        });
  }

  /**
   * Records a failed attempt. A retryable failure with attempts left goes back to pending after an
   * exponential backoff, while its job is active and its placement acquiring ({@link
   * #PLACEMENT_ACTIVE}); otherwise the task is failed for good with {@code error}.
   *
   * @return the state the task is now in, or {@code null} when the lease was gone
   */
  public String fail(long taskId, String leaseOwner, String error, boolean retryable) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          tx.connection(c -> lockJobOf(c, taskId));
          // A retry only while the placement can still use it (PLACEMENT_ACTIVE); else failed for
          // good.
          Field<String> next =
              DSL.when(
                      DSL.condition(retryable)
                          .and(TASKS.ATTEMPTS.lt(TASKS.MAX_ATTEMPTS))
                          .and(DSL.condition(PLACEMENT_ACTIVE)),
                      DSL.val(TaskState.PENDING.wire()))
                  .otherwise(DSL.val(TaskState.FAILED.wire()));
          var row =
              tx.update(TASKS)
                  .set(TASKS.STATE, next)
                  .set(TASKS.LAST_ERROR, error)
                  .set(TASKS.RUN_AFTER, BACKOFF)
                  .set(TASKS.LEASE_OWNER, (String) null)
                  .set(TASKS.LEASE_EXPIRES_AT, (OffsetDateTime) null)
                  .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
                  .set(
                      TASKS.FINISHED_AT,
                      DSL.when(next.eq(TaskState.FAILED.wire()), DSL.currentOffsetDateTime()))
                  .where(TASKS.TASK_ID.eq(taskId))
                  .and(TASKS.LEASE_OWNER.eq(leaseOwner))
                  .and(TASKS.STATE.eq(TaskState.PROCESSING.wire()))
                  .returning(TASKS.STATE, TASKS.ATTEMPTS, TASKS.NODE_ID, TASKS.STARTED_AT)
                  .fetchOne();
          if (row == null) {
            return null;
          }
          String outcome = TaskState.PENDING.wire().equals(row.getState()) ? "retry" : "failed";
          recordAttempt(
              tx,
              taskId,
              row.getAttempts(),
              row.getNodeId(),
              leaseOwner,
              row.getStartedAt(),
              outcome,
              error);
          return row.getState();
        });
  }

  /**
   * Puts a claimed task back without counting it as an attempt: pending again, due after {@code
   * delay}, its lease, source and progress cleared, no attempt recorded. For a copy that chose to
   * wait for a better source (see the worker's SourcePlanner), which is not a failure. If its job
   * is no longer active or its placement no longer acquiring (the seed failed while the copy was
   * deciding), it is canceled instead ({@link #PLACEMENT_ACTIVE}, under {@link #lockJobOf}).
   *
   * @return false (and nothing changed) when the lease is gone
   */
  public boolean defer(long taskId, String leaseOwner, Duration delay) {
    return dsl.transactionResult(
        cfg ->
            cfg.dsl()
                .connectionResult(
                    c -> {
                      lockJobOf(c, taskId);
                      try (PreparedStatement ps = c.prepareStatement(DEFER)) {
                        ps.setDouble(1, delay.toMillis() / 1000.0);
                        ps.setLong(2, taskId);
                        ps.setString(3, leaseOwner);
                        return ps.executeUpdate() == 1;
                      }
                    }));
  }

  /**
   * Whether the task's job is still active and its placement still acquiring: only then may a task
   * go back to pending. The scheduler cancels only pending tasks, so a task handed back after the
   * pass that failed its job or placement would stay pending for nobody.
   */
  private static final String PLACEMENT_ACTIVE =
      """
      EXISTS (SELECT 1
                FROM jobs j
                JOIN placements p ON p.job_id = j.job_id
               WHERE j.job_id = tasks.job_id AND p.node_id = tasks.node_id
                 AND j.status IN ('planned', 'seeding', 'replicating') AND p.state IN ('planned', 'acquiring'))""";

  /**
   * Holds the task's job row {@code FOR KEY SHARE} until the caller's transaction ends. A scheduler
   * pass holds the row {@code FOR NO KEY UPDATE}, which does not wait for this; a pass that closes
   * work (ends the job or a placement, cancels pending tasks: {@code Evaluation.closesWork}) takes
   * it {@code FOR UPDATE} first, which does. Such a pass either ran before the caller's next
   * statement (which then sees its outcome) or runs after it (and finds what the caller left
   * pending). Under {@code FOR SHARE}, which every pass's lock excluded, deferrals queued behind
   * every pass: at 1,000 simulated nodes 30,662 of them waited 312 s in all, each holding one of
   * the pooler's server connections (issue 19).
   */
  private static void lockJobOf(Connection c, long taskId) throws SQLException {
    try (PreparedStatement lock =
        c.prepareStatement(
            "SELECT 1 FROM jobs WHERE job_id = (SELECT job_id FROM tasks WHERE task_id = ?) FOR KEY SHARE")) {
      lock.setLong(1, taskId);
      lock.executeQuery().close();
    }
  }

  private static final String DEFER =
      """
      UPDATE tasks
         SET state = CASE WHEN %1$s THEN 'pending' ELSE 'canceled' END,
             attempts = attempts - 1, run_after = now() + make_interval(secs => ?::float8),
             lease_owner = NULL, lease_expires_at = NULL, source_node_id = NULL, bytes_done = 0, updated_at = now(),
             finished_at = CASE WHEN %1$s THEN NULL ELSE now() END
       WHERE task_id = ? AND lease_owner = ? AND state = 'processing'
      """
          .formatted(PLACEMENT_ACTIVE);

  /** At most this many lapsed leases are rescued by one statement. */
  public static final int RESCUE_BATCH = 256;

  /**
   * Lease rescue: tasks whose owner stopped renewing go back to pending for the same node (a
   * restarted client picks them up) while attempts remain, else fail with the reason; each lapsed
   * attempt is recorded with the owner that lost it. One statement rescues at most {@link
   * #RESCUE_BATCH} tasks, oldest lease first, and commits before the next takes more: unbounded,
   * one statement held every lapsed row at once, 5,260 of them for 40-58 s at 1,000 simulated
   * nodes, while those nodes' outcomes and renewals of the same rows waited on it or skipped them
   * (issue 19).
   *
   * @return how many tasks were rescued or failed
   */
  public int rescueExpiredLeases() {
    int total = 0;
    int batch;
    do {
      batch = dsl.resultQuery(RESCUE, RESCUE_BATCH).fetchOne(0, Integer.class);
      total += batch;
    } while (batch == RESCUE_BATCH);
    return total;
  }

  private static final String RESCUE =
      """
      WITH expired AS (
        SELECT task_id, lease_owner
          FROM tasks
         WHERE state = 'processing' AND lease_owner IS NOT NULL AND lease_expires_at < now()
         ORDER BY lease_expires_at
         LIMIT ?
           FOR UPDATE SKIP LOCKED),
      rescued AS (
        UPDATE tasks t
           SET state = CASE WHEN t.attempts < t.max_attempts THEN 'pending' ELSE 'failed' END,
               last_error = 'lease expired: node ' || t.node_id || ' stopped renewing it during attempt ' || t.attempts,
               lease_owner = NULL, lease_expires_at = NULL, run_after = now(), updated_at = now(),
               finished_at = CASE WHEN t.attempts < t.max_attempts THEN NULL ELSE now() END
          FROM expired e
         WHERE t.task_id = e.task_id
        RETURNING t.task_id, t.attempts, t.node_id, t.started_at, t.last_error, e.lease_owner),
      attempts AS (
        INSERT INTO task_attempts (task_id, attempt, node_id, lease_owner, started_at, outcome, error)
        SELECT task_id, attempts, node_id, coalesce(lease_owner, node_id), coalesce(started_at, now()), 'lease_expired',
               last_error
          FROM rescued
        ON CONFLICT DO NOTHING)
      SELECT count(*) FROM rescued
      """;

  /**
   * Node grace: the open tasks (pending or processing) of every placement of an active job whose
   * node has not heartbeated for longer than {@code grace} (or, never registered, since the job was
   * created) fail with "node &lt;id&gt; gone for more than N s" (or "never came up: no heartbeat
   * within N s of the job's creation"), so the evaluator fails the placement instead of waiting for
   * the node forever. A running attempt is recorded as failed.
   *
   * <p>The silent placements are found first ({@code MATERIALIZED}: one row per placement), and
   * only their tasks are read, whatever the planner believes about the tasks table: with no node
   * silent (the usual tick) the tasks are not read at all. At 1,000 simulated nodes (256,000 open
   * copies) the one-join form took 537 ms a call on average, every loop tick of each master, the
   * most Postgres time of any statement in that job (issue 19; on an overloaded machine, so partly
   * waiting for a CPU); on a quiet database of that shape, 2.8 ms against 1.4 ms for this form.
   *
   * @return how many tasks were failed
   */
  public int failTasksOfGoneNodes(Duration grace) {
    long seconds = Math.max(0, grace.toSeconds());
    return dsl.resultQuery(
            """
        WITH silent AS MATERIALIZED (
          SELECT p.job_id, p.node_id, n.node_id IS NULL AS never
            FROM jobs j
            JOIN placements p ON p.job_id = j.job_id AND p.state IN ('planned', 'acquiring')
            LEFT JOIN nodes n ON n.node_id = p.node_id
           WHERE j.status IN ('planned', 'seeding', 'replicating')
             AND coalesce(n.heartbeat_at, j.created_at) < now() - make_interval(secs => ?)),
        gone AS (
          SELECT t.task_id, t.state AS was, s.never
            FROM silent s
            JOIN tasks t ON t.job_id = s.job_id AND t.node_id = s.node_id AND t.state IN ('pending', 'processing')
             FOR UPDATE OF t SKIP LOCKED),
        failed AS (
          UPDATE tasks t
             SET state = 'failed', last_error = CASE WHEN g.never
                   THEN 'node ' || t.node_id || ' never came up: no heartbeat within ' || ? || ' s of the job''s creation'
                   ELSE 'node ' || t.node_id || ' gone for more than ' || ? || ' s' END,
                 lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now()
            FROM gone g
           WHERE t.task_id = g.task_id
          RETURNING t.task_id, t.attempts, t.node_id, t.started_at, t.last_error, g.was),
        attempts AS (
          INSERT INTO task_attempts (task_id, attempt, node_id, lease_owner, started_at, outcome, error)
          SELECT task_id, attempts, node_id, node_id, coalesce(started_at, now()), 'failed', last_error
            FROM failed WHERE was = 'processing'
          ON CONFLICT DO NOTHING)
        SELECT count(*) FROM failed
        """,
            seconds,
            seconds,
            seconds)
        .fetchOne(0, Integer.class);
  }

  /**
   * A client that starts with a new instance id releases the tasks its previous incarnation held:
   * they go straight back to pending instead of waiting for the lease to expire.
   */
  public int releaseLeasesOfOtherInstances(String nodeId, String currentOwner) {
    return dsl.update(TASKS)
        .set(TASKS.STATE, TaskState.PENDING.wire())
        .set(TASKS.LEASE_OWNER, (String) null)
        .set(TASKS.LEASE_EXPIRES_AT, (OffsetDateTime) null)
        .set(TASKS.LAST_ERROR, "client restarted during the attempt")
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(TASKS.NODE_ID.eq(nodeId))
        .and(TASKS.STATE.eq(TaskState.PROCESSING.wire()))
        .and(TASKS.LEASE_OWNER.ne(currentOwner))
        .execute();
  }

  private static void recordAttempt(
      DSLContext tx,
      long taskId,
      int attempt,
      String nodeId,
      String owner,
      OffsetDateTime startedAt,
      String outcome,
      String error) {
    tx.insertInto(TASK_ATTEMPTS)
        .set(TASK_ATTEMPTS.TASK_ID, taskId)
        .set(TASK_ATTEMPTS.ATTEMPT, attempt)
        .set(TASK_ATTEMPTS.NODE_ID, nodeId)
        .set(TASK_ATTEMPTS.LEASE_OWNER, owner)
        .set(TASK_ATTEMPTS.STARTED_AT, startedAt == null ? OffsetDateTime.now() : startedAt)
        .set(TASK_ATTEMPTS.OUTCOME, outcome)
        .set(TASK_ATTEMPTS.ERROR, error)
        .onConflictDoNothing()
        .execute();
  }
}
