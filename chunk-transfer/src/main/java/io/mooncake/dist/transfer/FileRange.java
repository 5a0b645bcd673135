package io.mooncake.dist.transfer;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A byte range of a local file that holds one object: the object's byte {@code i} is the file's byte
 * {@code offset + i}, for {@code 0 <= i < length}.
 *
 * @param file   the file that holds the object's bytes
 * @param offset where the object starts in the file
 * @param length the object's length in bytes
 */
public record FileRange(Path file, long offset, long length) {

    /** Rejects ranges that cannot describe bytes of a file. */
    public FileRange {
        Objects.requireNonNull(file, "file");
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("offset and length must be >= 0: offset=" + offset + " length=" + length);
        }
        if (offset + length < 0) {
            throw new IllegalArgumentException("offset + length overflows: offset=" + offset + " length=" + length);
        }
    }
}
