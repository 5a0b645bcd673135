package io.mooncake.dist.scheduler.store;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.NODES;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPT_LOG;

import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.domain.TaskType;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * The aggregates behind the master's {@code /metrics}, computed at scrape time: one {@code GROUP
 * BY} per metric family and no per-row work in Java. Pending-task counts walk the partial claim
 * index; the others scan their table, which is fine at a scrape every few seconds for the table
 * sizes a master keeps (finished jobs can be deleted with their rows).
 */
public final class MetricsQueries {
  /** A count for one combination of label values, in the order the caller names the labels. */
  public record Count(List<String> labels, long value) {}

  /**
   * How many tasks of {@code taskType} succeeded and the seconds their succeeding attempts took.
   */
  public record Durations(String taskType, long count, double sumSeconds) {}

  private static final Field<BigDecimal> ATTEMPT_SECONDS =
      DSL.field(
          "extract(epoch from {0} - {1})",
          SQLDataType.NUMERIC, TASKS.FINISHED_AT, TASKS.STARTED_AT);
  private static final Field<OffsetDateTime> LIVE_SINCE =
      DSL.field(
          "now() - make_interval(secs => {0})",
          SQLDataType.TIMESTAMPWITHTIMEZONE, DSL.val((double) NodeRegistry.LIVENESS.toSeconds()));

  private final DSLContext dsl;

  public MetricsQueries(DSLContext dsl) {
    this.dsl = dsl;
  }

  /** Jobs per status; states without jobs are absent. */
  public Map<String, Long> jobsByState() {
    Map<String, Long> out = new TreeMap<>();
    dsl.select(JOBS.STATUS, DSL.count())
        .from(JOBS)
        .groupBy(JOBS.STATUS)
        .fetch()
        .forEach(r -> out.put(r.value1(), r.value2().longValue()));
    return out;
  }

  /** Tasks per (task type, state). */
  public List<Count> tasksByTypeAndState() {
    return dsl.select(TASKS.TASK_TYPE, TASKS.STATE, DSL.count())
        .from(TASKS)
        .groupBy(TASKS.TASK_TYPE, TASKS.STATE)
        .fetch(r -> new Count(List.of(r.value1(), r.value2()), r.value3()));
  }

  /**
   * Pending tasks per node: every registered node (0 when idle) and any other node with work
   * queued.
   */
  public Map<String, Long> pendingTasksPerNode() {
    Map<String, Long> out = new TreeMap<>();
    dsl.select(NODES.NODE_ID).from(NODES).fetch(NODES.NODE_ID).forEach(n -> out.put(n, 0L));
    dsl.select(TASKS.NODE_ID, DSL.count())
        .from(TASKS)
        .where(TASKS.STATE.eq(TaskState.PENDING.wire()))
        .groupBy(TASKS.NODE_ID)
        .fetch()
        .forEach(r -> out.put(r.value1(), r.value2().longValue()));
    return out;
  }

  /**
   * Registered nodes split by liveness, judged by the database clock as {@link NodeRegistry} does.
   */
  public Map<Boolean, Long> nodesByLiveness() {
    var r =
        dsl.select(
                DSL.count().filterWhere(NODES.HEARTBEAT_AT.gt(LIVE_SINCE)),
                DSL.count().filterWhere(NODES.HEARTBEAT_AT.le(LIVE_SINCE)))
            .from(NODES)
            .fetchOne();
    return Map.of(true, r.value1().longValue(), false, r.value2().longValue());
  }

  /**
   * Bytes each node acquired through succeeded downloads and copies (verification and materialize
   * move none).
   */
  public Map<String, Long> bytesStagedPerNode() {
    Map<String, Long> out = new TreeMap<>();
    dsl.select(TASKS.NODE_ID, DSL.sum(TASKS.BYTES_TOTAL))
        .from(TASKS)
        .where(TASKS.STATE.eq(TaskState.SUCCEEDED.wire()))
        .and(TASKS.TASK_TYPE.in(TaskType.MODEL_DOWNLOAD.name(), TaskType.REPLICA_COPY.name()))
        .groupBy(TASKS.NODE_ID)
        .fetch()
        .forEach(r -> out.put(r.value1(), r.value2() == null ? 0L : r.value2().longValue()));
    return out;
  }

