package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * One model file as a task sees it. {@code sha256} is the manifest's enforceable digest or {@code
 * null}; {@code downloadUrl} is set only in a {@code MODEL_DOWNLOAD} payload.
 */
public record FilePlan(
    int fileIndex,
    String path,
    long sizeBytes,
    String sha256,
    String downloadUrl,
    List<ObjectPlan> objects) {

  public FilePlan {
    objects = List.copyOf(objects);
  }
}
