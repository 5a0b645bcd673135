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
 */
public record JobFacts(
    JobStatus status,
    String seedNodeId,
    int objectCount,
    boolean seedHoldsAllObjects,
    List<NodeFacts> nodes,
    int releasedObjects) {
  public JobFacts {
    nodes = List.copyOf(nodes);
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
