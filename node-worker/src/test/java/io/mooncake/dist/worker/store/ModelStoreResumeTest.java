package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.expectedDigests;
import static io.mooncake.dist.worker.store.TestModels.payload;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An HTTP download cut off mid-file, then run again as a retry would: what the first attempt made
 * durable is hashed again and kept, and only the rest is asked for with a Range request.
 */
class ModelStoreResumeTest {
  private static final int CHUNK = 256 * 1024;
  private static final int SIZE = 16 * CHUNK + 123;

  /** The cut: 8 whole objects and part of the ninth reach the seed. */
  private static final long CUT = 8L * CHUNK + 100_000;

  @TempDir Path tmp;

  private ModelStore store() {
    return new ModelStore(tmp.resolve("data"));
  }

  /** The first attempt: cut off after {@link #CUT} bytes, failing retryably. */
  private void interrupted(ModelStore store, FilePlan file, RangeServer server) {
    server.cutNextAfter = CUT;
    StoreException e =
        assertThrows(StoreException.class, () -> store.download(payload(file), b -> {}));
    assertTrue(e.retryable(), e.getMessage());
    assertEquals(CUT, server.served.get());
  }

  @Test
  void aCutDownloadResumesFromTheFirstMissingObjectAndTheSourceServesAtMostOneObjectMore()
      throws Exception {
    byte[] content = randomBytes(1, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      assertTrue(Files.exists(store.partialPath(TestModels.MODEL, file)), "the partial is kept");

      List<String> handedOut = new ArrayList<>();
      var digests =
          store.download(payload(file), b -> {}, (f, o, d) -> handedOut.add(o.objectId()));

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertEquals(expectedDigests(file, content), digests);
      assertEquals(List.copyOf(digests.keySet()), handedOut, "kept objects are published too");
      assertEquals(java.util.Arrays.asList(null, "bytes=" + 8L * CHUNK + "-"), server.ranges);
      assertEquals(List.of(200, 206), server.statuses);
      assertTrue(
          server.served.get() <= SIZE + CHUNK,
          "served " + server.served.get() + " for a file of " + SIZE);
      assertEquals(SIZE + CUT - 8L * CHUNK, server.served.get());
      assertFalse(Files.exists(store.partialPath(TestModels.MODEL, file)));
    }
  }

