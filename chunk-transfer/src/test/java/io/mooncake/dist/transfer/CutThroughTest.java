package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Cut-through relaying over real sockets: a node serves an object it is still receiving, as far as
 * it has landed, and the reader ends up with exactly the object's bytes; a receive that fails cuts
 * the reader off instead of handing it bytes nobody will vouch for.
 */
@Timeout(60)
class CutThroughTest {
  private static final int LENGTH = 3 * 1024 * 1024 + 1234;

  /** Where the object sits in its file: not at the start, as for any object but a file's first. */
  private static final long OFFSET = 1 << 20;

  @TempDir Path dir;

  /** The receiving side: the object's file, written piece by piece, and its arrival. */
  private final class Receiving implements AutoCloseable {
    final byte[] content;
    final Arrival arrival = new Arrival(LENGTH, 0);
    final Path file;
    final FileChannel out;
    final ByteSink sink;
    long written;

    Receiving(long seed) throws Exception {
      content = TestData.bytes(LENGTH, seed);
      file = dir.resolve("partial-" + seed);
      out =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
      // Sized up front like a store's partial file: the bytes beyond the landed ones are a hole.
      out.write(ByteBuffer.wrap(new byte[1]), OFFSET + LENGTH + 4096);
      sink = arrival.tracking(ByteSink.positional(out, OFFSET), 0);
    }

    void land(int n) throws Exception {
      sink.write(ByteBuffer.wrap(content, (int) written, n));
      written += n;
    }

    FileRange range() {
      return new FileRange(file, OFFSET, LENGTH, arrival);
    }

    @Override
    public void close() throws Exception {
      out.close();
    }
  }

