package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.expectedDigests;
import static io.mooncake.dist.worker.store.TestModels.payload;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelStoreDownloadTest {
  @TempDir Path tmp;

  /** 2.5 MiB + change: crosses the 1 MiB copy buffer, and the 700 001-byte chunks straddle it. */
  private static final int SIZE = (5 << 19) + 123;

  private static final int CHUNK = 700_001;

  private ModelStore store() {
    return new ModelStore(tmp.resolve("data"));
  }

  private Path source(String name, byte[] content) throws Exception {
    Path p = tmp.resolve("src").resolve(name);
    Files.createDirectories(p.getParent());
    Files.write(p, content);
    return p;
  }

  private void assertStoredExactly(ModelStore store, FilePlan file, byte[] content)
      throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, file);
    assertTrue(Files.isRegularFile(fin), "final file exists: " + fin);
    assertArrayEquals(content, Files.readAllBytes(fin));
    assertFalse(Files.exists(store.partialPath(TestModels.MODEL, file)), "no .partial remains");
  }

  @Test
  void downloadFromAFileUrlStoresTheFileByteForByteAndReturnsEachObjectsDigest() throws Exception {
    byte[] content = randomBytes(1, SIZE);
    Path src = source("model.safetensors", content);
    FilePlan file =
        plan(0, "model.safetensors", content, CHUNK, sha256Hex(content), src.toUri().toString());
    ModelStore store = store();

    LinkedHashMap<String, String> digests = store.download(payload(file), b -> {});

    assertStoredExactly(store, file, content);
    assertEquals(expectedDigests(file, content), digests);
    assertEquals(
        List.copyOf(expectedDigests(file, content).keySet()),
        List.copyOf(digests.keySet()),
        "digests come back in manifest order");
    assertEquals(
        store.modelDir(TestModels.MODEL).resolve("model.safetensors"),
        store.finalPath(TestModels.MODEL, file));
    assertEquals(
        tmp.resolve("data/models/hf/llama-test-8b/rev1/safetensors/model.safetensors")
            .toAbsolutePath(),
        store.finalPath(TestModels.MODEL, file));
  }

  @Test
  void eachObjectIsHandedOutOnceInByteOrderWithItsDigestBeforeTheDownloadReturns()
      throws Exception {
    byte[] content = randomBytes(3, SIZE);
    Path src = source("pub.bin", content);
    FilePlan file = plan(0, "pub.bin", content, CHUNK, null, src.toString());
    List<String> handed = java.util.Collections.synchronizedList(new ArrayList<>());
    LinkedHashMap<String, String> digests =
        store()
            .download(
                payload(file),
                b -> {},
                (f, object, digest) -> handed.add(object.objectId() + "=" + digest));
    List<String> expected = new ArrayList<>();
    expectedDigests(file, content).forEach((id, d) -> expected.add(id + "=" + d));
    assertEquals(
        expected, handed, "every object, in byte order, with the digest the download returns");
    assertEquals(expectedDigests(file, content), digests);
  }

  @Test
  void aSinkThatRefusesAnObjectFailsTheDownloadAndNothingIsHandedOutAfterItReturns()
      throws Exception {
    byte[] content = randomBytes(4, SIZE);
    Path src = source("refused.bin", content);
    FilePlan file = plan(0, "refused.bin", content, CHUNK, null, src.toString());
    ModelStore store = store();
    List<String> handed = java.util.Collections.synchronizedList(new ArrayList<>());
    StoreException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            StoreException.class,
            () ->
                store.download(
                    payload(file),
                    b -> {},
                    (f, object, digest) -> {
                      if (object.chunkIndex() == 1) {
                        throw new StoreException("lease on the download was lost; stopping", false);
                      }
                      handed.add(object.objectId());
                    }));
    assertEquals("lease on the download was lost; stopping", e.getMessage());
    assertEquals(
        List.of(file.objects().get(0).objectId()),
        List.copyOf(handed),
        "objects before the refused one only");
    // The publisher thread is gone once the download has returned, so nothing can be handed out
    // later.
    assertTrue(
        Thread.getAllStackTraces().keySet().stream()
            .noneMatch(t -> t.isAlive() && t.getName().startsWith("publish-refused.bin")),
        "the publisher was stopped and joined");
    assertFalse(
        Files.exists(store.partialPath(TestModels.MODEL, file)), "the partial file is removed");
  }

  @Test
  void downloadFromAnAbsolutePathWorksAndTheLastObjectIsShorter() throws Exception {
    byte[] content = randomBytes(2, 1_000_000);
    Path src = source("w.bin", content);
    FilePlan file = plan(0, "sub/dir/w.bin", content, 300_000, null, src.toString());
    assertEquals(100_000, file.objects().get(3).length(), "the fixture's last chunk is shorter");
    ModelStore store = store();

    LinkedHashMap<String, String> digests = store.download(payload(file), b -> {});

    assertStoredExactly(store, file, content);
    assertEquals(expectedDigests(file, content), digests);
  }

  @Test
  void downloadOverHttpStoresTheServedBytesAndReportsProgress() throws Exception {
    byte[] content = randomBytes(3, SIZE);
    try (TestHttpServer http = new TestHttpServer().serve("/m/model.bin", content)) {
      FilePlan file =
          plan(0, "model.bin", content, CHUNK, sha256Hex(content), http.url("/m/model.bin"));
      ModelStore store = store();
      List<Long> progress = new ArrayList<>();

      LinkedHashMap<String, String> digests = store.download(payload(file), progress::add);

      assertStoredExactly(store, file, content);
      assertEquals(expectedDigests(file, content), digests);
      assertEquals(SIZE, progress.get(progress.size() - 1));
      for (int i = 1; i < progress.size(); i++) {
        assertTrue(progress.get(i) > progress.get(i - 1), "progress only grows");
      }
    }
  }

  @Test
  void downloadOverHttpWithoutContentLengthStillChecksTheSize() throws Exception {
    byte[] content = randomBytes(4, 50_000);
    try (TestHttpServer http = new TestHttpServer().serveChunked("/c", content)) {
      FilePlan file = plan(0, "c.bin", content, 20_000, null, http.url("/c"));
      ModelStore store = store();

      assertEquals(expectedDigests(file, content), store.download(payload(file), b -> {}));
      assertStoredExactly(store, file, content);
    }
  }

  @Test
  void aZeroByteFileWithNoObjectsBecomesAnEmptyFinalFile() throws Exception {
    byte[] empty = new byte[0];
    Path src = source("empty.json", empty);
    FilePlan file = plan(0, "empty.json", empty, CHUNK, sha256Hex(empty), src.toUri().toString());
    assertTrue(file.objects().isEmpty());
    ModelStore store = store();

    assertTrue(store.download(payload(file), b -> {}).isEmpty());

    assertStoredExactly(store, file, empty);
  }

  @Test
  void aShardedManifestOfThreeFilesStoresEveryShardAndCountsProgressAcrossFiles() throws Exception {
    byte[][] shards = {randomBytes(10, 1_200_000), randomBytes(11, 999_999), randomBytes(12, 17)};
    String[] names = {
      "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "config.json"
    };
    FilePlan[] files = new FilePlan[3];
    LinkedHashMap<String, String> expected = new LinkedHashMap<>();
    for (int i = 0; i < 3; i++) {
      Path src = source(names[i], shards[i]);
      files[i] =
          plan(i, names[i], shards[i], 400_000, sha256Hex(shards[i]), src.toUri().toString());
      expected.putAll(expectedDigests(files[i], shards[i]));
    }
    ModelStore store = store();
    AtomicLong last = new AtomicLong();
    TaskPayload payload = payload(files);

    LinkedHashMap<String, String> digests = store.download(payload, last::set);

    for (int i = 0; i < 3; i++) {
      assertStoredExactly(store, files[i], shards[i]);
    }
    assertEquals(expected, digests);
    assertEquals(List.copyOf(expected.keySet()), List.copyOf(digests.keySet()));
    assertEquals(payload.totalBytes(), last.get());
  }

  @Test
  void downloadReplacesAStalePartialLeftByAnEarlierCrash() throws Exception {
    byte[] content = randomBytes(5, 10_000);
    Path src = source("x.bin", content);
    FilePlan file = plan(0, "x.bin", content, 4_096, null, src.toString());
    ModelStore store = store();
    Path partial = store.partialPath(TestModels.MODEL, file);
    Files.createDirectories(partial.getParent());
    Files.write(partial, randomBytes(99, 50_000));

    store.download(payload(file), b -> {});

    assertStoredExactly(store, file, content);
  }
}
