package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.ARTIFACT_DELETIONS;
import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;

import io.mooncake.dist.db.jooq.tables.records.ArtifactDeletionsRecord;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Deleting a model's staged artifacts from the nodes, once no active job needs them: the master
 * records one {@code artifact_deletions} row per node that holds a placement of a job of the model;
 * each node's worker claims its rows, frees the model directory and its replica rows, and marks
 * them done.
 *
 * <p>Races with job creation: {@link #request} locks the model's jobs and refuses while one is
 * active; a job created for the model meanwhile (or later, before a node got to its row) makes
 * {@link #claim} fail that row as superseded instead of deleting the files the new job stages.
 */
public final class ArtifactDeletions {
  /**
   * The payload prefix of the {@code mooncake_node} notification a node's new rows send (V023): the
   * prefix, then the node id. Task wake-ups send the bare node id, so a node polls its deletions
   * only when told of one.
   */
  public static final String NOTICE = "deletions ";

  public static final List<String> ACTIVE =
      List.of(JobStatus.PLANNED.wire(), JobStatus.SEEDING.wire(), JobStatus.REPLICATING.wire());

  private final DSLContext dsl;

  public ArtifactDeletions(DSLContext dsl) {
    this.dsl = dsl;
  }

  /** What {@link #request} found and did. */
  public sealed interface Outcome {
    /** No job of that model ever existed. */
    record NotFound() implements Outcome {}

    /** Active jobs use the model; nothing was written. */
    record Conflict(List<String> activeJobIds) implements Outcome {}

    /** One pending row per node, {@code deletionIds} in the order of {@code nodes}. */
    record Requested(List<String> nodes, List<Long> deletionIds) implements Outcome {}
  }

  /** A row a node claimed. */
  public record Claimed(long deletionId, ModelRef model) {}

  private static Condition ofModel(ModelRef m) {
    return JOBS.MODEL_ID
        .eq(m.modelId())
        .and(JOBS.REVISION.eq(m.revision()))
        .and(JOBS.FORMAT.eq(m.format()))
        .and(JOBS.PROVIDER.eq(m.provider()));
  }

  /**
   * In one transaction: lock the model's jobs, refuse while one is active, else record the rows.
   */
  public Outcome request(ModelRef model) {
    return dsl.transactionResult(
        cfg -> {
          DSLContext tx = cfg.dsl();
          var jobs =
              tx.select(JOBS.JOB_ID, JOBS.STATUS)
                  .from(JOBS)
                  .where(ofModel(model))
                  .orderBy(JOBS.JOB_ID)
                  .forUpdate()
                  .fetch();
          if (jobs.isEmpty()) {
            return new Outcome.NotFound();
          }
          List<String> active =
              jobs.stream().filter(r -> ACTIVE.contains(r.value2())).map(r -> r.value1()).toList();
          if (!active.isEmpty()) {
            return new Outcome.Conflict(active);
          }
          List<String> nodes =
              tx.selectDistinct(PLACEMENTS.NODE_ID)
                  .from(PLACEMENTS)
                  .join(JOBS)
                  .on(JOBS.JOB_ID.eq(PLACEMENTS.JOB_ID))
                  .where(ofModel(model))
                  .orderBy(PLACEMENTS.NODE_ID)
                  .fetch(PLACEMENTS.NODE_ID);
          List<Long> ids = new ArrayList<>();
          if (!nodes.isEmpty()) {
            var insert =
                tx.insertInto(
                    ARTIFACT_DELETIONS,
                    ARTIFACT_DELETIONS.MODEL_ID,
                    ARTIFACT_DELETIONS.REVISION,
                    ARTIFACT_DELETIONS.FORMAT,
                    ARTIFACT_DELETIONS.PROVIDER,
                    ARTIFACT_DELETIONS.NODE_ID);
            for (String node : nodes) {
              insert =
                  insert.values(
                      model.modelId(), model.revision(), model.format(), model.provider(), node);
            }
            // One statement, so the notify trigger fires once.
            java.util.Map<String, Long> byNode = new java.util.HashMap<>();
            insert
                .returningResult(ARTIFACT_DELETIONS.DELETION_ID, ARTIFACT_DELETIONS.NODE_ID)
                .fetch()
                .forEach(r -> byNode.put(r.value2(), r.value1()));
            nodes.forEach(n -> ids.add(byNode.get(n)));
          }
          return new Outcome.Requested(nodes, ids);
        });
  }

  /**
   * Claims this node's oldest pending row (or one whose lease lapsed), skipping rows another
   * transaction holds. A row superseded by a job of the model that is active or was created after
   * the request is failed instead of handed out.
   */
  public Optional<Claimed> claim(String nodeId, String owner, Duration lease) {
    while (true) {
      Optional<Claimed> result =
          dsl.transactionResult(
              cfg -> {
                DSLContext tx = cfg.dsl();
                ArtifactDeletionsRecord row =
                    tx.selectFrom(ARTIFACT_DELETIONS)
                        .where(ARTIFACT_DELETIONS.NODE_ID.eq(nodeId))
                        .and(
                            ARTIFACT_DELETIONS
                                .STATE
                                .eq("pending")
                                .or(
                                    ARTIFACT_DELETIONS
                                        .STATE
                                        .eq("processing")
                                        .and(
                                            ARTIFACT_DELETIONS.LEASE_EXPIRES_AT.lt(
                                                DSL.currentOffsetDateTime()))))
                        .orderBy(ARTIFACT_DELETIONS.DELETION_ID)
                        .limit(1)
                        .forUpdate()
                        .skipLocked()
                        .fetchOne();
                if (row == null) {
                  return null;
                }
                ModelRef model =
                    new ModelRef(
                        row.getModelId(), row.getRevision(), row.getFormat(), row.getProvider());
                String superseding =
                    tx.select(JOBS.JOB_ID)
                        .from(JOBS)
                        .where(ofModel(model))
                        .and(JOBS.STATUS.in(ACTIVE).or(JOBS.CREATED_AT.ge(row.getCreatedAt())))
                        .orderBy(JOBS.CREATED_AT.desc())
                        .limit(1)
                        .fetchOne(JOBS.JOB_ID);
                if (superseding != null) {
                  finish(
                      tx,
                      row.getDeletionId(),
                      null,
                      "failed",
                      "superseded by job '"
                          + superseding
                          + "', which uses the model and was not ended when the deletion was requested");
                  return Optional.<Claimed>empty();
                }
                tx.update(ARTIFACT_DELETIONS)
                    .set(ARTIFACT_DELETIONS.STATE, "processing")
                    .set(ARTIFACT_DELETIONS.LEASE_OWNER, owner)
                    .set(
                        ARTIFACT_DELETIONS.LEASE_EXPIRES_AT,
                        DSL.field(
                            "now() + make_interval(secs => {0})",
                            ARTIFACT_DELETIONS.LEASE_EXPIRES_AT.getDataType(),
                            DSL.val(lease.toMillis() / 1000.0)))
                    .where(ARTIFACT_DELETIONS.DELETION_ID.eq(row.getDeletionId()))
                    .execute();
                return Optional.of(new Claimed(row.getDeletionId(), model));
              });
      if (result == null) {
        return Optional.empty();
      }
      if (result.isPresent()) {
        return result;
      }
      // A superseded row was failed: look for the next one.
    }
  }

  /** Marks a claimed row done; false when this owner no longer holds it. */
  public boolean done(long deletionId, String owner) {
    return finish(dsl, deletionId, owner, "done", null);
  }

  /** Marks a claimed row failed with {@code error}; false when this owner no longer holds it. */
  public boolean failed(long deletionId, String owner, String error) {
    return finish(dsl, deletionId, owner, "failed", error);
  }

  private static boolean finish(
      DSLContext tx, long deletionId, String owner, String state, String error) {
    Condition held =
        owner == null
            ? DSL.noCondition()
            : ARTIFACT_DELETIONS
                .LEASE_OWNER
                .eq(owner)
                .and(ARTIFACT_DELETIONS.STATE.eq("processing"));
    return tx.update(ARTIFACT_DELETIONS)
            .set(ARTIFACT_DELETIONS.STATE, state)
            .set(ARTIFACT_DELETIONS.LAST_ERROR, error)
            .set(ARTIFACT_DELETIONS.LEASE_EXPIRES_AT, (java.time.OffsetDateTime) null)
            .set(ARTIFACT_DELETIONS.FINISHED_AT, DSL.currentOffsetDateTime())
            .where(ARTIFACT_DELETIONS.DELETION_ID.eq(deletionId))
            .and(held)
            .execute()
        == 1;
  }
}
