package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The objects an interrupted download keeps, proven again: the partial file, opened without
 * following links and only when it is a regular file of the manifest size, has each object the
 * journal lists hashed again and compared with the digest recorded when it was read from the
 * source. The longest run from byte 0 that matches is kept; the hasher comes back fed with exactly
 * those bytes, so the objects after them and the whole-file sha256 continue from there. A resume
 * reads the kept bytes once from the local disk instead of again from the network.
 */
final class KeptPrefix {
  private static final Logger log = LoggerFactory.getLogger(KeptPrefix.class);

  /** The partial file (open read-write), the hasher fed up to {@code end}, and the kept lines. */
  record Kept(FileChannel channel, RangeHasher hasher, List<DownloadJournal.Line> lines) {
    long end() {
      DownloadJournal.Line last = lines.get(lines.size() - 1);
      return last.offset() + last.length();
    }
  }

  private KeptPrefix() {}

  /**
   * @return the kept prefix, or null when nothing can be kept (no usable partial file, or its first
   *     object no longer matches); the caller then writes the file afresh
   */
  static Kept check(
      Path partial,
      long size,
      List<ObjectPlan> inByteOrder,
      List<DownloadJournal.Line> candidates,
      boolean wholeFile,
      ObjectDigest.Algorithm algorithm) {
    FileChannel ch = null;
    try {
      BasicFileAttributes a =
          Files.readAttributes(partial, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!a.isRegularFile()) {
        log.warn("{} is not a regular file; not resuming from it", partial);
        return null;
      }
      ch =
          FileChannel.open(
              partial,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE,
              LinkOption.NOFOLLOW_LINKS);
      if (ch.size() != size) {
        log.info("{} has {} bytes, not {}; not resuming from it", partial, ch.size(), size);
        ch.close();
        return null;
      }
      RangeHasher hasher = new RangeHasher(inByteOrder, wholeFile, algorithm);
      for (int i = 0; i < candidates.size(); i++) {
        DownloadJournal.Line l = candidates.get(i);
        ObjectPlan o = inByteOrder.get(i);
        hasher.feed(ch, o.offset(), o.offset() + o.length());
        hasher.completedObjects(); // closes the object, zero-length ones included
        String got = hasher.digestOf(o);
        if (!ObjectDigest.same(l.digest(), got)) {
          log.warn(
              "object {} of {} (bytes {}..{}) no longer hashes to {} (found {}); keeping the {}"
                  + " object(s) before it",
              o.objectId(),
              partial,
              o.offset(),
              o.offset() + o.length(),
              l.digest(),
              got,
              i);
          if (i == 0) {
            ch.close();
            return null;
          }
          // The hasher has taken the bad object's bytes: feed a fresh one the good prefix alone.
          RangeHasher fresh = new RangeHasher(inByteOrder, wholeFile, algorithm);
          fresh.feed(ch, 0, o.offset());
          return new Kept(ch, fresh, List.copyOf(candidates.subList(0, i)));
        }
      }
      return new Kept(ch, hasher, candidates);
    } catch (IOException e) {
      log.warn("cannot re-check {}: {}; downloading it from the start", partial, e.toString());
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException ignored) {
          // already failing over to a fresh file
        }
      }
      return null;
    }
  }
}
