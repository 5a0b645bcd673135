package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * The JSON payload of every task type: which model, and the files (with their objects) the task
 * covers. A copy task carries one file with one object; whole-model tasks carry every file. A
 * download also carries the source rules its job was admitted under ({@code sources}; null in other
 * tasks and in downloads enqueued before rules were stored).
 *
 * <p>{@code held}: only in the download of a seed that took over from a failed one (seed failover):
 * the objects live nodes already hold, which this download leaves alone; the new seed copies them
 * from those nodes like a follower and reads only the other objects from the source. Null in every
 * other payload, where a download reads and commits every file whole.
 */
public record TaskPayload(
    ModelRef model, List<FilePlan> files, SourceRules sources, List<String> held) {

  public TaskPayload {
    files = List.copyOf(files);
    held = held == null ? null : List.copyOf(held);
  }

  /** A payload without source rules (every task but a download). */
  public TaskPayload(ModelRef model, List<FilePlan> files) {
    this(model, files, null, null);
  }

  /** A payload with source rules and no held objects. */
  public TaskPayload(ModelRef model, List<FilePlan> files, SourceRules sources) {
    this(model, files, sources, null);
  }

  /** This download, leaving {@code heldObjects} alone (seed failover). */
  public TaskPayload holding(java.util.Collection<String> heldObjects) {
    return new TaskPayload(model, files, sources, List.copyOf(heldObjects));
  }

  /** Whether this is a failover seed's download, which reads only objects not {@code held}. */
  public boolean fillsIn() {
    return held != null;
  }

  /** Bytes this task reads or writes: every object's, less the held ones'. */
  public long bytesToFetch() {
    if (held == null) {
      return totalBytes();
    }
    java.util.Set<String> skip = java.util.Set.copyOf(held);
    return files.stream()
        .flatMap(f -> f.objects().stream())
        .filter(o -> !skip.contains(o.objectId()))
        .mapToLong(ObjectPlan::length)
        .sum();
  }

  /** The rules a download must follow: those of its job, or any source for an older task. */
  public SourceRules sourcesOrAny() {
    return sources == null ? SourceRules.ANY : sources;
  }

  public long totalBytes() {
    return files.stream().mapToLong(FilePlan::sizeBytes).sum();
  }
}
