package io.mooncake.dist.scheduler.loop;

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
import io.mooncake.dist.scheduler.domain.TaskType;
import io.mooncake.dist.scheduler.state.Action;
import io.mooncake.dist.scheduler.state.Evaluation;
import io.mooncake.dist.scheduler.state.JobEvaluator;
import io.mooncake.dist.scheduler.state.JobFacts;
import io.mooncake.dist.scheduler.state.NodeFacts;
import io.mooncake.dist.scheduler.state.PlacementView;
import io.mooncake.dist.scheduler.state.TaskCounts;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One evaluation of one job: lock its row (skipping it if another master holds it), read the
 * facts with aggregate queries, run {@link JobEvaluator}, enqueue what it asks for and persist
 * the job's status and placements, all in one transaction.
 */
public final class ScheduleJob {
  private static final Logger log = LoggerFactory.getLogger(ScheduleJob.class);
  private static final int COPY_ATTEMPTS = 5;
  private static final int DOWNLOAD_ATTEMPTS = 3;
  private static final int MATERIALIZE_ATTEMPTS = 3;

  /**
   * Builds the copy tasks of one follower in one statement, payload JSON included, for every
   * object the seed has published so far (all of them once its download finished). Run on every
   * pass while the seed is still downloading, so followers start on each object as soon as it is
   * durable on the seed (pipelining). While the seed verifies reused replicas, only objects it
   * re-published after its MODEL_VERIFY started count (verified, not merely listed). The digest is always the seed's: an older replica of the
   * same object id elsewhere never decides what a follower stages.
   */
  private static final String ENQUEUE_COPIES = """
      INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total, max_attempts)
      SELECT jo.job_id, ?, 'REPLICA_COPY', jo.object_id,
             jsonb_build_object('model', ?::jsonb, 'files', jsonb_build_array(jsonb_build_object(
               'file_index', jf.file_index, 'path', jf.path, 'size_bytes', jf.size_bytes, 'sha256', jf.sha256,
               'download_url', NULL, 'objects', jsonb_build_array(jsonb_build_object(
                 'object_id', jo.object_id, 'chunk_index', jo.chunk_index, 'offset', jo.offset_bytes,
                 'length', jo.length_bytes, 'digest', r.digest))))),
             jo.length_bytes, ?
        FROM job_objects jo
        JOIN job_files jf ON jf.job_id = jo.job_id AND jf.file_index = jo.file_index
        JOIN object_replicas r ON r.object_id = jo.object_id AND r.node_id = ? AND r.size_bytes = jo.length_bytes
       WHERE jo.job_id = ?
         AND (NOT ? OR r.created_at >= (SELECT v.started_at FROM tasks v
                                         WHERE v.job_id = jo.job_id AND v.node_id = r.node_id
                                           AND v.task_type = 'MODEL_VERIFY' AND v.state IN ('processing', 'succeeded')))
         AND NOT EXISTS (SELECT 1 FROM tasks t
                          WHERE t.job_id = jo.job_id AND t.node_id = ? AND t.task_type = 'REPLICA_COPY'
                            AND t.object_id = jo.object_id)
       ORDER BY jo.file_index, jo.chunk_index
      ON CONFLICT DO NOTHING
      """;

  private ScheduleJob() {}

