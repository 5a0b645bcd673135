package io.mooncake.dist.transfer;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a request into either an open file position to send from or an error response, so the
 * handler never sends a header it cannot back with bytes.
 */
final class SourceResolver {

  private static final Logger log = LoggerFactory.getLogger(SourceResolver.class);

  /** What to do with one request. */
  sealed interface Outcome {}

  /**
   * Send {@code length} bytes of {@code file} from {@code position}; the receiver owns {@code
   * file}.
   */
  record Send(FileChannel file, long position, long length) implements Outcome {}

  /**
   * Send {@code length} bytes of {@code file} from {@code position} as they land: the request
   * starts at byte {@code objectOffset} of an object still arriving; the receiver owns {@code
   * file}.
   */
  record Stream(FileChannel file, long position, long length, long objectOffset, Arrival arrival)
      implements Outcome {}

  /** Answer with an error frame. */
  record Reject(Status status, String message) implements Outcome {}

  private final ObjectLocator locator;
  private final ObjectReaders readers;

  SourceResolver(ObjectLocator locator, ObjectReaders readers) {
    this.locator = locator;
    this.readers = readers;
  }

  /** The readers of each object being sent right now, and how many one object may have. */
  ObjectReaders readers() {
    return readers;
  }

  Outcome resolve(ChunkRequest request) {
    String id = request.objectId();
    Optional<FileRange> found;
    try {
      found = locator.locate(id);
    } catch (IOException | RuntimeException e) {
      // A broken lookup fails this request only; the connection and server stay up.
      log.warn("locating object {} failed", id, e);
      return new Reject(Status.SOURCE_ERROR, "cannot locate object " + id + ": " + e);
    }
    if (found == null || found.isEmpty()) {
      return new Reject(Status.NOT_FOUND, "object not here: " + id);
    }
    FileRange range = found.get();
    long offset = request.offset();
    long length = request.length();
    // Written so that huge unsigned values (negative here) and offset+length overflow are caught.
    if (offset < 0 || length < 0 || length > range.length() || offset > range.length() - length) {
      return new Reject(
          Status.RANGE_OUT_OF_BOUNDS,
          "range out of bounds: offset+length > object length"
              + " (offset "
              + Long.toUnsignedString(offset)
              + ", length "
              + Long.toUnsignedString(length)
              + ", object "
              + id
              + " has "
              + range.length()
              + " bytes)");
    }
    return open(id, range, offset, length);
  }

  private Outcome open(String id, FileRange range, long offset, long length) {
    FileChannel file = null;
    try {
      // The locator hands out real paths; a link put in their place since is not followed.
      file =
          FileChannel.open(
              range.file(), StandardOpenOption.READ, java.nio.file.LinkOption.NOFOLLOW_LINKS);
      if (range.arrival() != null) {
        // Still arriving: the file grows as the bytes land, so its size proves nothing yet.
        if (range.arrival().failed()) {
          file.close();
          return new Reject(
              Status.NOT_FOUND, "object not here: " + id + " (its receive here just failed)");
        }
        return new Stream(file, range.offset() + offset, length, offset, range.arrival());
      }
      long needed = range.offset() + range.length();
      long size = file.size();
      if (size < needed) {
        // The locator's promise is wrong; sending would stall or short the peer mid-payload.
        file.close();
        log.warn(
            "object {} claims bytes up to {} of {} but the file has only {}",
            id,
            needed,
            range.file(),
            size);
        return new Reject(
            Status.SOURCE_ERROR,
            "cannot read object file: "
                + range.file()
                + " has "
                + size
                + " bytes but object "
                + id
                + " needs "
                + needed);
      }
      return new Send(file, range.offset() + offset, length);
    } catch (IOException | RuntimeException e) {
      closeQuietly(file);
      log.warn("cannot read file {} of object {}", range.file(), id, e);
      return new Reject(Status.SOURCE_ERROR, "cannot read object file: " + range.file() + ": " + e);
    }
  }

  static void discard(Outcome outcome) {
    if (outcome instanceof Send send) {
      closeQuietly(send.file());
    } else if (outcome instanceof Stream stream) {
      closeQuietly(stream.file());
    }
  }

  static void closeQuietly(FileChannel file) {
    if (file == null) {
      return;
    }
    try {
      file.close();
    } catch (IOException e) {
      log.debug("closing {} failed", file, e);
    }
  }
}
