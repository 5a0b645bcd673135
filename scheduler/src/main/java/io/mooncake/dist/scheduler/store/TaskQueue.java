package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPTS;

import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.domain.TaskType;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The task queue's worker side: claim under a lease, renew, report progress, finish. Every write
 * after the claim is guarded by {@code lease_owner} and {@code state = 'processing'}, so a worker
 * that lost its lease (expired and rescued, or its node restarted) cannot overwrite the outcome.
 */
public final class TaskQueue {
  /** Retry delay after attempt n: 2^n seconds, at most 60. */
  private static final Field<OffsetDateTime> BACKOFF = DSL.field(
      "now() + make_interval(secs => least(60, power(2, {0})))", SQLDataType.TIMESTAMPWITHTIMEZONE, TASKS.ATTEMPTS);

  private final DSLContext dsl;

  public TaskQueue(DSLContext dsl) {
    this.dsl = dsl;
  }

  private static Field<OffsetDateTime> nowPlus(Duration d) {
    return DSL.field("now() + make_interval(secs => {0})", SQLDataType.TIMESTAMPWITHTIMEZONE,
        DSL.val(d.toMillis() / 1000.0));
  }

  /**
   * Claims up to {@code limit} of the node's ready tasks in one statement:
   * {@code UPDATE ... WHERE task_id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT n) RETURNING ...}.
   * The inner select walks the partial index of pending rows for this node.
   */
  public List<ClaimedTask> claim(String nodeId, String leaseOwner, int limit, Duration lease) {
    var ready = DSL.select(TASKS.TASK_ID)
        .from(TASKS)
        .where(TASKS.NODE_ID.eq(nodeId))
        .and(TASKS.STATE.eq("pending"))
        .and(TASKS.RUN_AFTER.le(DSL.currentOffsetDateTime()))
        .orderBy(TASKS.TASK_ID)
        .limit(limit)
        .forUpdate()
        .skipLocked();
    return dsl.update(TASKS)
        .set(TASKS.STATE, "processing")
        .set(TASKS.LEASE_OWNER, leaseOwner)
        .set(TASKS.LEASE_EXPIRES_AT, nowPlus(lease))
        .set(TASKS.STARTED_AT, DSL.currentOffsetDateTime())
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .set(TASKS.ATTEMPTS, TASKS.ATTEMPTS.plus(1))
        .set(TASKS.BYTES_DONE, 0L)
        .where(TASKS.TASK_ID.in(ready))
        .returning(TASKS.TASK_ID, TASKS.JOB_ID, TASKS.NODE_ID, TASKS.TASK_TYPE, TASKS.OBJECT_ID, TASKS.PAYLOAD,
            TASKS.ATTEMPTS, TASKS.MAX_ATTEMPTS)
        .fetch(r -> new ClaimedTask(r.getTaskId(), r.getJobId(), r.getNodeId(), TaskType.valueOf(r.getTaskType()),
            r.getObjectId(), Json.read(r.getPayload().data(), TaskPayload.class), r.getAttempts(), r.getMaxAttempts()))
        .stream()
        .sorted((a, b) -> Long.compare(a.taskId(), b.taskId()))
        .toList();
  }

  /** Extends every lease the owner holds; returns how many it still holds. */
  public int renewLeases(String leaseOwner, Duration lease) {
    return dsl.update(TASKS)
        .set(TASKS.LEASE_EXPIRES_AT, nowPlus(lease))
        .where(TASKS.LEASE_OWNER.eq(leaseOwner))
        .and(TASKS.STATE.eq("processing"))
        .execute();
  }

  /** Records progress (and the chosen source); false when the lease is gone. */
  public boolean progress(long taskId, String leaseOwner, long bytesDone, String sourceNodeId) {
    return dsl.update(TASKS)
        .set(TASKS.BYTES_DONE, bytesDone)
        .set(TASKS.SOURCE_NODE_ID, sourceNodeId)
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(TASKS.TASK_ID.eq(taskId))
        .and(TASKS.LEASE_OWNER.eq(leaseOwner))
        .and(TASKS.STATE.eq("processing"))
        .execute() == 1;
  }

  /**
   * Marks the task succeeded and publishes its replicas in the same transaction, so an object is
   * listed as held exactly when the task that wrote it is recorded as done. False (and nothing
   * written) when the lease is gone.
   */
  public boolean succeed(long taskId, String leaseOwner, long bytesDone, String resultJson, List<Replica> publish) {
    return dsl.transactionResult(cfg -> {
      DSLContext tx = cfg.dsl();
      var row = tx.update(TASKS)
          .set(TASKS.STATE, "succeeded")
          .set(TASKS.BYTES_DONE, bytesDone)
          .set(TASKS.RESULT, resultJson == null ? null : JSONB.valueOf(resultJson))
          .set(TASKS.FINISHED_AT, DSL.currentOffsetDateTime())
          .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
          .set(TASKS.LAST_ERROR, (String) null)
          .where(TASKS.TASK_ID.eq(taskId))
          .and(TASKS.LEASE_OWNER.eq(leaseOwner))
          .and(TASKS.STATE.eq("processing"))
          .returning(TASKS.ATTEMPTS, TASKS.NODE_ID, TASKS.STARTED_AT)
          .fetchOne();
      if (row == null) {
        return false;
      }
      recordAttempt(tx, taskId, row.getAttempts(), row.getNodeId(), leaseOwner, row.getStartedAt(), "succeeded", null);
      ReplicaCatalog.publish(tx, publish);
      return true;
    });
  }

