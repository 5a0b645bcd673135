package io.mooncake.dist.scheduler.domain;

/**
 * What a node is asked to do.
 *
 * <ul>
 *   <li>{@code MODEL_DOWNLOAD}: the seed reads the source, cuts it into objects, materializes the
 *       files and publishes the objects.
 *   <li>{@code MODEL_VERIFY}: seed reuse; the seed re-hashes the objects it already holds.
 *   <li>{@code REPLICA_COPY}: a follower pulls one object from a holder, verified by digest.
 *   <li>{@code MATERIALIZE}: a follower holding every object checks and publishes the files.
 * </ul>
 */
public enum TaskType {
  MODEL_DOWNLOAD,
  MODEL_VERIFY,
  REPLICA_COPY,
  MATERIALIZE
}