  /** @return true when this master evaluated the job (false: locked elsewhere or already terminal) */
  public static boolean run(DSLContext dsl, String jobId) {
    return dsl.transactionResult(cfg -> {
      DSLContext tx = cfg.dsl();
      JobsRecord job = tx.selectFrom(JOBS)
          .where(JOBS.JOB_ID.eq(jobId))
          .and(JOBS.STATUS.in("planned", "seeding", "replicating"))
          .forUpdate()
          .skipLocked()
          .fetchOne();
      if (job == null) {
        return false;
      }
      List<PlacementsRecord> placements = tx.selectFrom(PLACEMENTS)
          .where(PLACEMENTS.JOB_ID.eq(jobId))
          .orderBy(PLACEMENTS.ORDINAL)
          .fetch();
      Map<String, Map<TaskType, TaskCounts>> counts = taskCounts(tx, jobId);
      List<NodeFacts> nodes = new ArrayList<>();
      for (PlacementsRecord p : placements) {
        nodes.add(new NodeFacts(p.getNodeId(), p.getIsSeed(), counts.getOrDefault(p.getNodeId(), Map.of())));
      }
      String seed = job.getSeedNodeId();
      boolean seedHasTasks = counts.containsKey(seed);
      boolean seedHolds = !seedHasTasks && ReplicaCatalog.holdsAllObjects(tx, jobId, seed);
      int objectCount = tx.fetchCount(JOB_OBJECTS, JOB_OBJECTS.JOB_ID.eq(jobId));
      JobStatus current = JobStatus.fromWire(job.getStatus());
      Evaluation e = JobEvaluator.evaluate(new JobFacts(current, seed, objectCount, seedHolds, nodes));

      Manifest manifest = e.actions().isEmpty() ? null : JobStore.manifest(tx, job);
      for (Action a : e.actions()) {
        apply(tx, job, manifest, a);
      }
      persist(tx, job, placements, e);
      return true;
    });
  }

  private static Map<String, Map<TaskType, TaskCounts>> taskCounts(DSLContext tx, String jobId) {
    Map<String, Map<TaskType, TaskCounts>> out = new HashMap<>();
    tx.select(TASKS.NODE_ID, TASKS.TASK_TYPE, TASKS.STATE, DSL.count(), DSL.max(TASKS.LAST_ERROR))
        .from(TASKS)
        .where(TASKS.JOB_ID.eq(jobId))
        .groupBy(TASKS.NODE_ID, TASKS.TASK_TYPE, TASKS.STATE)
        .fetch()
        .forEach(r -> {
          int n = r.value4();
          TaskCounts c = switch (r.value3()) {
            case "pending" -> new TaskCounts(n, 0, 0, 0, 0, null);
            case "processing" -> new TaskCounts(0, n, 0, 0, 0, null);
            case "succeeded" -> new TaskCounts(0, 0, n, 0, 0, null);
            case "failed" -> new TaskCounts(0, 0, 0, n, 0, r.value5());
            default -> new TaskCounts(0, 0, 0, 0, n, null);
          };
          out.computeIfAbsent(r.value1(), k -> new EnumMap<>(TaskType.class))
              .merge(TaskType.valueOf(r.value2()), c, TaskCounts::plus);
        });
    return out;
  }

  private static void apply(DSLContext tx, JobsRecord job, Manifest manifest, Action action) {
    String jobId = job.getJobId();
    switch (action) {
      case Action.EnqueueDownload a -> enqueueOne(tx, jobId, a.nodeId(), TaskType.MODEL_DOWNLOAD,
          Payloads.download(manifest), DOWNLOAD_ATTEMPTS);
      case Action.EnqueueVerify a -> enqueueOne(tx, jobId, a.nodeId(), TaskType.MODEL_VERIFY,
          Payloads.withDigests(manifest, ReplicaCatalog.digests(tx, jobId, a.nodeId())), 1);
      case Action.EnqueueMaterialize a -> enqueueOne(tx, jobId, a.nodeId(), TaskType.MATERIALIZE,
          Payloads.withDigests(manifest, ReplicaCatalog.digests(tx, jobId, job.getSeedNodeId())), MATERIALIZE_ATTEMPTS);
      case Action.EnqueueCopies a -> {
        int n = tx.execute(ENQUEUE_COPIES, a.nodeId(), Json.write(manifest.model()), COPY_ATTEMPTS,
            job.getSeedNodeId(), jobId, a.verifiedOnly(), a.nodeId());
        if (n > 0) {
          log.info("job {}: enqueued {} copy tasks for {}", jobId, n, a.nodeId());
        }
      }
      case Action.CancelPendingTasks a -> cancelPending(tx, jobId, a.nodeId());
    }
  }

