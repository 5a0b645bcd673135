package io.mooncake.dist.transfer;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A real server and client on 127.0.0.1 with ephemeral ports, moving bytes between temp files. */
@Timeout(60)
class ChunkTransferTest {

  private static final String EMPTY_SHA256 =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

  @TempDir Path dir;

  private final Map<String, FileRange> objects = new ConcurrentHashMap<>();
  private ObjectLocator locator = id -> Optional.ofNullable(objects.get(id));
  private ChunkServer server;
  private ChunkClient client;

  @BeforeEach
  void start() throws InterruptedException {
    server = ChunkServer.start("127.0.0.1", 0, id -> locator.locate(id), TestData.SECURITY);
    client = new ChunkClient(TestData.SECURITY);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void fetchingAWholeObjectWritesItsBytesAndReturnsTheirSha256() throws Exception {
    byte[] content = TestData.bytes((1 << 20) + 123, 1);
    objects.put("weights/a", range(TestData.file(dir, "a.bin", content)));
    Path target = dir.resolve("a.copy");

    FetchResult result;
    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      result =
          client.fetchBlocking(
              "127.0.0.1", server.port(), "weights/a", 0, content.length, out, 0, null);
    }

    assertEquals(content.length, result.bytes());
    assertEquals(TestData.sha256(content), result.sha256Hex());
    assertArrayEquals(content, Files.readAllBytes(target));
  }

  @Test
  void fetchingASubRangeReadsFromTheOffsetWithinTheObject() throws Exception {
    byte[] content = TestData.bytes(100_000, 2);
    objects.put("obj", range(TestData.file(dir, "obj.bin", content)));
    Path target = dir.resolve("part");

    FetchResult result;
    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      result =
          client.fetchBlocking("127.0.0.1", server.port(), "obj", 40_000, 25_000, out, 0, null);
    }

