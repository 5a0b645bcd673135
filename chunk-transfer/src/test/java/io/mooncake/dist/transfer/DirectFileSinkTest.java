package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectFileSinkTest {
  @TempDir Path tmp;

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private FileChannel openDirect(Path file) throws IOException {
    return FileChannel.open(file, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
  }

  private static int blockSize(Path file) throws IOException {
    return (int) Files.getFileStore(file).getBlockSize();
  }

  @Test
  void anAlignedRangeWithAnUnalignedTailLandsByteForByteInPieces() throws IOException {
    Path file = tmp.resolve("f.bin");
    int size = 9 * 1024 * 1024 + 123;
    byte[] data = random(size, 1);
    try (FileChannel c =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(new byte[1]), size + 8192L); // pre-size larger, as a model file is
    }
    int block = blockSize(file);
    long start = 8192;
    try (FileChannel direct = openDirect(file);
        FileChannel buffered = FileChannel.open(file, StandardOpenOption.WRITE)) {
      DirectFileSink sink = new DirectFileSink(direct, buffered, start, block);
      Random r = new Random(2);
      int pos = 0;
      while (pos < size - start) {
        int n = Math.min((int) (size - start) - pos, 1 + r.nextInt(300_000));
        sink.write(ByteBuffer.wrap(data, pos, n));
        pos += n;
      }
      sink.finish();
    }
    byte[] onDisk = Files.readAllBytes(file);
    byte[] expected = java.util.Arrays.copyOfRange(data, 0, (int) (size - start));
    assertArrayEquals(expected, java.util.Arrays.copyOfRange(onDisk, (int) start, size));
  }

  @Test
  void aSinkThatGetsNoByteWritesNothingAndRefusesBytesOnceClosed() throws IOException {
    Path file = Files.createFile(tmp.resolve("empty.bin"));
    int block = blockSize(file);
    try (FileChannel direct = openDirect(file);
        FileChannel buffered = FileChannel.open(file, StandardOpenOption.WRITE)) {
      int[] asked = {0};
      DirectFileSink sink =
          new DirectFileSink(
              () -> {
                asked[0]++;
                return direct;
              },
              buffered,
              0,
              block);
      sink.write(ByteBuffer.allocate(0));
      sink.finish();
      assertEquals(0, sink.stored());
      assertEquals(0, asked[0], "no byte, no direct channel: it may be opened at the first write");
      assertEquals(0, Files.size(file));
      assertThrows(IllegalStateException.class, () -> sink.write(ByteBuffer.wrap(new byte[] {1})));
      DirectFileSink aborted = new DirectFileSink(direct, buffered, 0, block);
      aborted.abort();
      assertThrows(
          IllegalStateException.class, () -> aborted.write(ByteBuffer.wrap(new byte[] {1})));
    }
  }

  @Test
  void anUnalignedStartIsRefused() throws IOException {
    Path file = Files.createFile(tmp.resolve("g.bin"));
    try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
      assertThrows(IllegalArgumentException.class, () -> new DirectFileSink(c, c, 100, 4096));
    }
    assertTrue(DirectFileSink.aligned(64L << 20, 4096));
    assertTrue(!DirectFileSink.aligned(262_145, 4096));
  }

  @Test
  void aFetchThroughADirectSinkMatchesTheSourceAndItsDigest() throws Exception {
    Path src = tmp.resolve("src.bin");
    byte[] data = random(20 * 1024 * 1024 + 77, 3);
    Files.write(src, data);
    Path dst = tmp.resolve("dst.bin");
    try (FileChannel c =
        FileChannel.open(dst, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(new byte[1]), data.length - 1L);
    }
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id -> Optional.of(new FileRange(src, 0, data.length)),
                TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY);
        FileChannel direct = openDirect(dst);
        FileChannel buffered = FileChannel.open(dst, StandardOpenOption.WRITE)) {
      FetchResult r =
          client.fetchBlocking(
              "127.0.0.1",
              server.port(),
              "obj",
              0,
              data.length,
              new DirectFileSink(direct, buffered, 0, blockSize(dst)),
              ObjectDigest.Algorithm.CRC32C_CRC32,
              null);
      assertEquals(data.length, r.bytes());
      ObjectDigest expected = ObjectDigest.start(ObjectDigest.Algorithm.CRC32C_CRC32);
      expected.update(data, 0, data.length);
      assertEquals(expected.finish(), r.digest());
    }
    assertArrayEquals(data, Files.readAllBytes(dst));
  }

  /**
   * What is in the file is what a node relays while the object arrives: a slow stream reaches the
   * file every {@code MIN_FLUSH_BYTES} once {@code FLUSH_AFTER_NANOS} have passed, a fast one in
   * whole staging buffers. The clock is a counter the test moves, not the wall clock.
   */
  @Test
  void aSlowStreamReachesTheFileInSmallStepsAFastOneInWholeBuffers() throws IOException {
    Path file = tmp.resolve("steps.bin");
    int block = 4096;
    long[] now = {0};
    try (FileChannel c =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      // The same channel stands in for the O_DIRECT one: what is counted is the writes.
      DirectFileSink sink = new DirectFileSink(() -> c, c, 0, block, () -> now[0]);
      byte[] piece = random(100_000, 3);
      sink.write(ByteBuffer.wrap(piece));
      sink.write(ByteBuffer.wrap(piece));
      sink.write(ByteBuffer.wrap(piece));
      assertEquals(0, sink.stored(), "300,000 bytes at once stay staged: no time has passed");
      now[0] += DirectFileSink.FLUSH_AFTER_NANOS - 1;
      sink.write(ByteBuffer.wrap(piece, 0, 10));
      assertEquals(0, sink.stored(), "not yet: the interval has not passed");
      now[0] += 1;
      sink.write(ByteBuffer.wrap(piece, 0, 10));
      assertEquals(300_020 & -block, sink.stored(), "the aligned part of what was staged");
      now[0] += DirectFileSink.FLUSH_AFTER_NANOS;
      sink.write(ByteBuffer.wrap(piece, 0, 1000));
      assertEquals(300_020 & -block, sink.stored(), "under MIN_FLUSH_BYTES staged: still waiting");
      // A fast stream: the clock stands still, so only full buffers are written.
      sink.write(ByteBuffer.wrap(random(2 * DirectFileSink.STAGING_BYTES, 4)));
      long written = sink.stored() - (300_020 & -block);
      assertEquals(0, written % DirectFileSink.STAGING_BYTES, "whole buffers only: " + written);
      assertTrue(written > 0);
      sink.finish();
      assertEquals(300_020 + 1000 + 2L * DirectFileSink.STAGING_BYTES, sink.stored());
    }
  }
}
