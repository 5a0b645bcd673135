package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.JOB_FILES;
import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENT_BYTES;

import io.mooncake.dist.db.jooq.tables.records.JobObjectsRecord;
import io.mooncake.dist.db.jooq.tables.records.JobsRecord;
import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectSlice;
import io.mooncake.dist.scheduler.domain.PlacementSnapshot;
import io.mooncake.dist.scheduler.domain.PlacementState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.InsertValuesStep6;
import org.jooq.JSONB;

/**
 * Jobs: creation (idempotent per {@code job_id}), their manifest, and the snapshot callers poll.
 */
public final class JobStore {
  /** The statuses of a job still in progress, as stored: the scheduler evaluates only these. */
  public static final List<String> ACTIVE =
      Arrays.stream(JobStatus.values()).filter(s -> !s.terminal()).map(JobStatus::wire).toList();

  private static final int OBJECT_BATCH = 2_000;

  private final DSLContext dsl;

  public JobStore(DSLContext dsl) {
    this.dsl = dsl;
  }

  /**
   * Stores a validated request in one transaction. A repeat of the same {@code job_id} with the
   * same canonical digest changes nothing ({@link CreateResult#ALREADY_EXISTS}); with another
   * digest it is a {@link CreateResult#CONFLICT}, and nothing is written.
   */
  public CreateResult create(JobRequest request, String requestSha256, String requestJson) {
    return create(request, requestSha256, requestJson, null);
  }

