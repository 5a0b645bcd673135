package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An interrupted chunk resumes where it stopped: a holder dies after sending part of an object, the
 * sink says how many bytes it stored, and a range request to another holder for the rest completes
 * the object byte for byte, over real sockets.
 */
@Timeout(60)
class RangeResumeTest {
  @TempDir Path dir;

  @Test
  void aChunkBrokenOffMidwayIsCompletedByARangeRequestForTheRest() throws Exception {
    byte[] content = TestData.bytes(1 << 20, 42);
    int sentBeforeDying = 300_000;
    CountDownLatch arrived = new CountDownLatch(1);
    Path target = dir.resolve("object.copy");
    try (ChunkClient client = new ChunkClient(TestData.SECURITY);
        FileChannel out =
            FileChannel.open(
                target,
                StandardOpenOption.CREATE,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
      ByteSink first = ByteSink.positional(out, 0);
      try (FakePeer dying =
          new FakePeer(
              (socket, in, o) -> {
                RawWire.Request request = RawWire.readRequest(in);
                o.write(
                    RawWire.concat(
                        RawWire.okHeader(request.requestId(), request.length()),
                        Arrays.copyOf(content, sentBeforeDying)));
                o.flush();
                arrived.await();
                socket.setSoLinger(true, 0);
                socket.close();
              })) {
        ChunkTransferException e =
            assertThrows(
                ChunkTransferException.class,
                () ->
                    client.fetchBlocking(
                        "127.0.0.1",
                        dying.port(),
                        "obj",
                        0,
                        content.length,
                        first,
                        ObjectDigest.Algorithm.SHA256,
                        n -> {
                          if (n >= sentBeforeDying) arrived.countDown();
                        }));
        assertEquals(ChunkTransferException.Kind.SHORT_TRANSFER, e.kind(), e.toString());
        assertNull(dying.awaitScriptEnd());
      }
      long stored = first.stored();
      assertEquals(sentBeforeDying, stored, "every byte that arrived was stored");

      Path whole = TestData.file(dir, "holder.bin", content);
      try (ChunkServer healthy =
          ChunkServer.start(
              "127.0.0.1",
              0,
              id -> Optional.of(new FileRange(whole, 0, content.length)),
              TestData.SECURITY)) {
        FetchResult rest =
            client.fetchBlocking(
                "127.0.0.1",
                healthy.port(),
                "obj",
                stored,
                content.length - stored,
                ByteSink.positional(out, stored),
                ObjectDigest.Algorithm.SHA256,
                null);
        assertEquals(content.length - stored, rest.bytes());
        assertEquals(
            TestData.sha256(content, (int) stored, (int) (content.length - stored)),
            rest.sha256Hex());
      }
    }
    assertArrayEquals(content, Files.readAllBytes(target));
    assertTrue(Files.size(target) == content.length);
  }

  @Test
  void aDirectSinkCountsOnlyWhatReachedTheFile() throws Exception {
    Path file = dir.resolve("direct.bin");
    int block = 4096;
    try (FileChannel buffered =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      // The same channel stands in for the O_DIRECT one: what is counted is the writes, not the
      // flag.
      DirectFileSink sink = new DirectFileSink(buffered, buffered, 0, block);
      sink.write(
          java.nio.ByteBuffer.wrap(TestData.bytes(DirectFileSink.STAGING_BYTES + 10_000, 3)));
      assertEquals(
          DirectFileSink.STAGING_BYTES,
          sink.stored(),
          "a full staging buffer was written; the rest is staged");
      sink.finish();
      assertEquals(DirectFileSink.STAGING_BYTES + 10_000, sink.stored());
    }
  }
}
