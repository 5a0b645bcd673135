package io.mooncake.dist.demo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * The model file the demo distributes: random bytes (so no chunk compresses or deduplicates into a
 * misleadingly good result) and their SHA-256, which goes into the manifest so both nodes verify
 * what they stage.
 */
record SourceModel(Path file, long sizeBytes, String sha256Hex) {
  private static final int BUFFER = 1 << 20;

  /**
   * Writes {@code sizeBytes} random bytes to {@code file}, hashing as it goes: one pass, bounded
   * memory.
   */
  static SourceModel generate(Path file, long sizeBytes) throws IOException {
    Files.createDirectories(file.getParent());
    MessageDigest sha256 = sha256();
    SplittableRandom random = new SplittableRandom();
    byte[] buf = new byte[BUFFER];
    try (FileChannel out =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (long left = sizeBytes; left > 0; ) {
        int n = (int) Math.min(buf.length, left);
        random.nextBytes(buf);
        sha256.update(buf, 0, n);
        ByteBuffer bytes = ByteBuffer.wrap(buf, 0, n);
        while (bytes.hasRemaining()) {
          out.write(bytes);
        }
        left -= n;
      }
      // On disk before the job starts (this runs while the master starts, off the job's clock):
      // otherwise the kernel writes these dirty pages back during the job, on the disk the seed
      // and the follower are writing to, and the job is timed with the demo's own I/O in it.
      out.force(false);
    }
    return new SourceModel(file, sizeBytes, HexFormat.of().formatHex(sha256.digest()));
  }

  /** The manifest's checksum form. */
  String checksum() {
    return "sha256:" + sha256Hex;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }
}
