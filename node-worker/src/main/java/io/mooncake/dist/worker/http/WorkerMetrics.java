package io.mooncake.dist.worker.http;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * In-process counters of one node worker, updated on its task completion path and read by the
 * {@code /metrics} endpoint. Thread-safe; counts start at zero with each process.
 */
public final class WorkerMetrics {
  /** Task outcomes as the endpoint labels them. */
  public static final String SUCCEEDED = "succeeded";

  public static final String FAILED = "failed";
  public static final String RETRY = "retry";

  /**
   * A copy that waited for a follower to relay its object instead of a second copy from the seed.
   */
  public static final String DEFERRED = "deferred";

  private record Key(String type, String outcome) {}

  private final LongAdder bytesReceived = new LongAdder();
  private final ConcurrentHashMap<Key, LongAdder> tasks = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, LongAdder> durationNanos = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, LongAdder> durationCount = new ConcurrentHashMap<>();

  /** A task whose outcome was recorded: {@code outcome} is succeeded, failed, retry or deferred. */
  public void taskFinished(String type, String outcome) {
    tasks.computeIfAbsent(new Key(type, outcome), k -> new LongAdder()).increment();
  }

  /** How long one execution of a task of {@code type} took, whatever its outcome. */
  public void taskDuration(String type, long nanos) {
    durationNanos.computeIfAbsent(type, k -> new LongAdder()).add(nanos);
    durationCount.computeIfAbsent(type, k -> new LongAdder()).increment();
  }

  /** Bytes of a replica copy that succeeded on this node. */
  public void bytesReceived(long bytes) {
    bytesReceived.add(bytes);
  }

  public long bytesReceived() {
    return bytesReceived.sum();
  }

  /** Finished tasks by type and outcome, sorted for a stable exposition. */
  public Map<String, Map<String, Long>> tasks() {
    Map<String, Map<String, Long>> out = new TreeMap<>();
    tasks.forEach(
        (k, v) -> out.computeIfAbsent(k.type(), t -> new TreeMap<>()).put(k.outcome(), v.sum()));
    return out;
  }

  public long tasks(String type, String outcome) {
    LongAdder a = tasks.get(new Key(type, outcome));
    return a == null ? 0 : a.sum();
  }

  /** Per type: {sum of seconds, count}. */
  public Map<String, double[]> durations() {
    Map<String, double[]> out = new TreeMap<>();
    durationCount.forEach(
        (type, count) -> {
          LongAdder nanos = durationNanos.get(type);
          out.put(type, new double[] {nanos == null ? 0 : nanos.sum() / 1e9, count.sum()});
        });
    return out;
  }
}
