package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * The JSON payload of every task type: which model, and the files (with their objects) the task
 * covers. A copy task carries one file with one object; whole-model tasks carry every file.
 */
public record TaskPayload(ModelRef model, List<FilePlan> files) {

  public TaskPayload {
    files = List.copyOf(files);
  }

  public long totalBytes() {
    return files.stream().mapToLong(FilePlan::sizeBytes).sum();
  }
}
