package io.mooncake.dist.master.metrics;

import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.scheduler.domain.TaskType;
import io.mooncake.dist.scheduler.metrics.PrometheusText;
import io.mooncake.dist.scheduler.store.MetricsQueries;
import io.mooncake.dist.scheduler.store.MetricsQueries.Count;
import io.mooncake.dist.scheduler.store.MetricsQueries.Durations;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The master's metric families. Every job state and every (task type, task state) pair is exposed,
 * at 0 when empty, so a series does not vanish (and alerts on it go silent) when its last row moves
 * on.
 */
final class MasterMetrics {
  private final MetricsQueries queries;
  private final HttpRequestCounter requests;

  MasterMetrics(MetricsQueries queries, HttpRequestCounter requests) {
    this.queries = queries;
    this.requests = requests;
  }

  String render() {
    PrometheusText out = new PrometheusText();
    jobs(out);
    tasks(out);
    Map<String, Long> queue = queries.pendingTasksPerNode();
    out.family("mooncake_queue_depth", "gauge", "Pending tasks per node (waiting to be claimed).");
    queue.forEach((node, n) -> out.sample("mooncake_queue_depth", List.of("node_id", node), n));
    Map<Boolean, Long> nodes = queries.nodesByLiveness();
    out.family(
        "mooncake_nodes",
        "gauge",
        "Registered nodes by liveness (heartbeat within the last "
            + NodeRegistry.LIVENESS.toSeconds()
            + " s).");
    out.sample("mooncake_nodes", List.of("live", "true"), nodes.get(true));
    out.sample("mooncake_nodes", List.of("live", "false"), nodes.get(false));
    out.family(
        "mooncake_bytes_staged_total",
        "counter",
        "Bytes acquired per node by succeeded MODEL_DOWNLOAD and REPLICA_COPY tasks.");
    queries
        .bytesStagedPerNode()
        .forEach(
            (node, n) -> out.sample("mooncake_bytes_staged_total", List.of("node_id", node), n));
    out.family(
        "mooncake_task_attempts_total",
        "counter",
        "Finished task attempts by task type and outcome.");
    for (Count c : queries.attemptsByTypeAndOutcome()) {
      out.sample(
          "mooncake_task_attempts_total",
          List.of("type", c.labels().get(0), "outcome", c.labels().get(1)),
          c.value());
    }
    durations(out);
    disks(out);
    out.family(
        "mooncake_http_requests_total",
        "counter",
        "HTTP requests this master answered, by route and status (since it started).");
    requests
        .snapshot()
        .forEach(
            (k, n) ->
                out.sample(
                    "mooncake_http_requests_total",
                    List.of("route", k.route(), "status", Integer.toString(k.status())),
                    n));
    return out.text();
  }

  /** Each node's disk as last reported, and what eviction freed there (issue 22). */
  private void disks(PrometheusText out) {
    List<MetricsQueries.NodeDisk> disks = queries.nodeDisks();
    out.family(
        "mooncake_node_capacity_bytes",
        "gauge",
        "Size of each node's data directory file system, as its last heartbeat reported.");
    disks.forEach(
        d ->
            out.sample(
                "mooncake_node_capacity_bytes", List.of("node_id", d.nodeId()), d.capacityBytes()));
    out.family(
        "mooncake_node_free_bytes",
        "gauge",
        "Free bytes of each node's data directory file system, as its last heartbeat reported.");
    disks.forEach(
        d -> out.sample("mooncake_node_free_bytes", List.of("node_id", d.nodeId()), d.freeBytes()));
    out.family(
        "mooncake_node_held_bytes",
        "gauge",
        "Bytes of staged (and partly staged) models each node holds, as it last reported.");
    disks.forEach(
        d -> out.sample("mooncake_node_held_bytes", List.of("node_id", d.nodeId()), d.heldBytes()));
    Map<String, long[]> evicted = queries.evictionsPerNode();
    out.family(
        "mooncake_evictions_total",
        "counter",
        "Models each node evicted (watermarks or room for a job), from the evictions table.");
    evicted.forEach(
        (node, e) -> out.sample("mooncake_evictions_total", List.of("node_id", node), e[0]));
    out.family("mooncake_evicted_bytes_total", "counter", "Bytes each node freed by evicting.");
    evicted.forEach(
        (node, e) -> out.sample("mooncake_evicted_bytes_total", List.of("node_id", node), e[1]));
  }

  private void jobs(PrometheusText out) {
    Map<String, Long> byState = queries.jobsByState();
    out.family("mooncake_jobs", "gauge", "Distribution jobs by state.");
    for (JobStatus s : JobStatus.values()) {
      out.sample("mooncake_jobs", List.of("state", s.wire()), byState.getOrDefault(s.wire(), 0L));
    }
  }

  private void tasks(PrometheusText out) {
    Map<List<String>, Long> byTypeAndState = new LinkedHashMap<>();
    for (TaskType t : TaskType.values()) {
      for (TaskState s : TaskState.values()) {
        byTypeAndState.put(List.of(t.name(), s.wire()), 0L);
      }
    }
    queries.tasksByTypeAndState().forEach(c -> byTypeAndState.put(c.labels(), c.value()));
    out.family("mooncake_tasks", "gauge", "Task rows by type and state.");
    byTypeAndState.forEach(
        (k, n) -> out.sample("mooncake_tasks", List.of("type", k.get(0), "state", k.get(1)), n));
  }

  private void durations(PrometheusText out) {
    out.family(
        "mooncake_task_duration_seconds",
        "summary",
        "Duration of the succeeding attempt of succeeded tasks, by task type (count and sum, no quantiles).");
    for (Durations d : queries.succeededDurations()) {
      out.sample("mooncake_task_duration_seconds_count", List.of("type", d.taskType()), d.count());
      out.sample(
          "mooncake_task_duration_seconds_sum", List.of("type", d.taskType()), d.sumSeconds());
    }
  }
}
