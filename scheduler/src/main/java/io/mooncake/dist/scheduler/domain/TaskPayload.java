package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * The JSON payload of every task type: which model, and the files (with their objects) the task
 * covers. A copy task carries one file with one object; whole-model tasks carry every file. A
 * download also carries the source rules its job was admitted under ({@code sources}; null in other
 * tasks and in downloads enqueued before rules were stored).
 */
public record TaskPayload(ModelRef model, List<FilePlan> files, SourceRules sources) {

  public TaskPayload {
    files = List.copyOf(files);
  }

  /** A payload without source rules (every task but a download). */
  public TaskPayload(ModelRef model, List<FilePlan> files) {
    this(model, files, null);
  }

  /** The rules a download must follow: those of its job, or any source for an older task. */
  public SourceRules sourcesOrAny() {
    return sources == null ? SourceRules.ANY : sources;
  }

  public long totalBytes() {
    return files.stream().mapToLong(FilePlan::sizeBytes).sum();
  }
}
