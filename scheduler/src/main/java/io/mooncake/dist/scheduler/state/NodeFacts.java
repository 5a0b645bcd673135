package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.TaskType;
import java.util.Map;

/** What the database says about one target node of a job: its task counts by type. */
public record NodeFacts(String nodeId, boolean seed, Map<TaskType, TaskCounts> tasks) {
  public NodeFacts {
    tasks = Map.copyOf(tasks);
  }

  public TaskCounts counts(TaskType type) {
    return tasks.getOrDefault(type, TaskCounts.NONE);
  }
}
