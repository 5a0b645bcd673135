package io.mooncake.dist.transfer;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A byte range of a local file that holds one object: the object's byte {@code i} is the file's
 * byte {@code offset + i}, for {@code 0 <= i < length}.
 *
 * @param file the file that holds the object's bytes
 * @param offset where the object starts in the file
 * @param length the object's length in bytes
 * @param arrival null when the whole object is in the file; otherwise the object is still being
 *     received into it, and only bytes below the arrival's watermark may be sent (cut-through)
 */
public record FileRange(Path file, long offset, long length, Arrival arrival) {

  /** A range that holds the whole object. */
  public FileRange(Path file, long offset, long length) {
    this(file, offset, length, null);
  }

  /** Rejects ranges that cannot describe bytes of a file. */
  public FileRange {
    Objects.requireNonNull(file, "file");
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "offset and length must be >= 0: offset=" + offset + " length=" + length);
    }
    if (offset + length < 0) {
      throw new IllegalArgumentException(
          "offset + length overflows: offset=" + offset + " length=" + length);
    }
    if (arrival != null && arrival.length() != length) {
      throw new IllegalArgumentException(
          "arrival of " + arrival.length() + " bytes for an object of " + length);
    }
  }
}
