package io.mooncake.dist.scheduler.loop;

import static io.mooncake.dist.db.jooq.Tables.COPY_RELEASES;
import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.NODES;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;

import io.mooncake.dist.db.jooq.tables.records.JobsRecord;
import io.mooncake.dist.db.jooq.tables.records.PlacementsRecord;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ModelPaths;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.Payloads;
import io.mooncake.dist.scheduler.domain.PlacementState;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.domain.TaskType;
import io.mooncake.dist.scheduler.state.Action;
import io.mooncake.dist.scheduler.state.Evaluation;
import io.mooncake.dist.scheduler.state.JobEvaluator;
import io.mooncake.dist.scheduler.state.JobFacts;
import io.mooncake.dist.scheduler.state.JobTransitions;
import io.mooncake.dist.scheduler.state.NodeFacts;
import io.mooncake.dist.scheduler.state.PlacementView;
import io.mooncake.dist.scheduler.state.TaskCounts;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.ResultQuery;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One evaluation of one job: lock its row (skipping it if another master holds it), read the facts
 * with aggregate queries, run {@link JobEvaluator}, enqueue what it asks for and persist the job's
 * status and placements, all in one transaction.
 */
public final class ScheduleJob {
  private static final Logger log = LoggerFactory.getLogger(ScheduleJob.class);
  private static final int COPY_ATTEMPTS = 5;

  /**
   * How many released objects may wait for their first follower replica at once (the master's
   * {@code --release-window}): copies of the next object are created only when one of them is held
   * by a follower. 0 releases every published object at once.
   *
   * <p>Why (issue 19): every released object that no follower holds yet is, or is about to be, one
   * pull from the seed (one per object, {@code TaskQueue.takeSeedPull}), and the seed's uplink is
   * split among those pulls. Every other follower relays them as they arrive, no faster. With all
   * 256 objects released at once and 99 or 999 followers, 99-256 pulls ran at a 99th-256th of the
   * seed's uplink each, and a follower's 8 copies, all relays of such pulls, used 3-8% of its
   * downlink until the seed had sent the model once; the followers then still needed almost all of
   * it, so the job took about twice size/rate in every N = 100 run (bench/fleet.sh). With at most 8
   * objects in flight from the seed, each arrives at an eighth of its uplink or more, and a
   * follower's 8 copies can fill its downlink.
   */
  public static final int DEFAULT_RELEASE_WINDOW = 8;

  private static final int DOWNLOAD_ATTEMPTS = 3;
  private static final int MATERIALIZE_ATTEMPTS = 3;