  /** A node's disk as its heartbeats last reported it (issue 22). */
  public record NodeDisk(String nodeId, long capacityBytes, long freeBytes, long heldBytes) {}

  /** Capacity, free and held bytes of every node that reported its disk. */
  public List<NodeDisk> nodeDisks() {
    var held =
        DSL.select(
                io.mooncake.dist.db.jooq.Tables.NODE_MODELS.NODE_ID,
                DSL.sum(io.mooncake.dist.db.jooq.Tables.NODE_MODELS.BYTES).as("held"))
            .from(io.mooncake.dist.db.jooq.Tables.NODE_MODELS)
            .groupBy(io.mooncake.dist.db.jooq.Tables.NODE_MODELS.NODE_ID)
            .asTable("h");
    return dsl.select(
            NODES.NODE_ID,
            NODES.CAPACITY_BYTES,
            NODES.FREE_BYTES,
            held.field("held", BigDecimal.class))
        .from(NODES)
        .leftJoin(held)
        .on(held.field(io.mooncake.dist.db.jooq.Tables.NODE_MODELS.NODE_ID).eq(NODES.NODE_ID))
        .where(NODES.CAPACITY_BYTES.isNotNull())
        .orderBy(NODES.NODE_ID)
        .fetch(
            r ->
                new NodeDisk(
                    r.value1(),
                    r.value2(),
                    r.value3() == null ? 0 : r.value3(),
                    r.value4() == null ? 0 : r.value4().longValue()));
  }

  /** Evictions per node since the table began: {@code [count, bytes]}. */
  public Map<String, long[]> evictionsPerNode() {
    var e = io.mooncake.dist.db.jooq.Tables.EVICTIONS;
    Map<String, long[]> out = new TreeMap<>();
    dsl.select(e.NODE_ID, DSL.count(), DSL.sum(e.BYTES))
        .from(e)
        .groupBy(e.NODE_ID)
        .fetch()
        .forEach(
            r ->
                out.put(
                    r.value1(),
                    new long[] {r.value2(), r.value3() == null ? 0 : r.value3().longValue()}));
    return out;
  }

  /**
   * Finished attempts per (task type, outcome) from {@code task_attempt_log}: the failing ones
   * recorded in {@code task_attempts} and the succeeding one of every succeeded task (V007).
   */
  public List<Count> attemptsByTypeAndOutcome() {
    return dsl.select(TASKS.TASK_TYPE, TASK_ATTEMPT_LOG.OUTCOME, DSL.count())
        .from(TASK_ATTEMPT_LOG)
        .join(TASKS)
        .on(TASKS.TASK_ID.eq(TASK_ATTEMPT_LOG.TASK_ID))
        .groupBy(TASKS.TASK_TYPE, TASK_ATTEMPT_LOG.OUTCOME)
        .fetch(r -> new Count(List.of(r.value1(), r.value2()), r.value3()));
  }

  /**
   * Succeeded tasks per type with the summed duration of their succeeding attempt ({@code
   * finished_at - started_at}; {@code started_at} is reset by every claim).
   */
  public List<Durations> succeededDurations() {
    return dsl.select(TASKS.TASK_TYPE, DSL.count(), DSL.sum(ATTEMPT_SECONDS))
        .from(TASKS)
        .where(TASKS.STATE.eq(TaskState.SUCCEEDED.wire()))
        .and(TASKS.STARTED_AT.isNotNull())
        .and(TASKS.FINISHED_AT.isNotNull())
        .groupBy(TASKS.TASK_TYPE)
        .fetch(
            r ->
                new Durations(
                    r.value1(), r.value2(), r.value3() == null ? 0 : r.value3().doubleValue()));
  }
}
