package io.mooncake.dist.scheduler.store;

import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.domain.TaskType;

/**
 * A task a worker now holds under its lease: attempt {@code attempt} of at most {@code
 * maxAttempts}. A copy claimed by {@link TaskQueue#claimWithSources} also carries where it can come
 * from ({@code sources}, as {@link ReplicaCatalog#sources} answers) and the source the claim
 * already named in its row ({@code recordedSource}: the first source other than the seed, or null);
 * otherwise both are null.
 */
public record ClaimedTask(
    long taskId,
    String jobId,
    String nodeId,
    TaskType type,
    String objectId,
    TaskPayload payload,
    int attempt,
    int maxAttempts,
    ReplicaCatalog.CopySources sources,
    String recordedSource) {

  public ClaimedTask(
      long taskId,
      String jobId,
      String nodeId,
      TaskType type,
      String objectId,
      TaskPayload payload,
      int attempt,
      int maxAttempts) {
    this(taskId, jobId, nodeId, type, objectId, payload, attempt, maxAttempts, null, null);
  }
}
