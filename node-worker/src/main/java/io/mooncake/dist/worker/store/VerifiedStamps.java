package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.Checksums;
import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this node has hashed, and the identity of the file it hashed: device, inode, size,
 * modification and inode-change time (ctime, which no user tool can set back). A model file whose
 * stamp still matches has not been written, truncated, replaced or renamed over since its bytes
 * were checked, so seed reuse ({@code MODEL_VERIFY}) need not read it again: it would only repeat a
 * full pass over the model on the copies' CPU. Stamps live in {@code
 * <data-dir>/.mooncake/verified/}, one small file per model file, written fsynced and renamed into
 * place; a missing, unreadable or stale stamp only means the file is hashed again.
 *
 * <p>What a stamp cannot see is the disk silently corrupting bytes in place (bit rot). Those bytes
 * are still never staged anywhere: every follower checks every object against the published digest
 * and drops the holder's replica on a mismatch ({@code --full-reverify} makes the seed re-hash
 * regardless).
 */
final class VerifiedStamps {
  private static final Logger log = LoggerFactory.getLogger(VerifiedStamps.class);

  private final Path dir;

  VerifiedStamps(Path dataDir) {
    this.dir = dataDir.resolve(".mooncake").resolve("verified");
  }

  /**
   * Records that {@code file} (the final model file {@code path}) holds bytes whose objects hash to
   * {@code digests} and, when not null, whose whole-file sha256 is {@code fileSha256Hex}. Failure
   * to record is logged, never thrown: the stamp is an optimisation.
   */
  void record(Path path, FilePlan file, Map<String, String> digests, String fileSha256Hex) {
    try {
      String identity = identity(path);
      StringBuilder text = new StringBuilder();
      text.append("v1\n")
          .append(path)
          .append('\n')
          .append(identity)
          .append('\n')
          .append(fileSha256Hex == null ? "-" : fileSha256Hex)
          .append('\n');
      for (ObjectPlan o : file.objects()) {
        String d = digests.get(o.objectId());
        if (d == null) {
          return; // an object we did not hash: no stamp
        }
        text.append(o.offset())
            .append(' ')
            .append(o.length())
            .append(' ')
            .append(d)
            .append(' ')
            .append(o.objectId())
            .append('\n');
      }
      Files.createDirectories(dir, FileOps.DIR_MODE);
      Path stamp = stampOf(path);
      Path tmp = stamp.resolveSibling(stamp.getFileName() + ".tmp");
      try (FileChannel ch = FileOps.createFresh(tmp)) {
        ch.write(java.nio.ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8)));
        ch.force(true);
      }
      Files.move(tmp, stamp, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException | RuntimeException e) {
      log.warn(
          "cannot record the verified stamp of {}: {} (it will be re-hashed when reused)",
          path,
          e.toString());
    }
  }

  /**
   * Whether {@code path} is the very file this node hashed (same identity) and it then held exactly
   * the objects of {@code file} with their expected digests (and its sha256, when the manifest
   * gives one).
   */
  boolean unchangedAndMatching(Path path, FilePlan file) {
    Path stamp = stampOf(path);
    try {
      String[] lines = Files.readString(stamp, StandardCharsets.UTF_8).split("\n");
      if (lines.length < 4
          || !lines[0].equals("v1")
          || !lines[1].equals(path.toString())
          || !lines[2].equals(identity(path))) {
        return false;
      }
      String expectedSha = Checksums.sha256HexOrNull(file.sha256());
      if (expectedSha != null && !expectedSha.equals(lines[3])) {
        return false;
      }
      Map<String, String> stamped = new HashMap<>();
      for (int i = 4; i < lines.length; i++) {
        String[] f = lines[i].split(" ", 4);
        if (f.length == 4) {
          stamped.put(f[3], f[0] + " " + f[1] + " " + f[2]);
        }
      }
      for (ObjectPlan o : file.objects()) {
        String want = o.offset() + " " + o.length() + " ";
        String got = stamped.get(o.objectId());
        if (got == null
            || !got.startsWith(want)
            || !ObjectDigest.same(o.digest(), got.substring(want.length()))) {
          return false;
        }
      }
      return true;
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException | RuntimeException e) {
      log.debug("stamp {} unusable: {}", stamp, e.toString());
      return false;
    }
  }

  /** dev:ino:size:mtime_ns:ctime_ns of a regular file, links not followed. */
  static String identity(Path path) throws IOException {
    Map<String, Object> a =
        Files.readAttributes(
            path, "unix:dev,ino,size,lastModifiedTime,ctime", LinkOption.NOFOLLOW_LINKS);
    return a.get("dev")
        + ":"
        + a.get("ino")
        + ":"
        + a.get("size")
        + ":"
        + nanos(a.get("lastModifiedTime"))
        + ":"
        + nanos(a.get("ctime"));
  }

  private static long nanos(Object time) {
    return ((FileTime) Objects.requireNonNull(time)).to(TimeUnit.NANOSECONDS);
  }

  private Path stampOf(Path path) {
    return dir.resolve(
        Sha256.hex(Sha256.newDigest().digest(path.toString().getBytes(StandardCharsets.UTF_8))));
  }
}