    assertArrayEquals(Arrays.copyOfRange(content, 40_000, 65_000), Files.readAllBytes(target));
    assertEquals(TestData.sha256(content, 40_000, 25_000), result.sha256Hex());
  }

  @Test
  void bytesLandAtTheTargetPositionAndTheTargetsOwnPositionIsLeftAlone() throws Exception {
    byte[] content = TestData.bytes(5_000, 3);
    objects.put("obj", range(TestData.file(dir, "obj.bin", content)));
    byte[] before = new byte[100];
    Arrays.fill(before, (byte) 'x');
    Path target = TestData.file(dir, "target", before);

    try (FileChannel out = FileChannel.open(target, READ, WRITE)) {
      out.position(7);
      client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, content.length, out, 50, null);
      assertEquals(7, out.position());
    }

    byte[] written = Files.readAllBytes(target);
    assertEquals(50 + content.length, written.length);
    assertArrayEquals(Arrays.copyOf(before, 50), Arrays.copyOf(written, 50));
    assertArrayEquals(content, Arrays.copyOfRange(written, 50, written.length));
  }

  @Test
  void aZeroLengthObjectFetchesAsZeroBytesWithTheDigestOfNothing() throws Exception {
    objects.put("empty", range(TestData.file(dir, "empty.bin", new byte[0])));
    Path target = dir.resolve("empty.copy");

    FetchResult result;
    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      result = client.fetchBlocking("127.0.0.1", server.port(), "empty", 0, 0, out, 0, null);
    }

    assertEquals(new FetchResult(0, "sha256:" + EMPTY_SHA256), result);
    assertEquals(0, Files.size(target));
  }

  @Test
  void anObjectStoredInTheMiddleOfALargerFileServesOnlyItsOwnBytes() throws Exception {
    byte[] file = TestData.bytes(10_000, 4);
    objects.put("inner", new FileRange(TestData.file(dir, "pack.bin", file), 3_000, 2_000));
    Path target = dir.resolve("inner.copy");

    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      FetchResult whole =
          client.fetchBlocking("127.0.0.1", server.port(), "inner", 0, 2_000, out, 0, null);
      assertEquals(TestData.sha256(file, 3_000, 2_000), whole.sha256Hex());

      // The file has bytes past the object's end; they belong to someone else and must not be
      // served.
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking(
                      "127.0.0.1", server.port(), "inner", 1_000, 1_001, out, 0, null));
      assertEquals(Kind.RANGE_OUT_OF_BOUNDS, e.kind());
    }
    assertArrayEquals(Arrays.copyOfRange(file, 3_000, 5_000), Files.readAllBytes(target));
  }

  @Test
  void concurrentFetchesOfDifferentPiecesAssembleTheWholeObject() throws Exception {
    int pieces = 16;
    int pieceSize = 256 * 1024 + 17;
    byte[] content = TestData.bytes(pieces * pieceSize, 5);
    objects.put("big", range(TestData.file(dir, "big.bin", content)));
    Path target = dir.resolve("big.copy");

    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      List<CompletableFuture<FetchResult>> fetches = new ArrayList<>();
      for (int i = pieces - 1; i >= 0; i--) {
        long offset = (long) i * pieceSize;
        fetches.add(
            client.fetch("127.0.0.1", server.port(), "big", offset, pieceSize, out, offset, null));
      }
      for (int i = 0; i < pieces; i++) {
        int piece = pieces - 1 - i;
        assertEquals(
            TestData.sha256(content, piece * pieceSize, pieceSize),
            fetches.get(i).join().sha256Hex());
      }
    }

    assertArrayEquals(content, Files.readAllBytes(target));
  }

  @Test
  void aMultiMebibyteObjectStreamsIntactAndReportsMonotonicProgress() throws Exception {
    long length = 48L << 20;
    Path source = TestData.largeFile(dir, "huge.bin", length, 6);
    objects.put("huge", range(source));
    Path target = dir.resolve("huge.copy");
    List<Long> progress = new CopyOnWriteArrayList<>();

    FetchResult result;
    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      result =
          client.fetchBlocking(
              "127.0.0.1", server.port(), "huge", 0, length, out, 0, progress::add);
    }

    assertEquals(length, result.bytes());
    assertEquals(TestData.sha256(source), result.sha256Hex());
    assertEquals(-1L, Files.mismatch(source, target));
    assertTrue(progress.size() > 1, "progress reported while streaming, not only at the end");
    for (int i = 1; i < progress.size(); i++) {
      assertTrue(
          progress.get(i) > progress.get(i - 1),
          "progress must grow: " + progress.get(i - 1) + " -> " + progress.get(i));
    }
    assertEquals(length, progress.get(progress.size() - 1));
    server.close();
    assertEquals(length, server.bytesServed());
  }

  @Test
  void bytesServedCountsEveryPayloadByteButNoHeaders() throws Exception {
    objects.put("obj", range(TestData.file(dir, "obj.bin", TestData.bytes(10_000, 7))));
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 10_000, out, 0, null);
      client.fetchBlocking("127.0.0.1", server.port(), "obj", 500, 1_500, out, 0, null);
      assertThrows(
          ChunkTransferException.class,
          () -> client.fetchBlocking("127.0.0.1", server.port(), "missing", 0, 1, out, 0, null));
    }

    server.close();

    assertEquals(11_500, server.bytesServed());
  }

  @Test
  void anObjectThisNodeDoesNotHoldFailsWithNotFoundNamingTheObjectAndPeer() throws Exception {
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking(
                      "127.0.0.1", server.port(), "models/nope", 0, 10, out, 0, null));

      assertEquals(Kind.NOT_FOUND, e.kind());
      assertTrue(e.getMessage().contains("models/nope"), e.getMessage());
      assertTrue(e.getMessage().contains("127.0.0.1:" + server.port()), e.getMessage());
      assertTrue(e.getMessage().contains("object not here"), e.getMessage());
    }
  }

  @Test
  void aRangePastTheEndOfTheObjectFailsWithRangeOutOfBounds() throws Exception {
    objects.put("obj", range(TestData.file(dir, "obj.bin", TestData.bytes(1_000, 8))));
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking("127.0.0.1", server.port(), "obj", 900, 101, out, 0, null));

      assertEquals(Kind.RANGE_OUT_OF_BOUNDS, e.kind());
      assertTrue(e.getMessage().contains("obj"), e.getMessage());
      assertTrue(e.getMessage().contains("offset+length > object length"), e.getMessage());
    }
  }

  @Test
  void aFileShorterThanTheLocatorClaimsFailsWithSourceErrorAndTheServerKeepsServing()
      throws Exception {
    objects.put(
        "liar", new FileRange(TestData.file(dir, "short.bin", TestData.bytes(500, 9)), 0, 1_000));
    byte[] good = TestData.bytes(2_000, 10);
    objects.put("good", range(TestData.file(dir, "good.bin", good)));

    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () -> client.fetchBlocking("127.0.0.1", server.port(), "liar", 0, 100, out, 0, null));
      assertEquals(Kind.SOURCE_ERROR, e.kind());
      assertTrue(e.getMessage().contains("liar"), e.getMessage());
      assertTrue(e.getMessage().contains("cannot read object file"), e.getMessage());

      FetchResult result =
          client.fetchBlocking("127.0.0.1", server.port(), "good", 0, good.length, out, 0, null);
      assertEquals(TestData.sha256(good), result.sha256Hex());
    }
  }

  @Test
  void aMissingFileFailsWithSourceError() throws Exception {
    objects.put("ghost", new FileRange(dir.resolve("does-not-exist"), 0, 10));
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () -> client.fetchBlocking("127.0.0.1", server.port(), "ghost", 0, 10, out, 0, null));

      assertEquals(Kind.SOURCE_ERROR, e.kind());
      assertTrue(e.getMessage().contains("does-not-exist"), e.getMessage());
    }
  }

  @Test
  void aLocatorThatThrowsFailsThatRequestWithSourceErrorAndTheServerKeepsServing()
      throws Exception {
    byte[] good = TestData.bytes(3_000, 11);
    objects.put("good", range(TestData.file(dir, "good.bin", good)));
    locator =
        id -> {
          if (id.equals("broken")) {
            throw new IOException("metadata disk on fire");
          }
          return Optional.ofNullable(objects.get(id));
        };

    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () -> client.fetchBlocking("127.0.0.1", server.port(), "broken", 0, 1, out, 0, null));
      assertEquals(Kind.SOURCE_ERROR, e.kind());
      assertTrue(e.getMessage().contains("metadata disk on fire"), e.getMessage());

      assertEquals(
          TestData.sha256(good),
          client
              .fetchBlocking("127.0.0.1", server.port(), "good", 0, good.length, out, 0, null)
              .sha256Hex());
    }
  }

  @Test
  void aFailedFetchLeavesTheCallerFreeToRetry() throws Exception {
    byte[] content = TestData.bytes(4_096, 12);
    Path target = dir.resolve("t");
    try (FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking(
                      "127.0.0.1", server.port(), "late", 0, content.length, out, 0, null));
      assertEquals(Kind.NOT_FOUND, e.kind());

      objects.put("late", range(TestData.file(dir, "late.bin", content)));
      FetchResult retry =
          client.fetchBlocking("127.0.0.1", server.port(), "late", 0, content.length, out, 0, null);

      assertEquals(TestData.sha256(content), retry.sha256Hex());
    }
    assertArrayEquals(content, Files.readAllBytes(target));
  }

  @Test
  void aFetchAfterTheClientIsClosedFailsWithConnection() throws Exception {
    client.close();
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () -> client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 1, out, 0, null));

      assertEquals(Kind.CONNECTION, e.kind());
      assertTrue(e.getMessage().contains("obj"), e.getMessage());
    }
  }

  @Test
  void invalidArgumentsAreRejectedBeforeAnyConnection() throws Exception {
    try (FileChannel out = FileChannel.open(dir.resolve("t"), CREATE, WRITE)) {
      int port = server.port();
      assertThrows(
          IllegalArgumentException.class,
          () -> client.fetch("127.0.0.1", port, "o", -1, 1, out, 0, null));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.fetch("127.0.0.1", port, "o", 0, -1, out, 0, null));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.fetch("127.0.0.1", port, "o", Long.MAX_VALUE, 2, out, 0, null));
      assertThrows(
          IllegalArgumentException.class,
          () -> client.fetch("127.0.0.1", port, "", 0, 1, out, 0, null));
      assertThrows(
          IllegalArgumentException.class,
          () ->
              client.fetch(
                  "127.0.0.1",
                  port,
                  "x".repeat(Protocol.MAX_OBJECT_ID_BYTES + 1),
                  0,
                  1,
                  out,
                  0,
                  null));
    }
  }

  @Test
  void startingASecondServerOnAPortInUseFailsWithTheAddressInItsMessage() {
    UncheckedIOException e =
        assertThrows(
            UncheckedIOException.class,
            () ->
                ChunkServer.start(
                    "127.0.0.1", server.port(), id -> Optional.empty(), TestData.SECURITY));

    assertTrue(e.getMessage().contains("127.0.0.1:" + server.port()), e.getMessage());
  }

  private static FileRange range(Path file) throws IOException {
    return new FileRange(file, 0, Files.size(file));
  }
}
