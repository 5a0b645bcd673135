package io.mooncake.dist.transfer;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Random;

/**
 * Deterministic test bytes and independent SHA-256 helpers, so expectations never reuse production
 * code.
 */
final class TestData {

  /** The cluster secret of the tests' servers and clients. */
  static final String SECRET = "test cluster secret: 32 bytes or more of it";

  static final ChunkSecurity SECURITY = ChunkSecurity.of(SECRET);

  static byte[] secretBytes() {
    return SECRET.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  private TestData() {}

  static byte[] bytes(int length, long seed) {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    return data;
  }

  static Path file(Path dir, String name, byte[] content) throws IOException {
    return Files.write(dir.resolve(name), content);
  }

  /**
   * Writes {@code length} seeded random bytes in 1 MiB steps so large files never sit in the heap
   * whole.
   */
  static Path largeFile(Path dir, String name, long length, long seed) throws IOException {
    Path file = dir.resolve(name);
    Random random = new Random(seed);
    byte[] block = new byte[1 << 20];
    try (var out = Files.newOutputStream(file)) {
      for (long left = length; left > 0; left -= block.length) {
        random.nextBytes(block);
        out.write(block, 0, (int) Math.min(block.length, left));
      }
    }
    return file;
  }

  static String sha256(byte[] data) {
    return HexFormat.of().formatHex(digest().digest(data));
  }

  static String sha256(byte[] data, int offset, int length) {
    MessageDigest md = digest();
    md.update(data, offset, length);
    return HexFormat.of().formatHex(md.digest());
  }

  static String sha256(Path file) throws IOException {
    MessageDigest md = digest();
    byte[] block = new byte[1 << 20];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(block)) > 0; ) {
        md.update(block, 0, n);
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
