package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ObjectDigest.Algorithm;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ObjectDigestTest {

  private static String digest(Algorithm a, byte[] bytes) {
    ObjectDigest d = ObjectDigest.start(a);
    d.update(bytes, 0, bytes.length);
    return d.finish();
  }

  @Test
  void knownValues() {
    byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
    // The standard check values: CRC-32C("123456789") = e3069283, CRC-32 = cbf43926.
    assertEquals("crc32c-crc32:e3069283cbf43926", digest(Algorithm.CRC32C_CRC32, check));
    assertEquals(
        "sha256:15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
        digest(Algorithm.SHA256, check));
    assertEquals("crc32c-crc32:0000000000000000", digest(Algorithm.CRC32C_CRC32, new byte[0]));
  }

  @Test
  void piecesDirectBuffersAndArraysAgree() {
    byte[] data = new byte[1 << 20];
    new Random(7).nextBytes(data);
    for (Algorithm a : Algorithm.values()) {
      ObjectDigest pieces = ObjectDigest.start(a);
      ByteBuffer direct = ByteBuffer.allocateDirect(data.length).put(data).flip();
      for (int at = 0; at < data.length; at += 65_537) {
        ByteBuffer piece =
            direct.duplicate().position(at).limit(Math.min(data.length, at + 65_537));
        pieces.update(piece);
        assertEquals(at, piece.position(), "update leaves the buffer's position alone");
      }
      assertEquals(digest(a, data), pieces.finish(), a.label());
      assertEquals(digest(a, new byte[0]), pieces.finish(), "finish starts over");
    }
  }

  @Test
  void everySingleBitFlipAndTruncationIsCaught() {
    byte[] data = new byte[4096];
    new Random(11).nextBytes(data);
    String good = digest(Algorithm.CRC32C_CRC32, data);
    for (int bit = 0; bit < data.length * 8; bit++) {
      data[bit / 8] ^= (byte) (1 << (bit % 8));
      assertNotEquals(good, digest(Algorithm.CRC32C_CRC32, data), "bit " + bit);
      data[bit / 8] ^= (byte) (1 << (bit % 8));
    }
    byte[] shorter = java.util.Arrays.copyOf(data, data.length - 1);
    assertNotEquals(good, digest(Algorithm.CRC32C_CRC32, shorter));
  }

  @Test
  void parsesWhatItWritesAndNamesWhatItRejects() {
    assertEquals(Algorithm.CRC32C_CRC32, Algorithm.of("crc32c-crc32:e3069283cbf43926"));
    assertEquals(Algorithm.SHA256, Algorithm.of("SHA256:" + "A".repeat(64)));
    assertEquals(Algorithm.SHA256, Algorithm.ofLabel("sha256"));
    IllegalArgumentException unknown =
        assertThrows(IllegalArgumentException.class, () -> Algorithm.ofLabel("md5"));
    assertTrue(
        unknown.getMessage().contains("md5") && unknown.getMessage().contains("crc32c-crc32"),
        unknown.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Algorithm.of("e3069283cbf43926"));
    assertThrows(IllegalArgumentException.class, () -> Algorithm.of("crc32c-crc32:e3069283"));
    assertThrows(IllegalArgumentException.class, () -> Algorithm.of("sha256:" + "g".repeat(64)));
    assertThrows(IllegalArgumentException.class, () -> Algorithm.of(null));
  }

  @Test
  void sameIgnoresHexCaseButNotTheAlgorithm() {
    assertTrue(ObjectDigest.same("crc32c-crc32:E3069283CBF43926", "crc32c-crc32:e3069283cbf43926"));
    assertFalse(ObjectDigest.same("crc32c-crc32:e3069283cbf43926", "sha256:e3069283cbf43926"));
    assertFalse(ObjectDigest.same(null, "sha256:00"));
  }
}
