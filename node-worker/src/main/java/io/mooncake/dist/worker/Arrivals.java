package io.mooncake.dist.worker;

import io.mooncake.dist.transfer.Arrival;
import io.mooncake.dist.transfer.FileRange;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The objects this node is receiving right now, so its chunk server can relay each one while it
 * arrives (cut-through): a copy registers its object before it names its source in its task row
 * (which is what makes it a source for other followers, see {@code ReplicaCatalog.sources}), and
 * the entry stays until the copy's outcome is recorded, when the published replica takes over. In
 * memory only: after a restart the rows are rescued and the objects fetched again.
 */
final class Arrivals {
  private final ConcurrentHashMap<String, FileRange> receiving = new ConcurrentHashMap<>();

  /**
   * One fetch of {@code objectId} into {@code file} begins; {@code landed} bytes of it are there
   * already (a resumed fetch).
   */
  FileRange begin(String objectId, Path file, long offset, long length, long landed) {
    FileRange range = new FileRange(file, offset, length, new Arrival(length, landed));
    receiving.put(objectId, range);
    return range;
  }

  /** The fetch verified the whole object: readers finish from the file. */
  void verified(FileRange range) {
    range.arrival().finish();
  }

  /** The fetch ended without a verified object: readers drop what they took. */
  void failed(String objectId, FileRange range) {
    range.arrival().fail();
    receiving.remove(objectId, range);
  }

  /** The copy's outcome is recorded: its replica row (if any) answers from now on. */
  void settled(String objectId) {
    receiving.computeIfPresent(
        objectId,
        (id, range) -> range.arrival().complete() || range.arrival().failed() ? null : range);
  }

  /** The object's range while it arrives here. */
  Optional<FileRange> find(String objectId) {
    return Optional.ofNullable(receiving.get(objectId));
  }
}
