package io.mooncake.dist.cli.manifest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.function.LongSupplier;

/**
 * SHA-256 and size of a file, streamed through one 1 MiB buffer so a 100 GiB shard costs no more
 * memory than a small one. Reports progress at most once per interval, so only files that take a
 * while (the big ones) produce progress lines.
 */
public final class FileHasher {
  private static final int BUFFER_BYTES = 1 << 20;

  /** Hears how far hashing has got. */
  @FunctionalInterface
  public interface Progress {
    void update(String label, long doneBytes, long totalBytes, long elapsedNanos);
  }

  /** A file's byte count and lower-case hex SHA-256. */
  public record Hashed(long sizeBytes, String sha256Hex) {}

  private final LongSupplier nanoClock;
  private final long reportEveryNanos;
  private final Progress progress;

  public FileHasher(LongSupplier nanoClock, Duration reportEvery, Progress progress) {
    this.nanoClock = nanoClock;
    this.reportEveryNanos = reportEvery.toNanos();
    this.progress = progress;
  }

  /**
   * Hashes {@code file}. The size is the bytes actually read, and must match the size the file had
   * when opened: a file still being written would otherwise get a manifest no copy can satisfy.
   */
  public Hashed hash(Path file, String label) throws IOException {
    MessageDigest sha256 = sha256();
    ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES);
    long start = nanoClock.getAsLong();
    long lastReport = start;
    long done = 0;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long expected = ch.size();
      int n;
      while ((n = ch.read(buffer.clear())) >= 0) {
        sha256.update(buffer.flip());
        done += n;
        long now = nanoClock.getAsLong();
        if (now - lastReport >= reportEveryNanos) {
          progress.update(label, done, expected, now - start);
          lastReport = now;
        }
      }
      if (done != expected || ch.size() != expected) {
        throw new IOException(
            label
                + " changed while it was hashed (size "
                + expected
                + " when opened, "
                + done
                + " bytes read, "
                + ch.size()
                + " now)");
      }
    }
    return new Hashed(done, HexFormat.of().formatHex(sha256.digest()));
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