  /**
   * Releases objects to the followers, in one statement: every object the seed has published since
   * its current download attempt started (older replicas point at bytes that attempt rewrites) and
   * not released yet is recorded in {@code copy_releases} with the seed's digest, and gets one
   * {@code REPLICA_COPY} per follower still acquiring, claimable at once and without a payload (the
   * claim builds it). With no download (seed reuse) every listed replica counts at once, even
   * before MODEL_VERIFY has re-hashed it: a follower checks every object against that same
   * published digest as it arrives, so it can never stage bytes the verification would have
   * rejected, and waiting would only serialize the two passes.
   *
   * <p>Striped claim order through {@code run_after}: follower k of F gets objects k, k+F, k+2F,
   * ... first, then the next stripe; the copy's rank r in that order (object n: stripe {@code (n -
   * k) mod F}, position {@code n / F}) becomes {@code run_after = created_at - (N + F - r) us}, so
   * a claim ({@code ORDER BY run_after, task_id}) takes released objects in stripe order whenever
   * they were released, every copy is due from the start, and retries (run_after in the future)
   * come after fresh copies as before. The rows are generated follower by follower, each follower's
   * in rank order (a LATERAL subquery per follower sorts only that follower's released objects, in
   * memory), which is the claim index's {@code (node_id, run_after, task_id)} order: every index
   * insert then lands where the previous one did instead of at one of F x F places across the
   * index, which cut a million-copy release from 5.9-7.0 s to 4.7-4.9 s here (a global ORDER BY of
   * the million rows spilled 140 MB to disk). The releases and the copies are both built from one
   * materialized set of fresh objects, and each object finds the seed's replica and its earlier
   * release by primary-key probe: the lookups are LATERAL/EXISTS subqueries fenced with {@code
   * OFFSET 0}, so the planner cannot turn them into joins whose shape follows the statistics. In a
   * database last analyzed while its jobs were small (bench/queue.sh, a CI server without
   * autovacuum) it expected a dozen objects and two replicas and joined them by nested loop over a
   * materialized scan: 10,000 x 10,000 comparisons, 8.6 s instead of 5. No {@code ON CONFLICT}:
   * only this statement writes {@code copy_releases}, under the job's row lock, so a duplicate
   * would be a bug, and its primary key then aborts the pass rather than let it create the object's
   * copies twice. The followers are woken once per statement. The copies' counts are added here,
   * one delta per follower ({@code task_count_deltas}, V017): the row trigger that counts other
   * inserts skips rows without a payload, as a transition table over a million-row insert would
   * cost more than the insert. A delta is an insert, so the release locks no follower's counter
   * (V016's upsert here held every follower's row until the pass committed, and every node's claim
   * queued behind it).
   *
   * <p>At most {@code window} released objects wait for their first follower replica at once
   * ({@link #DEFAULT_RELEASE_WINDOW}; 0: no limit): the fresh objects are taken in file order up to
   * what the window has left. A release stays waiting ({@code NOT follower_held}, V022) until a
   * pass finds a replica of it on a node other than the seed; each pass probes only the waiting
   * releases (a partial index), not the job's others.
   *
   * <p>Binds: stripe count F, copy max attempts, release window, job id, follower node ids, their
   * stripes.
   */
  private static final String RELEASE_COPIES =
      """
      WITH job AS (
        SELECT j.job_id, j.seed_node_id, j.created_at, ?::bigint AS stripes, ?::int AS attempts,
               ?::int AS release_window,
               (SELECT CASE WHEN count(*) = 0 THEN '-infinity'::timestamptz
                            ELSE coalesce(max(d.started_at) FILTER (WHERE d.state IN ('processing', 'succeeded')),
                                          'infinity'::timestamptz) END
                  FROM tasks d
                 WHERE d.job_id = j.job_id AND d.node_id = j.seed_node_id AND d.task_type = 'MODEL_DOWNLOAD') AS since
          FROM jobs j
         WHERE j.job_id = ?),
      objects AS (
        SELECT o.object_id, o.length_bytes, row_number() OVER (ORDER BY o.file_index, o.chunk_index) - 1 AS n,
               count(*) OVER () AS total
          FROM job_objects o, job
         WHERE o.job_id = job.job_id),
      held AS (
        UPDATE copy_releases w SET follower_held = true
          FROM job
         WHERE job.release_window > 0 AND w.job_id = job.job_id AND NOT w.follower_held
           AND EXISTS (SELECT 1 FROM object_replicas h
                        WHERE h.object_id = w.object_id AND h.node_id <> job.seed_node_id AND h.digest = w.digest
                       OFFSET 0)
        RETURNING w.object_id),
      fresh AS MATERIALIZED (
        SELECT o.object_id, o.length_bytes, o.n, o.total, r.digest
          FROM job
          JOIN objects o ON true
          CROSS JOIN LATERAL (
            SELECT r.digest
              FROM object_replicas r
             WHERE r.object_id = o.object_id AND r.node_id = job.seed_node_id
               AND r.size_bytes = o.length_bytes AND r.created_at >= job.since
            OFFSET 0) r
         WHERE NOT EXISTS (SELECT 1 FROM copy_releases c WHERE c.job_id = job.job_id AND c.object_id = o.object_id OFFSET 0)
         ORDER BY o.n
         LIMIT (SELECT CASE WHEN job.release_window = 0 THEN NULL
                            ELSE greatest(0, job.release_window + (SELECT count(*) FROM held)
                                             - (SELECT count(*) FROM copy_releases w
                                                 WHERE w.job_id = job.job_id AND NOT w.follower_held)) END
                  FROM job)),
      released AS (
        INSERT INTO copy_releases (job_id, object_id, digest)
        SELECT job.job_id, f.object_id, f.digest
          FROM job, fresh f
        RETURNING object_id),
      followers AS (
        SELECT f.node_id, f.stripe FROM unnest(?::text[], ?::int[]) AS f (node_id, stripe)),
      copies AS (
        INSERT INTO tasks (job_id, node_id, task_type, object_id, bytes_total, max_attempts, run_after)
        SELECT job.job_id, f.node_id, 'REPLICA_COPY', c.object_id, c.length_bytes, job.attempts,
               job.created_at - (c.total + job.stripes - c.rank) * interval '1 microsecond'
          FROM job
          CROSS JOIN followers f
          CROSS JOIN LATERAL (
            SELECT t.object_id, t.length_bytes, t.total,
                   ((t.n - f.stripe) % job.stripes + job.stripes) % job.stripes * ((t.total + job.stripes - 1) / job.stripes)
                   + t.n / job.stripes AS rank
              FROM fresh t
             ORDER BY rank) c),
      counted AS (
        INSERT INTO task_count_deltas (job_id, node_id, task_type, state, tasks)
        SELECT job.job_id, f.node_id, 'REPLICA_COPY', 'pending', (SELECT count(*) FROM fresh)
          FROM job, followers f
         WHERE EXISTS (SELECT 1 FROM fresh))
      SELECT (SELECT count(*) FROM released)::int,
             (SELECT count(pg_notify('mooncake_node', f.node_id)) FROM followers f WHERE EXISTS (SELECT 1 FROM fresh))::int
      """;

