package io.mooncake.dist.scheduler.domain;

import java.util.List;

/** A validated create request: stage {@code manifest} on {@code targetNodes}, seeding on one. */
public record JobRequest(
    String jobId,
    ModelRef model,
    Manifest manifest,
    String seedNodeId,
    List<String> targetNodes,
    Integer targetReplicaCount) {

  public JobRequest {
    targetNodes = List.copyOf(targetNodes);
  }

  /** How nodes verify what they stage: the manifest's sha256s, or the seed's object digests. */
  public Integrity integrity() {
    return manifest.allFilesHaveSha256() ? Integrity.MANIFEST_SHA256 : Integrity.OBJECT_DIGESTS;
  }
}
