package io.mooncake.dist.scheduler.state;

import io.mooncake.dist.scheduler.domain.JobStatus;
import java.util.List;

/**
 * The input of one evaluation.
 *
 * @param status the status last persisted
 * @param objectCount objects in the manifest
 * @param seedHoldsAllObjects the seed has a published replica of every object with the right size
 *     (consulted only before any seed task exists)
 * @param nodes one entry per target node, the seed among them
 * @param releasedObjects objects whose copies exist already (released to the followers)
 * @param fallbackSeeds the fallback seeds the request named, in order (seed failover; empty: a seed
 *     failure fails the job)
 * @param formerSeeds the seeds replaced so far by a fallback seed, oldest first; the current seed
 *     is a former follower when this is not empty
 */
public record JobFacts(
    JobStatus status,
    String seedNodeId,
    int objectCount,
    boolean seedHoldsAllObjects,
    List<NodeFacts> nodes,
    int releasedObjects,
    List<String> fallbackSeeds,
    List<String> formerSeeds) {
  public JobFacts {
    nodes = List.copyOf(nodes);
    fallbackSeeds = List.copyOf(fallbackSeeds);
    formerSeeds = List.copyOf(formerSeeds);
  }

  /** Facts of a job without fallback seeds. */
  public JobFacts(
      JobStatus status,
      String seedNodeId,
      int objectCount,
      boolean seedHoldsAllObjects,
      List<NodeFacts> nodes,
      int releasedObjects) {
    this(
        status,
        seedNodeId,
        objectCount,
        seedHoldsAllObjects,
        nodes,
        releasedObjects,
        List.of(),
        List.of());
  }

  /** Whether the current seed took over from a failed one. */
  public boolean seedTookOver() {
    return !formerSeeds.isEmpty();
  }

  /** Facts of a job none of whose objects has been released yet. */
  public JobFacts(
      JobStatus status,
      String seedNodeId,
      int objectCount,
      boolean seedHoldsAllObjects,
      List<NodeFacts> nodes) {
    this(status, seedNodeId, objectCount, seedHoldsAllObjects, nodes, 0);
  }
}