  /**
   * The job's deltas since the last pass moved into {@code task_counts}, and the sums read, in one
   * statement: the read sees {@code task_counts} as it was before the statement, plus the deltas it
   * moved. Only a pass writes {@code task_counts}, under the job's row lock, so counters are never
   * contended; a delta committed while this runs stays for the next pass. Binds: the job id thrice.
   */
  static final String FOLD_COUNTS =
      """
      WITH moved AS (
        DELETE FROM task_count_deltas WHERE job_id = ? RETURNING node_id, task_type, state, tasks),
      sums AS (
        SELECT node_id, task_type, state, sum(tasks)::bigint AS tasks FROM moved GROUP BY 1, 2, 3),
      folded AS (
        INSERT INTO task_counts AS c (job_id, node_id, task_type, state, tasks)
        SELECT ?, node_id, task_type, state, tasks FROM sums WHERE tasks <> 0 ORDER BY 2, 3, 4
        ON CONFLICT (job_id, node_id, task_type, state) DO UPDATE SET tasks = c.tasks + excluded.tasks)
      SELECT node_id, task_type, state, sum(tasks)::bigint
        FROM (SELECT node_id, task_type, state, tasks FROM task_counts WHERE job_id = ?
              UNION ALL
              SELECT node_id, task_type, state, tasks FROM sums) u
       GROUP BY 1, 2, 3
      HAVING sum(tasks) <> 0
      """;

  private ScheduleJob() {}

  /**
   * @return true when this master evaluated the job (false: locked elsewhere or already terminal)
   */
  public static boolean run(DSLContext dsl, String jobId) {
    return run(dsl, jobId, DEFAULT_RELEASE_WINDOW);
  }

  /**
   * {@link #run(DSLContext, String)} with a release window of {@code releaseWindow} objects ({@link
   * #DEFAULT_RELEASE_WINDOW}; 0: none).
   */
  public static boolean run(DSLContext dsl, String jobId, int releaseWindow) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          JobsRecord job =
              tx.selectFrom(JOBS)
                  .where(JOBS.JOB_ID.eq(jobId))
                  .and(JOBS.STATUS.in(JobStore.ACTIVE))
                  .forNoKeyUpdate()
                  .skipLocked()
                  .fetchOne();
          if (job == null) {
            return false;
          }
          List<PlacementsRecord> placements =
              tx.selectFrom(PLACEMENTS)
                  .where(PLACEMENTS.JOB_ID.eq(jobId))
                  .orderBy(PLACEMENTS.ORDINAL)
                  .fetch();
          Map<String, Map<TaskType, TaskCounts>> counts = taskCounts(tx, jobId);
          List<NodeFacts> nodes = new ArrayList<>();
          for (PlacementsRecord p : placements) {
            nodes.add(
                new NodeFacts(
                    p.getNodeId(), p.getIsSeed(), counts.getOrDefault(p.getNodeId(), Map.of())));
          }
          String seed = job.getSeedNodeId();
          boolean seedHasTasks = counts.containsKey(seed);
          boolean seedHolds = !seedHasTasks && ReplicaCatalog.holdsAllObjects(tx, jobId, seed);
          int objectCount = tx.fetchCount(JOB_OBJECTS, JOB_OBJECTS.JOB_ID.eq(jobId));
          int released = tx.fetchCount(COPY_RELEASES, COPY_RELEASES.JOB_ID.eq(jobId));
          JobStatus current = JobStatus.fromWire(job.getStatus());
          Evaluation e =
              JobEvaluator.evaluate(
                  new JobFacts(
                      current,
                      seed,
                      objectCount,
                      seedHolds,
                      nodes,
                      released,
                      JobStore.nodeList(job.getFallbackSeeds()),
                      JobStore.nodeList(job.getReplacedSeeds())));