  private static void enqueueOne(DSLContext tx, String jobId, String nodeId, TaskType type, TaskPayload payload, int attempts) {
    int n = tx.insertInto(TASKS)
        .set(TASKS.JOB_ID, jobId)
        .set(TASKS.NODE_ID, nodeId)
        .set(TASKS.TASK_TYPE, type.name())
        .set(TASKS.PAYLOAD, JSONB.valueOf(Json.write(payload)))
        .set(TASKS.BYTES_TOTAL, payload.totalBytes())
        .set(TASKS.MAX_ATTEMPTS, attempts)
        .onConflictDoNothing()
        .execute();
    if (n > 0) {
      log.info("job {}: enqueued {} for {}", jobId, type, nodeId);
    }
  }

  private static void cancelPending(DSLContext tx, String jobId, String nodeId) {
    var q = tx.update(TASKS)
        .set(TASKS.STATE, "canceled")
        .set(TASKS.FINISHED_AT, DSL.currentOffsetDateTime())
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(TASKS.JOB_ID.eq(jobId))
        .and(TASKS.STATE.eq("pending"));
    (nodeId == null ? q : q.and(TASKS.NODE_ID.eq(nodeId))).execute();
  }

  private static void persist(DSLContext tx, JobsRecord job, List<PlacementsRecord> placements, Evaluation e) {
    ModelRef model = JobStore.modelRef(job);
    for (int i = 0; i < placements.size(); i++) {
      PlacementsRecord p = placements.get(i);
      PlacementView v = e.placements().get(i);
      boolean staged = v.state() == PlacementState.STAGED;
      if (!v.state().wire().equals(p.getState()) || !java.util.Objects.equals(v.lastError(), p.getLastError())) {
        tx.update(PLACEMENTS)
            .set(PLACEMENTS.STATE, v.state().wire())
            .set(PLACEMENTS.LAST_ERROR, v.lastError())
            .set(PLACEMENTS.CHECKSUM_VERIFIED, staged)
            .set(PLACEMENTS.LOCAL_PATH, staged ? localPath(tx, p.getNodeId(), model) : null)
            .set(PLACEMENTS.UPDATED_AT, DSL.currentOffsetDateTime())
            .where(PLACEMENTS.JOB_ID.eq(p.getJobId()))
            .and(PLACEMENTS.NODE_ID.eq(p.getNodeId()))
            .execute();
      }
    }
    if (!e.status().wire().equals(job.getStatus()) || !java.util.Objects.equals(e.lastError(), job.getLastError())) {
      tx.update(JOBS)
          .set(JOBS.STATUS, e.status().wire())
          .set(JOBS.LAST_ERROR, e.lastError())
          .set(JOBS.UPDATED_AT, DSL.currentOffsetDateTime())
          .set(JOBS.FINISHED_AT, e.status().terminal() ? DSL.currentOffsetDateTime() : null)
          .where(JOBS.JOB_ID.eq(job.getJobId()))
          .execute();
      log.info("job {}: {} -> {}{}", job.getJobId(), job.getStatus(), e.status().wire(),
          e.lastError() == null ? "" : " (" + e.lastError() + ")");
      if (e.status().terminal()) {
        cancelPending(tx, job.getJobId(), null);
      }
    }
  }

  /** The placement's model directory on that node, from the data directory it registered. */
  private static String localPath(DSLContext tx, String nodeId, ModelRef model) {
    String dataDir = tx.select(NODES.DATA_DIR).from(NODES).where(NODES.NODE_ID.eq(nodeId)).fetchOne(NODES.DATA_DIR);
    return dataDir == null ? null : ModelPaths.modelDir(Path.of(dataDir), model).toString();
  }
}
