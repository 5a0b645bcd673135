package io.mooncake.dist.scheduler.domain;

import java.util.List;

/**
 * A validated create request: stage {@code manifest} on {@code targetNodes}, seeding on one.
 *
 * @param fallbackSeeds targets that take over as seed, in this order, when the seed's placement
 *     fails (an extension beside the RFC's fields); empty: a seed failure fails the job
 */
public record JobRequest(
    String jobId,
    ModelRef model,
    Manifest manifest,
    String seedNodeId,
    List<String> targetNodes,
    Integer targetReplicaCount,
    List<String> fallbackSeeds) {

  public JobRequest {
    targetNodes = List.copyOf(targetNodes);
    fallbackSeeds = fallbackSeeds == null ? List.of() : List.copyOf(fallbackSeeds);
  }

  /** A request without fallback seeds (the RFC's fields only). */
  public JobRequest(
      String jobId,
      ModelRef model,
      Manifest manifest,
      String seedNodeId,
      List<String> targetNodes,
      Integer targetReplicaCount) {
    this(jobId, model, manifest, seedNodeId, targetNodes, targetReplicaCount, List.of());
  }

  /** How nodes verify what they stage: the manifest's sha256s, or the seed's object digests. */
  public Integrity integrity() {
    return manifest.allFilesHaveSha256() ? Integrity.MANIFEST_SHA256 : Integrity.OBJECT_DIGESTS;
  }
}