  private static void awaitAtLeast(AtomicLong value, long n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (value.get() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("stuck at " + value.get() + " of " + n);
      }
      Thread.sleep(5);
    }
  }

  @ParameterizedTest(name = "upload limit {0} B/s (0: sendfile, else chunks)")
  @ValueSource(longs = {0, 1L << 30})
  void aReaderGetsTheObjectAsItLandsAndFinishesOnceItIsVerified(long uploadLimit) throws Exception {
    try (Receiving r = new Receiving(7);
        ChunkServer server =
            ChunkServer.start(
                "127.0.0.1", 0, id -> Optional.of(r.range()), TestData.SECURITY, uploadLimit);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      Path target = dir.resolve("reader.bin");
      AtomicLong received = new AtomicLong();
      try (FileChannel in =
          FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        CompletableFuture<FetchResult> fetch =
            client.fetch(
                "127.0.0.1",
                server.port(),
                "obj",
                0,
                LENGTH,
                ByteSink.positional(in, 0),
                ObjectDigest.Algorithm.CRC32C_CRC32,
                received::set);
        // Nothing landed yet: the reader waits rather than failing or reading the hole.
        Thread.sleep(100);
        assertEquals(0, received.get());
        assertFalse(fetch.isDone());
        r.land(1_000_000);
        awaitAtLeast(received, 1_000_000);
        assertEquals(
            1_000_000, received.get(), "only landed bytes are sent, never the hole beyond them");
        r.land(LENGTH - 1_000_000 - 10);
        awaitAtLeast(received, LENGTH - 10);
        assertFalse(fetch.isDone());
        r.land(10);
        r.arrival.finish();
        FetchResult result = fetch.get(30, TimeUnit.SECONDS);
        assertEquals(LENGTH, result.bytes());
        ObjectDigest expected = ObjectDigest.start(ObjectDigest.Algorithm.CRC32C_CRC32);
        expected.update(r.content, 0, LENGTH);
        assertEquals(expected.finish(), result.digest());
      }
      assertArrayEquals(r.content, Files.readAllBytes(target));
      // The server counts a chunk when its write completes, which may be after the client has it.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.bytesServed() < LENGTH && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertEquals(LENGTH, server.bytesServed());
    }
  }

  /** A whole-object fetch of {@code id} into a new file under the test's directory. */
  private CompletableFuture<FetchResult> fetchInto(
      ChunkClient client, int port, String id, String file, AtomicLong received) throws Exception {
    FileChannel in =
        FileChannel.open(dir.resolve(file), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    CompletableFuture<FetchResult> fetch =
        client.fetch(
            "127.0.0.1",
            port,
            id,
            0,
            LENGTH,
            ByteSink.positional(in, 0),
            ObjectDigest.Algorithm.CRC32C_CRC32,
            received::set);
    fetch.whenComplete(
        (r, e) -> {
          try {
            in.close();
          } catch (java.io.IOException ignored) {
            // the test reads the results, not the files
          }
        });
    return fetch;
  }

  @Test
  void oneObjectGoesToAtMostTheServersLimitOfReadersAndTheNextIsToldItIsBusy() throws Exception {
    try (Receiving r = new Receiving(10);
        ChunkServer server =
            ChunkServer.start(
                "127.0.0.1", 0, id -> Optional.of(r.range()), TestData.SECURITY, 0, 2);
        ChunkClient a = new ChunkClient(TestData.SECURITY);
        ChunkClient b = new ChunkClient(TestData.SECURITY);
        ChunkClient c = new ChunkClient(TestData.SECURITY)) {
      AtomicLong gotA = new AtomicLong();
      AtomicLong gotB = new AtomicLong();
      AtomicLong gotOther = new AtomicLong();
      CompletableFuture<FetchResult> first = fetchInto(a, server.port(), "obj", "a.bin", gotA);
      CompletableFuture<FetchResult> second = fetchInto(b, server.port(), "obj", "b.bin", gotB);
      r.land(500_000);
      awaitAtLeast(gotA, 500_000);
      awaitAtLeast(gotB, 500_000);

      ExecutionException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class,
              () ->
                  fetchInto(c, server.port(), "obj", "c.bin", new AtomicLong())
                      .get(30, TimeUnit.SECONDS));
      ChunkTransferException busy = assertInstanceOf(ChunkTransferException.class, e.getCause());
      assertEquals(ChunkTransferException.Kind.BUSY, busy.kind(), busy.toString());
      assertTrue(busy.getMessage().contains("obj"), busy.getMessage());
      // Another object is not held back by this one's readers, and the refused connection serves.
      CompletableFuture<FetchResult> other =
          fetchInto(c, server.port(), "other", "other.bin", gotOther);
      awaitAtLeast(gotOther, 500_000);

      r.land(LENGTH - 500_000);
      r.arrival.finish();
      assertEquals(LENGTH, first.get(30, TimeUnit.SECONDS).bytes());
      assertEquals(LENGTH, second.get(30, TimeUnit.SECONDS).bytes());
      assertEquals(LENGTH, other.get(30, TimeUnit.SECONDS).bytes());
      // Its readers done, the object is served again.
      assertEquals(
          LENGTH,
          fetchInto(c, server.port(), "obj", "c2.bin", new AtomicLong())
              .get(30, TimeUnit.SECONDS)
              .bytes());
    }
  }

  @Test
  void aRangeOfAnArrivingObjectStartsWhereItWasAskedFor() throws Exception {
    try (Receiving r = new Receiving(8);
        ChunkServer server =
            ChunkServer.start("127.0.0.1", 0, id -> Optional.of(r.range()), TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      r.land(2_000_000);
      Path target = dir.resolve("rest.bin");
      long from = 1_500_000;
      try (FileChannel in =
          FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        CompletableFuture<FetchResult> fetch =
            client.fetch(
                "127.0.0.1",
                server.port(),
                "obj",
                from,
                LENGTH - from,
                ByteSink.positional(in, 0),
                ObjectDigest.Algorithm.SHA256,
                null);
        r.land(LENGTH - 2_000_000);
        r.arrival.finish();
        assertEquals(LENGTH - from, fetch.get(30, TimeUnit.SECONDS).bytes());
      }
      assertArrayEquals(
          Arrays.copyOfRange(r.content, (int) from, LENGTH), Files.readAllBytes(target));
    }
  }

  @Test
  void aFailedReceiveCutsTheReaderOffMidObject() throws Exception {
    try (Receiving r = new Receiving(9);
        ChunkServer server =
            ChunkServer.start("127.0.0.1", 0, id -> Optional.of(r.range()), TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY)) {
      Path target = dir.resolve("cut.bin");
      AtomicLong received = new AtomicLong();
      try (FileChannel in =
          FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        CompletableFuture<FetchResult> fetch =
            client.fetch(
                "127.0.0.1",
                server.port(),
                "obj",
                0,
                LENGTH,
                ByteSink.positional(in, 0),
                ObjectDigest.Algorithm.CRC32C_CRC32,
                received::set);
        r.land(700_000);
        awaitAtLeast(received, 700_000);
        r.arrival.fail();
        ExecutionException e =
            org.junit.jupiter.api.Assertions.assertThrows(
                ExecutionException.class, () -> fetch.get(30, TimeUnit.SECONDS));
        ChunkTransferException cause = assertInstanceOf(ChunkTransferException.class, e.getCause());
        assertEquals(ChunkTransferException.Kind.SHORT_TRANSFER, cause.kind(), cause.toString());
        assertEquals(700_000, received.get(), "nothing beyond what had landed");
      }
      // A new request for an object whose receive failed here is refused: not here.
      try (FileChannel in =
          FileChannel.open(
              dir.resolve("again.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        ChunkTransferException refused =
            org.junit.jupiter.api.Assertions.assertThrows(
                ChunkTransferException.class,
                () ->
                    client.fetchBlocking(
                        "127.0.0.1",
                        server.port(),
                        "obj",
                        0,
                        LENGTH,
                        ByteSink.positional(in, 0),
                        ObjectDigest.Algorithm.CRC32C_CRC32,
                        null));
        assertTrue(refused.getMessage().contains("not here"), refused.getMessage());
      }
    }
  }

  @Test
  void anEmptyRangeOfAnArrivingObjectIsAnsweredAtOnce() throws Exception {
    try (Receiving r = new Receiving(10);
        ChunkServer server =
            ChunkServer.start("127.0.0.1", 0, id -> Optional.of(r.range()), TestData.SECURITY);
        ChunkClient client = new ChunkClient(TestData.SECURITY);
        FileChannel in =
            FileChannel.open(
                dir.resolve("empty.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      assertEquals(
          0,
          client
              .fetchBlocking(
                  "127.0.0.1",
                  server.port(),
                  "obj",
                  5,
                  0,
                  ByteSink.positional(in, 0),
                  ObjectDigest.Algorithm.CRC32C_CRC32,
                  null)
              .bytes());
      // The connection is still good for a real request afterwards.
      r.land(LENGTH);
      r.arrival.finish();
      assertEquals(
          LENGTH,
          client
              .fetchBlocking(
                  "127.0.0.1",
                  server.port(),
                  "obj",
                  0,
                  LENGTH,
                  ByteSink.positional(in, 0),
                  ObjectDigest.Algorithm.CRC32C_CRC32,
                  null)
              .bytes());
    }
  }
}
