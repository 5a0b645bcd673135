package io.mooncake.dist.worker.store;

import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Striped locks keyed by a model file's final path. They serialize the short decisions that must
 * not interleave for one file (create-and-size the partial, rename it to final, delete it), so two
 * copy tasks for objects of the same file never truncate each other. Striped rather than one lock
 * per path so memory stays bounded however many files a node sees; the lock is static because
 * several {@link ModelStore} instances may point at the same data directory. A {@link
 * ReentrantLock} rather than {@code synchronized} keeps virtual threads unpinned on Java 21.
 */
final class PathLocks {
  private static final ReentrantLock[] STRIPES = new ReentrantLock[64];

  static {
    for (int i = 0; i < STRIPES.length; i++) {
      STRIPES[i] = new ReentrantLock();
    }
  }

  private PathLocks() {}

  static ReentrantLock forFile(Path finalPath) {
    return STRIPES[
        Math.floorMod(finalPath.toAbsolutePath().normalize().hashCode(), STRIPES.length)];
  }
}
