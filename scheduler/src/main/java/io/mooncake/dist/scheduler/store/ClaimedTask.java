package io.mooncake.dist.scheduler.store;

import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.scheduler.domain.TaskType;

/**
 * A task a worker now holds under its lease: attempt {@code attempt} of at most {@code
 * maxAttempts}.
 */
public record ClaimedTask(
    long taskId,
    String jobId,
    String nodeId,
    TaskType type,
    String objectId,
    TaskPayload payload,
    int attempt,
    int maxAttempts) {}