          if (e.closesWork(
              placements.stream().map(p -> PlacementState.fromWire(p.getState())).toList())) {
            // Wait for the hand-backs in flight (they hold the row FOR KEY SHARE) and keep new
            // ones out until this commits: they then see what this pass closed.
            tx.execute("SELECT 1 FROM jobs WHERE job_id = ? FOR UPDATE", jobId);
          }
          Manifest manifest = e.actions().isEmpty() ? null : JobStore.manifest(tx, job);
          for (Action a : e.actions()) {
            apply(tx, job, manifest, a, releaseWindow);
          }
          persist(tx, job, placements, e);
          return true;
        });
  }

  /**
   * The job's tasks counted per node, type and state, with the first failure's error of each failed
   * group. The counts are kept by {@code task_counts} (V016), one row per (node, type, state), and
   * the deltas appended since the last pass ({@code task_count_deltas}, V017: the triggers on
   * {@code tasks} and the release statement), which {@link #FOLD_COUNTS} folds in: O(N + changes) a
   * pass. Counting the task rows themselves read every row of the job (N x K) on every pass: 0.32 s
   * at 1,000 followers x 256 objects (issue 19), while the pass holds the job row that deferrals
   * and failures wait for. The failed rows alone are read for their errors, through their partial
   * index (V015).
   */
  private static Map<String, Map<TaskType, TaskCounts>> taskCounts(DSLContext tx, String jobId) {
    Map<String, Map<TaskType, TaskCounts>> out = new HashMap<>();
    // Counts first, errors second. Each statement reads its own snapshot (read committed), and a
    // task's failure commits its state and its error together: read after the counts, the errors
    // hold every failure the counts include. Read before, a failure committing between the two
    // was counted without its error, and the job could end "failed" with its placement's
    // last_error null (seen in DiskCapacityTest once evaluations followed completions closely).
    var rows = tx.resultQuery(FOLD_COUNTS, jobId, jobId, jobId).fetch();
    // The first failure's error is the cause; later ones are often its consequences.
    Map<List<String>, String> firstErrors = new HashMap<>();
    tx.resultQuery(
            """
            SELECT DISTINCT ON (node_id, task_type) node_id, task_type, last_error
              FROM tasks
             WHERE job_id = ? AND state = 'failed'
             ORDER BY node_id, task_type, finished_at NULLS LAST, task_id
            """,
            jobId)
        .fetch()
        .forEach(
            r ->
                firstErrors.put(
                    List.of(r.get(0, String.class), r.get(1, String.class)),
                    r.get(2, String.class)));
    rows.forEach(
        r -> {
          String node = r.get(0, String.class);
          String type = r.get(1, String.class);
          int n = Math.toIntExact(r.get(3, Long.class));
          TaskCounts c =
              switch (TaskState.fromWire(r.get(2, String.class))) {
                case PENDING -> new TaskCounts(n, 0, 0, 0, 0, null);
                case PROCESSING -> new TaskCounts(0, n, 0, 0, 0, null);
                case SUCCEEDED -> new TaskCounts(0, 0, n, 0, 0, null);
                case FAILED -> new TaskCounts(0, 0, 0, n, 0, firstErrors.get(List.of(node, type)));
                case CANCELED -> new TaskCounts(0, 0, 0, 0, n, null);
              };
          out.computeIfAbsent(node, k -> new EnumMap<>(TaskType.class))
              .merge(TaskType.valueOf(type), c, TaskCounts::plus);
        });
    return out;
  }

  private static void apply(
      DSLContext tx, JobsRecord job, Manifest manifest, Action action, int releaseWindow) {
    String jobId = job.getJobId();
    switch (action) {
      case Action.EnqueueDownload a ->
          enqueueOne(
              tx,
              jobId,
              a.nodeId(),
              TaskType.MODEL_DOWNLOAD,
              Payloads.download(manifest, sourceRules(job)),
              DOWNLOAD_ATTEMPTS);
      case Action.EnqueueVerify a ->
          enqueueOne(
              tx,
              jobId,
              a.nodeId(),
              TaskType.MODEL_VERIFY,
              Payloads.withDigests(manifest, ReplicaCatalog.digests(tx, jobId, a.nodeId())),
              1);
      case Action.EnqueueMaterialize a ->
          enqueueOne(
              tx,
              jobId,
              a.nodeId(),
              TaskType.MATERIALIZE,
              Payloads.withDigests(
                  manifest, ReplicaCatalog.digests(tx, jobId, job.getSeedNodeId())),
              MATERIALIZE_ATTEMPTS);
      case Action.ReleaseCopies a -> releaseCopies(tx, jobId, a, releaseWindow);
      case Action.CancelPendingTasks a -> cancelPending(tx, jobId, a.nodeId());
      case Action.FailOver a -> failOver(tx, job, manifest, a);
    }
  }

  /** The rules the job was admitted under; a job from before they were stored allowed any. */
  private static io.mooncake.dist.scheduler.domain.SourceRules sourceRules(JobsRecord job) {
    String rules = job.getSourceRules();
    return rules == null
        ? io.mooncake.dist.scheduler.domain.SourceRules.ANY
        : Json.read(rules, io.mooncake.dist.scheduler.domain.SourceRules.class);
  }

  /**
   * The release statement for {@code followers} (stripes 0..F-1), not executed: for EXPLAIN checks
   * of its plan (ReleasePlanTest).
   */
  public static ResultQuery<Record> releaseStatement(
      DSLContext dsl, String jobId, List<String> followers, int releaseWindow) {
    Integer[] stripes = new Integer[followers.size()];
    for (int i = 0; i < stripes.length; i++) {
      stripes[i] = i;
    }
    return dsl.resultQuery(
        RELEASE_COPIES,
        (long) Math.max(1, followers.size()),
        COPY_ATTEMPTS,
        releaseWindow,
        jobId,
        followers.toArray(String[]::new),
        stripes);
  }

  private static void releaseCopies(
      DSLContext tx, String jobId, Action.ReleaseCopies a, int releaseWindow) {
    String[] nodes = a.followers().stream().map(Action.Follower::nodeId).toArray(String[]::new);
    Integer[] stripes = a.followers().stream().map(Action.Follower::stripe).toArray(Integer[]::new);
    int stripeCount = Math.max(1, a.stripes());
    int released =
        tx.connectionResult(
            c -> {
              try (PreparedStatement ps = c.prepareStatement(RELEASE_COPIES)) {
                ps.setLong(1, stripeCount);
                ps.setInt(2, COPY_ATTEMPTS);
                ps.setInt(3, releaseWindow);
                ps.setString(4, jobId);
                ps.setArray(5, c.createArrayOf("text", nodes));
                ps.setArray(6, c.createArrayOf("integer", stripes));
                try (ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  return rs.getInt(1);
                }
              }
            });
    if (released > 0) {
      log.info(
          "job {}: released {} objects, {} copy tasks for {} followers",
          jobId,
          released,
          (long) released * nodes.length,
          nodes.length);
    }
  }

  private static void enqueueOne(
      DSLContext tx,
      String jobId,
      String nodeId,
      TaskType type,
      TaskPayload payload,
      int attempts) {
    int n =
        tx.insertInto(TASKS)
            .set(TASKS.JOB_ID, jobId)
            .set(TASKS.NODE_ID, nodeId)
            .set(TASKS.TASK_TYPE, type.name())
            .set(TASKS.PAYLOAD, JSONB.valueOf(Json.write(payload)))
            .set(TASKS.BYTES_TOTAL, payload.bytesToFetch())
            .set(TASKS.MAX_ATTEMPTS, attempts)
            .onConflictDoNothing()
            .execute();
    if (n > 0) {
      log.info("job {}: enqueued {} for {}", jobId, type, nodeId);
    }
  }

  /**
   * Seed failover, in the pass's transaction (the job row is locked): {@code a.to()} becomes the
   * seed and {@code a.from()} is recorded as replaced.
   *
   * <ol>
   *   <li>Objects released to the followers that no node but a replaced seed holds with the
   *       released digest are withdrawn: their {@code copy_releases} rows are deleted and their
   *       open copies canceled (a copy waiting on a dead seed would fail for want of a source). The
   *       new seed publishes them from the source, and the release statement releases them again,
   *       with its digest, as for any seed.
   *   <li>The objects a live node other than a replaced seed holds with the released digest are the
   *       ones the new seed does not read from the source: its download carries them as {@code
   *       held}, and its copies of them (it was a follower, so it has one per released object)
   *       stay. Its open copies of every other object are canceled: it downloads those.
   * </ol>
   *
   * Binds of both statements: job id, then the node ids that no longer count as holders.
   */
  private static void failOver(
      DSLContext tx, JobsRecord job, Manifest manifest, Action.FailOver a) {
    String jobId = job.getJobId();
    List<String> replaced = new ArrayList<>(JobStore.nodeList(job.getReplacedSeeds()));
    replaced.add(a.from());
    String[] notHolders = replaced.toArray(String[]::new);
    tx.update(JOBS)
        .set(JOBS.SEED_NODE_ID, a.to())
        .set(JOBS.REPLACED_SEEDS, Json.write(replaced))
        .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(JOBS.JOB_ID.eq(jobId))
        .execute();
    tx.update(PLACEMENTS)
        .set(PLACEMENTS.IS_SEED, PLACEMENTS.NODE_ID.eq(a.to()))
        .where(PLACEMENTS.JOB_ID.eq(jobId))
        .execute();
    cancelPending(tx, jobId, a.from());
    int withdrawn =
        tx.connectionResult(
            c -> {
              try (PreparedStatement ps = c.prepareStatement(WITHDRAW_ORPHANED_RELEASES)) {
                ps.setString(1, jobId);
                ps.setArray(2, c.createArrayOf("text", notHolders));
                try (ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  return rs.getInt(1);
                }
              }
            });
    List<String> held =
        tx.connectionResult(
            c -> {
              try (PreparedStatement ps = c.prepareStatement(HELD_BY_LIVE_NODES)) {
                ps.setString(1, jobId);
                ps.setArray(2, c.createArrayOf("text", notHolders));
                ps.setLong(3, io.mooncake.dist.scheduler.store.NodeRegistry.LIVENESS.toMillis());
                List<String> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                  while (rs.next()) {
                    out.add(rs.getString(1));
                  }
                }
                return out;
              }
            });
    tx.update(TASKS)
        .set(TASKS.STATE, TaskState.CANCELED.wire())
        .set(TASKS.BYTES_DONE, 0L)
        .set(TASKS.FINISHED_AT, DSL.currentOffsetDateTime())
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(TASKS.JOB_ID.eq(jobId))
        .and(TASKS.NODE_ID.eq(a.to()))
        .and(TASKS.TASK_TYPE.eq(TaskType.REPLICA_COPY.name()))
        .and(TASKS.STATE.in(TaskState.PENDING.wire(), TaskState.PROCESSING.wire()))
        // One array bind, not one per object: a large job holds more objects than a statement
        // can have parameters (65,535).
        .and(TASKS.OBJECT_ID.ne(DSL.all(held.toArray(String[]::new))))
        .execute();
    TaskPayload download = Payloads.download(manifest, sourceRules(job)).holding(held);
    enqueueOne(tx, jobId, a.to(), TaskType.MODEL_DOWNLOAD, download, DOWNLOAD_ATTEMPTS);
    log.warn(
        "job {}: seed {} failed; {} is the seed now (fallback seed): it downloads {} of {} bytes,"
            + " {} object(s) are held by live nodes, {} released object(s) withdrawn until it has"
            + " them",
        jobId,
        a.from(),
        a.to(),
        download.bytesToFetch(),
        download.totalBytes(),
        held.size(),
        withdrawn);
  }

  /** Step 1 of {@link #failOver}; answers how many releases were withdrawn. */
  private static final String WITHDRAW_ORPHANED_RELEASES =
      """
      WITH job AS (SELECT ?::varchar AS job_id, ?::text[] AS not_holders),
      orphans AS (
        SELECT c.object_id
          FROM copy_releases c, job
         WHERE c.job_id = job.job_id
           AND NOT EXISTS (
             SELECT 1 FROM object_replicas r
              WHERE r.object_id = c.object_id AND r.digest = c.digest
                AND r.node_id <> ALL (job.not_holders))),
      gone AS (
        DELETE FROM copy_releases c
         USING orphans o, job
         WHERE c.job_id = job.job_id AND c.object_id = o.object_id
        RETURNING c.object_id),
      canceled AS (
        UPDATE tasks t
           SET state = 'canceled', bytes_done = 0, finished_at = now(), updated_at = now()
          FROM gone g, job
         WHERE t.job_id = job.job_id AND t.task_type = 'REPLICA_COPY' AND t.object_id = g.object_id
           AND t.state IN ('pending', 'processing')
        RETURNING t.task_id)
      SELECT (SELECT count(*) FROM gone)::int, (SELECT count(*) FROM canceled)::int
      """;

  /** Step 2 of {@link #failOver}: released objects a live node holds with the released digest. */
  private static final String HELD_BY_LIVE_NODES =
      """
      SELECT c.object_id
        FROM copy_releases c
       WHERE c.job_id = ?
         AND EXISTS (
           SELECT 1 FROM object_replicas r JOIN nodes n ON n.node_id = r.node_id
            WHERE r.object_id = c.object_id AND r.digest = c.digest
              AND r.node_id <> ALL (?::text[])
              AND n.heartbeat_at > now() - ?::bigint * interval '1 millisecond')
      """;

  private static void cancelPending(DSLContext tx, String jobId, String nodeId) {
    var q =
        tx.update(TASKS)
            .set(TASKS.STATE, TaskState.CANCELED.wire())
            .set(TASKS.FINISHED_AT, DSL.currentOffsetDateTime())
            .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
            .where(TASKS.JOB_ID.eq(jobId))
            .and(TASKS.STATE.eq(TaskState.PENDING.wire()));
    (nodeId == null ? q : q.and(TASKS.NODE_ID.eq(nodeId))).execute();
  }

  private static void persist(
      DSLContext tx, JobsRecord job, List<PlacementsRecord> placements, Evaluation e) {
    ModelRef model = JobStore.modelRef(job);
    for (int i = 0; i < placements.size(); i++) {
      PlacementsRecord p = placements.get(i);
      PlacementView v = e.placements().get(i);
      boolean staged = v.state() == PlacementState.STAGED;
      if (!v.state().wire().equals(p.getState())
          || !java.util.Objects.equals(v.lastError(), p.getLastError())) {
        PlacementState next =
            JobTransitions.require(PlacementState.fromWire(p.getState()), v.state());
        tx.update(PLACEMENTS)
            .set(PLACEMENTS.STATE, next.wire())
            .set(PLACEMENTS.LAST_ERROR, v.lastError())
            .set(PLACEMENTS.CHECKSUM_VERIFIED, staged)
            .set(PLACEMENTS.LOCAL_PATH, staged ? localPath(tx, p.getNodeId(), model) : null)
            .set(PLACEMENTS.UPDATED_AT, DSL.currentOffsetDateTime())
            .where(PLACEMENTS.JOB_ID.eq(p.getJobId()))
            .and(PLACEMENTS.NODE_ID.eq(p.getNodeId()))
            .execute();
      }
    }
    if (!e.status().wire().equals(job.getStatus())
        || !java.util.Objects.equals(e.lastError(), job.getLastError())) {
      JobStatus next = JobTransitions.require(JobStatus.fromWire(job.getStatus()), e.status());
      tx.update(JOBS)
          .set(JOBS.STATUS, next.wire())
          .set(JOBS.LAST_ERROR, e.lastError())
          .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
          .set(JOBS.FINISHED_AT, e.status().terminal() ? DSL.currentOffsetDateTime() : null)
          .where(JOBS.JOB_ID.eq(job.getJobId()))
          .execute();
      log.info(
          "job {}: {} -> {}{}",
          job.getJobId(),
          job.getStatus(),
          e.status().wire(),
          e.lastError() == null ? "" : " (" + e.lastError() + ")");
      if (e.status().terminal()) {
        cancelPending(tx, job.getJobId(), null);
      }
    }
  }

  /** The placement's model directory on that node, from the data directory it registered. */
  private static String localPath(DSLContext tx, String nodeId, ModelRef model) {
    String dataDir =
        tx.select(NODES.DATA_DIR)
            .from(NODES)
            .where(NODES.NODE_ID.eq(nodeId))
            .fetchOne(NODES.DATA_DIR);
    return dataDir == null ? null : ModelPaths.modelDir(Path.of(dataDir), model).toString();
  }
}