  @Test
  void aSourceThatIgnoresRangesIsReadFromTheStart() throws Exception {
    byte[] content = randomBytes(2, SIZE);
    try (RangeServer server = new RangeServer(content, null)) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      server.honorRanges = false;

      var digests = store.download(payload(file), b -> {});

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertEquals(expectedDigests(file, content), digests);
      assertEquals("bytes=" + 8L * CHUNK + "-", server.ranges.get(1), "a resume was asked for");
      assertEquals(List.of(200, 200), server.statuses);
      assertEquals(CUT + SIZE, server.served.get());
    }
  }

  @Test
  void a206ForAnotherRangeIsNotResumedFromButReadAgainWithoutARange() throws Exception {
    byte[] content = randomBytes(11, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      server.wrongRange = true;

      store.download(payload(file), b -> {});

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertEquals(java.util.Arrays.asList(null, "bytes=" + 8L * CHUNK + "-", null), server.ranges);
      assertEquals(List.of(200, 206, 200), server.statuses);
    }
  }

  @Test
  void aSourceThatChangedSinceAnswersIfRangeWithTheWholeNewFile() throws Exception {
    byte[] v1 = randomBytes(3, SIZE);
    byte[] v2 = randomBytes(4, SIZE);
    try (RangeServer server = new RangeServer(v1, "\"v1\"")) {
      // No manifest sha256: only the ETag can tell the two versions apart.
      FilePlan file = plan(0, "model.bin", v1, CHUNK, null, server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      server.content = v2;
      server.etag = "\"v2\"";

      store.download(payload(file), b -> {});

      assertArrayEquals(v2, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertEquals(List.of(200, 200), server.statuses);
    }
  }

  @Test
  void keptBytesThatNoLongerMatchTheirRecordedDigestAreReadAgain() throws Exception {
    byte[] content = randomBytes(5, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      Path partial = store.partialPath(TestModels.MODEL, file);
      try (FileChannel ch = FileChannel.open(partial, StandardOpenOption.WRITE)) {
        ch.write(
            java.nio.ByteBuffer.wrap(new byte[] {(byte) ~content[3 * CHUNK + 7]}), 3L * CHUNK + 7);
      }

      store.download(payload(file), b -> {});

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertEquals("bytes=" + 3L * CHUNK + "-", server.ranges.get(1));
    }
  }

  @Test
  void aPartialReplacedByASymlinkIsNeitherFollowedNorResumedFrom() throws Exception {
    byte[] content = randomBytes(6, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      Path partial = store.partialPath(TestModels.MODEL, file);
      // The very bytes the journal expects, behind a link: still not ours to read or write.
      Path victim = partial.resolveSibling("victim.bin");
      Files.move(partial, victim);
      byte[] victimBytes = Files.readAllBytes(victim);
      Files.createSymbolicLink(partial, victim);

      store.download(payload(file), b -> {});

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertNull(server.ranges.get(1), "nothing resumed through the link");
      assertArrayEquals(victimBytes, Files.readAllBytes(victim), "the link's target is untouched");
      assertFalse(Files.exists(partial, LinkOption.NOFOLLOW_LINKS));
    }
  }

  @Test
  void withNeitherASha256NorAValidatorNothingIsKept() throws Exception {
    byte[] content = randomBytes(7, SIZE);
    try (RangeServer server = new RangeServer(content, null)) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, null, server.url());
      ModelStore store = store();
      interrupted(store, file, server);
      assertFalse(
          Files.exists(store.partialPath(TestModels.MODEL, file)),
          "nothing could prove the source unchanged, so the partial is not kept");

      store.download(payload(file), b -> {});

      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      assertNull(server.ranges.get(1));
    }
  }

  @Test
  void aPermanentFailureOfTheResumedAttemptRemovesThePartialAndItsRecord() throws Exception {
    byte[] content = randomBytes(8, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      // The manifest's sha256 is of other bytes: the end of the resumed attempt refuses the file.
      FilePlan file =
          plan(0, "model.bin", content, CHUNK, sha256Hex(randomBytes(9, SIZE)), server.url());
      ModelStore store = store();
      interrupted(store, file, server);

      StoreException e =
          assertThrows(StoreException.class, () -> store.download(payload(file), b -> {}));

      assertFalse(e.retryable());
      assertTrue(e.getMessage().contains("resumed at byte " + 8L * CHUNK), e.getMessage());
      assertFalse(Files.exists(store.partialPath(TestModels.MODEL, file)));
      try (var journals = Files.list(tmp.resolve("data/.mooncake/downloads"))) {
        assertEquals(0, journals.count(), "the download journal is gone too");
      }
    }
  }

  @Test
  void aFileSourceInterruptedByAFailingPublishResumesAndStoresTheSameBytes() throws Exception {
    byte[] content = randomBytes(10, SIZE);
    Path src = tmp.resolve("src/model.bin");
    Files.createDirectories(src.getParent());
    Files.write(src, content);
    FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), src.toString());
    ModelStore store = store();
    StoreException e =
        assertThrows(
            StoreException.class,
            () ->
                store.download(
                    payload(file),
                    b -> {},
                    (f, o, d) -> {
                      if (o.chunkIndex() == 5) {
                        throw new StoreException("database hiccup", true);
                      }
                    }));
    assertTrue(e.retryable());
    assertTrue(Files.exists(store.partialPath(TestModels.MODEL, file)));

    List<String> handedOut = new ArrayList<>();
    var digests = store.download(payload(file), b -> {}, (f, o, d) -> handedOut.add(o.objectId()));

    assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
    assertEquals(expectedDigests(file, content), digests);
    assertEquals(List.copyOf(digests.keySet()), handedOut);
  }
}