  /**
   * As above, storing the source rules the job was admitted under (null: none stored, any source);
   * the seed's download follows them on every redirect hop.
   */
  public CreateResult create(
      JobRequest request,
      String requestSha256,
      String requestJson,
      io.mooncake.dist.scheduler.domain.SourceRules sources) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          Manifest manifest = request.manifest();
          ModelRef model = request.model();
          int inserted =
              tx.insertInto(JOBS)
                  .set(JOBS.JOB_ID, request.jobId())
                  .set(JOBS.REQUEST_SHA256, requestSha256)
                  .set(JOBS.REQUEST, JSONB.valueOf(requestJson))
                  .set(JOBS.MODEL_ID, model.modelId())
                  .set(JOBS.REVISION, model.revision())
                  .set(JOBS.FORMAT, model.format())
                  .set(JOBS.PROVIDER, model.provider())
                  .set(JOBS.SEED_NODE_ID, request.seedNodeId())
                  .set(JOBS.TOTAL_SIZE_BYTES, manifest.totalSizeBytes())
                  .set(JOBS.INTEGRITY, request.integrity().wire())
                  .set(
                      JOBS.SOURCE_RULES,
                      sources == null
                          ? null
                          : io.mooncake.dist.scheduler.domain.Json.write(sources))
                  .set(
                      JOBS.FALLBACK_SEEDS,
                      request.fallbackSeeds().isEmpty()
                          ? null
                          : io.mooncake.dist.scheduler.domain.Json.write(request.fallbackSeeds()))
                  .onConflictDoNothing()
                  .execute();
          if (inserted == 0) {
            String existing =
                tx.select(JOBS.REQUEST_SHA256)
                    .from(JOBS)
                    .where(JOBS.JOB_ID.eq(request.jobId()))
                    .fetchOne(JOBS.REQUEST_SHA256);
            return requestSha256.equals(existing)
                ? CreateResult.ALREADY_EXISTS
                : CreateResult.CONFLICT;
          }
          for (int i = 0; i < manifest.files().size(); i++) {
            ManifestFile f = manifest.files().get(i);
            tx.insertInto(JOB_FILES)
                .set(JOB_FILES.JOB_ID, request.jobId())
                .set(JOB_FILES.FILE_INDEX, i)
                .set(JOB_FILES.PATH, f.path())
                .set(JOB_FILES.SIZE_BYTES, f.sizeBytes())
                .set(JOB_FILES.CHECKSUM, f.checksum())
                .set(JOB_FILES.SHA256, f.sha256OrNull())
                .set(JOB_FILES.DOWNLOAD_URL, f.downloadUrl())
                .set(JOB_FILES.ARTIFACT_KEY, f.artifactKey())
                .set(JOB_FILES.CHUNK_SIZE_BYTES, f.chunkLayout().chunkSizeBytes())
                .set(JOB_FILES.CHUNK_COUNT, f.chunkLayout().chunkCount())
                .set(JOB_FILES.OBJECT_PREFIX, f.chunkLayout().objectPrefix())
                .execute();
          }
          insertObjects(tx, request.jobId(), manifest.slices());
          for (int i = 0; i < request.targetNodes().size(); i++) {
            String node = request.targetNodes().get(i);
            tx.insertInto(PLACEMENTS)
                .set(PLACEMENTS.JOB_ID, request.jobId())
                .set(PLACEMENTS.NODE_ID, node)
                .set(PLACEMENTS.ORDINAL, i)
                .set(PLACEMENTS.IS_SEED, node.equals(request.seedNodeId()))
                .execute();
          }
          return CreateResult.CREATED;
        });
  }

  /** Multi-row inserts in batches: one round trip per batch, never one per object. */
  private static void insertObjects(DSLContext tx, String jobId, List<ObjectSlice> slices) {
    for (int from = 0; from < slices.size(); from += OBJECT_BATCH) {
      InsertValuesStep6<JobObjectsRecord, String, String, Integer, Integer, Long, Long> insert =
          tx.insertInto(
              JOB_OBJECTS,
              JOB_OBJECTS.JOB_ID,
              JOB_OBJECTS.OBJECT_ID,
              JOB_OBJECTS.FILE_INDEX,
              JOB_OBJECTS.CHUNK_INDEX,
              JOB_OBJECTS.OFFSET_BYTES,
              JOB_OBJECTS.LENGTH_BYTES);
      for (ObjectSlice s : slices.subList(from, Math.min(slices.size(), from + OBJECT_BATCH))) {
        insert =
            insert.values(
                jobId, s.objectId(), s.fileIndex(), s.chunkIndex(), s.offset(), s.length());
      }
      insert.execute();
    }
  }

  /** The manifest as stored, rebuilt from {@code job_files} and {@code job_objects}. */
  public static Manifest manifest(DSLContext dsl, JobsRecord job) {
    Map<Integer, List<String>> objectIds = new HashMap<>();
    dsl.select(JOB_OBJECTS.FILE_INDEX, JOB_OBJECTS.OBJECT_ID)
        .from(JOB_OBJECTS)
        .where(JOB_OBJECTS.JOB_ID.eq(job.getJobId()))
        .orderBy(JOB_OBJECTS.FILE_INDEX, JOB_OBJECTS.CHUNK_INDEX)
        .fetch()
        .forEach(
            r -> objectIds.computeIfAbsent(r.value1(), k -> new ArrayList<>()).add(r.value2()));
    List<ManifestFile> files =
        dsl.selectFrom(JOB_FILES)
            .where(JOB_FILES.JOB_ID.eq(job.getJobId()))
            .orderBy(JOB_FILES.FILE_INDEX)
            .fetch(
                f ->
                    new ManifestFile(
                        f.getPath(),
                        f.getSizeBytes(),
                        f.getChecksum(),
                        f.getDownloadUrl(),
                        f.getArtifactKey(),
                        objectIds.getOrDefault(f.getFileIndex(), List.of()),
                        new ChunkLayout(
                            f.getChunkSizeBytes(), f.getChunkCount(), f.getObjectPrefix())));
    return new Manifest(modelRef(job), job.getTotalSizeBytes(), "v1", files);
  }

  public static ModelRef modelRef(JobsRecord job) {
    return new ModelRef(job.getModelId(), job.getRevision(), job.getFormat(), job.getProvider());
  }

  /** Ids of jobs not yet terminal, oldest first. */
  public List<String> activeJobIds(int limit) {
    return dsl.select(JOBS.JOB_ID)
        .from(JOBS)
        .where(JOBS.STATUS.in(ACTIVE))
        .orderBy(JOBS.CREATED_AT)
        .limit(limit)
        .fetch(JOBS.JOB_ID);
  }

  /**
   * The snapshot: the job row, its placements as the scheduler last wrote them, and staged bytes
   * per node from {@code placement_bytes}, which triggers keep equal to the sum over the job's
   * MODEL_DOWNLOAD and REPLICA_COPY rows (succeeded at {@code bytes_total}, others at {@code
   * bytes_done}). Two statements by key however many tasks the job has (the job's columns the
   * snapshot shows, then the placements joined to their bytes: a 1,000-node job's snapshot is the
   * API's largest answer, read every few hundred ms by each poller while the masters also carry the
   * nodes' heartbeats), and still right after the finished job's tasks were pruned.
   */
  public Optional<JobSnapshot> snapshot(String jobId) {
    JobsRecord job =
        dsl.select(JobListing.SHOWN)
            .select(JOBS.INTEGRITY, JOBS.REPLACED_SEEDS, JOBS.FALLBACK_SEEDS)
            .from(JOBS)
            .where(JOBS.JOB_ID.eq(jobId))
            .fetchOneInto(JOBS);
    if (job == null) {
      return Optional.empty();
    }
    long total = job.getTotalSizeBytes();
    List<String> replaced = nodeList(job.getReplacedSeeds());
    List<PlacementSnapshot> placements =
        dsl.select(
                PLACEMENTS.NODE_ID,
                PLACEMENTS.STATE,
                PLACEMENTS.LOCAL_PATH,
                PLACEMENTS.CHECKSUM_VERIFIED,
                PLACEMENTS.LAST_ERROR,
                PLACEMENT_BYTES.STAGED_BYTES)
            .from(PLACEMENTS)
            .leftJoin(PLACEMENT_BYTES)
            .on(
                PLACEMENT_BYTES
                    .JOB_ID
                    .eq(PLACEMENTS.JOB_ID)
                    .and(PLACEMENT_BYTES.NODE_ID.eq(PLACEMENTS.NODE_ID)))
            .where(PLACEMENTS.JOB_ID.eq(jobId))
            .orderBy(PLACEMENTS.ORDINAL)
            .fetch(
                p -> {
                  String nodeId = p.get(PLACEMENTS.NODE_ID);
                  boolean staged = PlacementState.STAGED.wire().equals(p.get(PLACEMENTS.STATE));
                  Long bytes = p.get(PLACEMENT_BYTES.STAGED_BYTES);
                  long staged_bytes = staged ? total : Math.min(total, bytes == null ? 0 : bytes);
                  return new PlacementSnapshot(
                      nodeId,
                      p.get(PLACEMENTS.STATE),
                      staged ? p.get(PLACEMENTS.LOCAL_PATH) : null,
                      staged_bytes,
                      p.get(PLACEMENTS.CHECKSUM_VERIFIED),
                      p.get(PLACEMENTS.LAST_ERROR),
                      role(nodeId, job.getSeedNodeId(), replaced),
                      total);
                });
    return Optional.of(
        new JobSnapshot(
            job.getJobId(),
            job.getStatus(),
            placements,
            job.getLastError(),
            modelRef(job),
            job.getSeedNodeId(),
            total,
            job.getIntegrity(),
            job.getCreatedAt().toString(),
            job.getUpdatedAt().toString(),
            seedHistory(job),
            nodeList(job.getFallbackSeeds())));
  }

  /** {@code seed}, {@code former_seed} (replaced by a fallback seed) or {@code follower}. */
  private static String role(String nodeId, String seed, List<String> replaced) {
    if (nodeId.equals(seed)) {
      return "seed";
    }
    return replaced.contains(nodeId) ? "former_seed" : "follower";
  }

  /** Every node that has been the job's seed, in order, the current seed last. */
  public static List<String> seedHistory(JobsRecord job) {
    List<String> history = new ArrayList<>(nodeList(job.getReplacedSeeds()));
    history.add(job.getSeedNodeId());
    return history;
  }

  /** A JSON array of node ids as stored in {@code jobs} (V011); NULL is the empty list. */
  public static List<String> nodeList(String json) {
    if (json == null) {
      return List.of();
    }
    return List.of(io.mooncake.dist.scheduler.domain.Json.read(json, String[].class));
  }

  /** True when the job exists and is in one of the given states. */
  public Optional<JobStatus> status(String jobId) {
    return dsl.select(JOBS.STATUS)
        .from(JOBS)
        .where(JOBS.JOB_ID.eq(jobId))
        .fetchOptional(JOBS.STATUS)
        .map(JobStatus::fromWire);
  }
}