  /**
   * Publishes replicas while the task is still running (a seed's objects, one by one, as its
   * download makes them durable), only if the caller still holds the lease.
   *
   * @return false (and nothing published) when the lease is gone
   */
  public boolean publishWhileLeased(long taskId, String leaseOwner, List<Replica> publish) {
    return dsl.transactionResult(cfg -> {
      DSLContext tx = cfg.dsl();
      boolean held = tx.selectOne()
          .from(TASKS)
          .where(TASKS.TASK_ID.eq(taskId))
          .and(TASKS.LEASE_OWNER.eq(leaseOwner))
          .and(TASKS.STATE.eq("processing"))
          .forShare()
          .fetchOptional()
          .isPresent();
      if (held) {
        ReplicaCatalog.publish(tx, publish);
      }
      return held;
    });
  }

  /**
   * Records a failed attempt. A retryable failure with attempts left goes back to pending after
   * an exponential backoff; otherwise the task is failed for good with {@code error}.
   *
   * @return the state the task is now in, or {@code null} when the lease was gone
   */
  public String fail(long taskId, String leaseOwner, String error, boolean retryable) {
    return dsl.transactionResult(cfg -> {
      DSLContext tx = cfg.dsl();
      Field<String> next = DSL.when(DSL.condition(retryable).and(TASKS.ATTEMPTS.lt(TASKS.MAX_ATTEMPTS)), DSL.val("pending"))
          .otherwise(DSL.val("failed"));
      var row = tx.update(TASKS)
          .set(TASKS.STATE, next)
          .set(TASKS.LAST_ERROR, error)
          .set(TASKS.RUN_AFTER, BACKOFF)
          .set(TASKS.LEASE_OWNER, (String) null)
          .set(TASKS.LEASE_EXPIRES_AT, (OffsetDateTime) null)
          .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
          .set(TASKS.FINISHED_AT, DSL.when(next.eq("failed"), DSL.currentOffsetDateTime()))
          .where(TASKS.TASK_ID.eq(taskId))
          .and(TASKS.LEASE_OWNER.eq(leaseOwner))
          .and(TASKS.STATE.eq("processing"))
          .returning(TASKS.STATE, TASKS.ATTEMPTS, TASKS.NODE_ID, TASKS.STARTED_AT)
          .fetchOne();
      if (row == null) {
        return null;
      }
      String outcome = "pending".equals(row.getState()) ? "retry" : "failed";
      recordAttempt(tx, taskId, row.getAttempts(), row.getNodeId(), leaseOwner, row.getStartedAt(), outcome, error);
      return row.getState();
    });
  }

  /**
   * Lease rescue: tasks whose owner stopped renewing go back to pending for the same node (a
   * restarted client picks them up) while attempts remain, else fail with the reason.
   *
   * @return how many tasks were rescued or failed
   */
  public int rescueExpiredLeases() {
    return dsl.transactionResult(cfg -> {
      DSLContext tx = cfg.dsl();
      Field<String> next = DSL.when(TASKS.ATTEMPTS.lt(TASKS.MAX_ATTEMPTS), DSL.val("pending")).otherwise(DSL.val("failed"));
      var expired = DSL.select(TASKS.TASK_ID)
          .from(TASKS)
          .where(TASKS.STATE.eq("processing"))
          .and(TASKS.LEASE_EXPIRES_AT.lt(DSL.currentOffsetDateTime()))
          .forUpdate()
          .skipLocked();
      var rows = tx.update(TASKS)
          .set(TASKS.STATE, next)
          .set(TASKS.LAST_ERROR, DSL.concat(DSL.val("lease expired: node "), TASKS.NODE_ID,
              DSL.val(" stopped renewing it during attempt "), TASKS.ATTEMPTS.cast(String.class)))
          .set(TASKS.LEASE_OWNER, (String) null)
          .set(TASKS.LEASE_EXPIRES_AT, (OffsetDateTime) null)
          .set(TASKS.RUN_AFTER, DSL.currentOffsetDateTime())
          .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
          .set(TASKS.FINISHED_AT, DSL.when(next.eq("failed"), DSL.currentOffsetDateTime()))
          .where(TASKS.TASK_ID.in(expired))
          .returning(TASKS.TASK_ID, TASKS.ATTEMPTS, TASKS.NODE_ID, TASKS.STARTED_AT, TASKS.LAST_ERROR)
          .fetch();
      // The owner is already cleared, so the attempt records who it was by node.
      rows.forEach(r -> recordAttempt(tx, r.getTaskId(), r.getAttempts(), r.getNodeId(), r.getNodeId(),
          r.getStartedAt(), "lease_expired", r.getLastError()));
      return rows.size();
    });
  }

  /**
   * A client that starts with a new instance id releases the tasks its previous incarnation held:
   * they go straight back to pending instead of waiting for the lease to expire.
   */
  public int releaseLeasesOfOtherInstances(String nodeId, String currentOwner) {
    return dsl.update(TASKS)
        .set(TASKS.STATE, "pending")
        .set(TASKS.LEASE_OWNER, (String) null)
        .set(TASKS.LEASE_EXPIRES_AT, (OffsetDateTime) null)
        .set(TASKS.LAST_ERROR, "client restarted during the attempt")
        .set(TASKS.UPDATED_AT, DSL.currentOffsetDateTime())
        .where(TASKS.NODE_ID.eq(nodeId))
        .and(TASKS.STATE.eq("processing"))
        .and(TASKS.LEASE_OWNER.ne(currentOwner))
        .execute();
  }

  private static void recordAttempt(DSLContext tx, long taskId, int attempt, String nodeId, String owner,
      OffsetDateTime startedAt, String outcome, String error) {
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
