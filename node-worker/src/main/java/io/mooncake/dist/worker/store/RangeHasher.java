package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Hashes one file in a single sequential pass: the whole-file SHA-256 and, cut at object
 * boundaries, each object's {@link ObjectDigest}. Bytes are fed in whatever pieces the reader
 * produces; a piece that straddles an object boundary is split here, so buffer size and chunk size
 * are independent. Not thread-safe: one pass, one thread.
 */
final class RangeHasher {
  private final List<ObjectPlan> objects;

  /**
   * Null when nobody needs the whole-file digest: hashing every byte twice would halve throughput.
   */
  private final MessageDigest fileDigest;

  private final ObjectDigest objectDigest;
  private final Map<String, String> digests = new HashMap<>();
  private int current;
  private long remaining;

  /**
   * @param objectsInByteOrder as returned by {@link ObjectLayout#inByteOrder}
   */
  RangeHasher(List<ObjectPlan> objectsInByteOrder) {
    this(objectsInByteOrder, true, ObjectDigest.Algorithm.CRC32C_CRC32);
  }

  /**
   * @param objectsInByteOrder as returned by {@link ObjectLayout#inByteOrder}
   * @param wholeFile also compute the whole-file SHA-256 ({@link #fileSha256Hex})
   * @param objectAlgorithm what each object's digest is computed with
   */
  RangeHasher(
      List<ObjectPlan> objectsInByteOrder,
      boolean wholeFile,
      ObjectDigest.Algorithm objectAlgorithm) {
    this.objectDigest = ObjectDigest.start(objectAlgorithm);
    this.fileDigest = wholeFile ? Sha256.newDigest() : null;
    this.objects = objectsInByteOrder;
    this.remaining = objects.isEmpty() ? 0 : objects.get(0).length();
  }

  void update(byte[] bytes, int off, int len) {
    if (fileDigest != null) {
      fileDigest.update(bytes, off, len);
    }
    while (len > 0) {
      closeCompleted();
      if (current >= objects.size()) {
        // The callers bound their reads by size_bytes, which ObjectLayout tied to the objects.
        throw new IllegalStateException("more bytes than the objects cover");
      }
      int take = (int) Math.min(len, remaining);
      objectDigest.update(bytes, off, take);
      off += take;
      len -= take;
      remaining -= take;
    }
    closeCompleted();
  }

  /**
   * Feeds bytes {@code [0, size)} of {@code channel} through a bounded buffer with positional
   * reads.
   *
   * @throws IOException when reading fails or the file is shorter than {@code size}
   */
  void feed(FileChannel channel, long size) throws IOException {
    feed(channel, 0, size);
  }

  /**
   * Feeds bytes {@code [from, to)} of {@code channel}: the next bytes of the file after the {@code
   * from} already fed.
   *
   * @throws IOException when reading fails or the file is shorter than {@code to}
   */
  void feed(FileChannel channel, long from, long to) throws IOException {
    ByteBuffer buf =
        ByteBuffer.allocate((int) Math.min(Sha256.BUFFER_BYTES, Math.max(to - from, 1)));
    long pos = from;
    long size = to;
    while (pos < size) {
      buf.clear().limit((int) Math.min(buf.capacity(), size - pos));
      int n = channel.read(buf, pos);
      if (n < 0) {
        throw new IOException("file ended at byte " + pos + ", expected " + size + " bytes");
      }
      update(buf.array(), 0, n);
      pos += n;
    }
  }

  /** Object id to {@code "<algorithm>:<hex>"}; call once every byte has been fed. */
  Map<String, String> objectDigests() {
    closeCompleted();
    if (current < objects.size()) {
      throw new IllegalStateException(
          "object " + objects.get(current).objectId() + " is incomplete");
    }
    return digests;
  }

  /** Lower-case hex SHA-256 of every byte fed; call once, at the end. */
  String fileSha256Hex() {
    if (fileDigest == null) {
      throw new IllegalStateException("whole-file digest was not requested");
    }
    return Sha256.hex(fileDigest.digest());
  }

  /** How many objects (in byte order) have had every byte fed. */
  int completedObjects() {
    closeCompleted();
    return current;
  }

  /** The digest of a completed object. */
  String digestOf(ObjectPlan object) {
    return digests.get(object.objectId());
  }

  /** Finishes every object whose last byte has been fed, including zero-length ones. */
  private void closeCompleted() {
    while (current < objects.size() && remaining == 0) {
      digests.put(objects.get(current).objectId(), objectDigest.finish());
      current++;
      if (current < objects.size()) {
        remaining = objects.get(current).length();
      }
    }
  }
}
