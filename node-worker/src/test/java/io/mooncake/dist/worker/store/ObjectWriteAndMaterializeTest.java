package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.payload;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static io.mooncake.dist.worker.store.TestModels.withDigests;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.transfer.ObjectDigest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ObjectWriteAndMaterializeTest {
  @TempDir Path tmp;

  /** Writes one object the way a replica copy does: a positional write into the store's channel. */
  private static void copyObject(ModelStore store, FilePlan file, ObjectPlan o, byte[] content)
      throws Exception {
    try (FileChannel ch = store.openForObjectWrite(TestModels.MODEL, file)) {
      ByteBuffer src = ByteBuffer.wrap(content, (int) o.offset(), (int) o.length());
      long pos = o.offset();
      while (src.hasRemaining()) {
        pos += ch.write(src, pos);
      }
    }
  }

  @Test
  void aFileProvenObjectByObjectIsCheckedForSizeOnlyOtherwiseHashedWhole() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(3, 400_000);
    byte[] other = randomBytes(4, 400_000);
    // The manifest's sha256 is of other bytes: hashing the whole file must refuse it.
    FilePlan file =
        withDigests(plan(0, "p/model.bin", content, 100_000, sha256Hex(other), null), content);
    for (ObjectPlan o : file.objects()) {
      copyObject(store, file, o, content);
    }
    StoreException refused =
        assertThrows(StoreException.class, () -> store.materialize(payload(file), f -> false));
    assertTrue(
        refused.getMessage().contains("checksum mismatch")
            || refused.getMessage().contains("sha256"),
        refused.getMessage());
    // With the proof (the caller's claim that every object matches a verified seed) the pass is
    // skipped.
    assertEquals(content.length, store.materialize(payload(file), f -> true));
    assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
  }

  @Test
  void objectsWrittenOutOfOrderMaterializeIntoTheExactFinalFile() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(1, 1_000_000);
    FilePlan file =
        withDigests(plan(0, "w/model.bin", content, 150_000, sha256Hex(content), null), content);
    List<ObjectPlan> order = new ArrayList<>(file.objects());
    Collections.reverse(order);
    Path fin = store.finalPath(TestModels.MODEL, file);
    Path partial = store.partialPath(TestModels.MODEL, file);

    for (ObjectPlan o : order) {
      copyObject(store, file, o, content);
      assertEquals(content.length, Files.size(partial), "the partial is sized to the whole file");
      assertEquals(
          o.digest(),
          store.digestRange(partial, o.offset(), o.length(), ObjectDigest.Algorithm.of(o.digest())),
          "object verifies in place");
      assertEquals(
          Optional.of(partial),
          store.existingFile(fin),
          "a published object is served from the partial");
    }
    assertFalse(Files.exists(fin), "no final file before materialize");

    assertEquals(content.length, store.materialize(payload(file)));

    assertArrayEquals(content, Files.readAllBytes(fin));
    assertFalse(Files.exists(partial));
    assertEquals(Optional.of(fin), store.existingFile(fin));
    assertEquals(content.length, store.verify(payload(file)), "what was materialized verifies");
  }

  @Test
  void materializeRefusesAPartialWhoseSha256DiffersAndLeavesNoFinalFile() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(2, 300_000);
    String manifestSha = sha256Hex(randomBytes(3, 300_000));
    FilePlan file = plan(0, "bad.bin", content, 100_000, manifestSha, null);
    for (ObjectPlan o : file.objects()) {
      copyObject(store, file, o, content);
    }

    StoreException e = assertThrows(StoreException.class, () -> store.materialize(payload(file)));

    assertFalse(e.retryable());
    assertTrue(
        e.getMessage()
            .startsWith(
                "checksum mismatch for bad.bin: manifest sha256 "
                    + manifestSha
                    + ", file sha256 "
                    + sha256Hex(content)),
        e.getMessage());
    assertFalse(Files.exists(store.finalPath(TestModels.MODEL, file)));
  }

  @Test
  void materializeWithoutAnyWrittenObjectReportsTheMissingPartial() {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    FilePlan file = plan(0, "never.bin", new byte[10], 5, null, null);

    StoreException e = assertThrows(StoreException.class, () -> store.materialize(payload(file)));

    assertFalse(e.retryable());
    assertEquals(
        "partial file missing for never.bin: " + store.partialPath(TestModels.MODEL, file),
        e.getMessage());
  }

  @Test
  void materializeAcceptsAFileThatIsAlreadyFinalAndCreatesEmptyFiles() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(4, 5_000);
    FilePlan done = plan(0, "done.bin", content, 2_000, sha256Hex(content), null);
    FilePlan empty = plan(1, "empty.txt", new byte[0], 2_000, null, null);
    for (ObjectPlan o : done.objects()) {
      copyObject(store, done, o, content);
    }
    TaskPayload payload = payload(done, empty);
    store.materialize(payload);

    assertEquals(
        content.length,
        store.materialize(payload),
        "a second materialize is a no-op that succeeds");
    assertEquals(0, Files.size(store.finalPath(TestModels.MODEL, empty)));
    assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, done)));
  }

  @Test
  void openForObjectWriteUsesTheFinalFileOnceItIsComplete() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(5, 4_000);
    FilePlan file = plan(0, "f.bin", content, 1_000, null, null);
    for (ObjectPlan o : file.objects()) {
      copyObject(store, file, o, content);
    }
    store.materialize(payload(file));

    copyObject(store, file, file.objects().get(2), content);

    assertFalse(
        Files.exists(store.partialPath(TestModels.MODEL, file)), "no new partial was created");
    assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
  }

  @Test
  void concurrentObjectWritesToOneFileLoseNoData() throws Exception {
    byte[] content = randomBytes(6, 64 * 50_000 + 777);
    FilePlan file = plan(0, "conc.bin", content, 50_000, sha256Hex(content), null);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      for (int round = 0; round < 5; round++) {
        ModelStore store = new ModelStore(tmp.resolve("data-" + round));
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> writes = new ArrayList<>();
        for (ObjectPlan o : file.objects()) {
          writes.add(
              pool.submit(
                  () -> {
                    start.await();
                    copyObject(store, file, o, content);
                    return null;
                  }));
        }
        start.countDown();
        for (Future<?> w : writes) {
          w.get();
        }

        assertEquals(content.length, store.materialize(payload(file)));
        assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void discardPartialsRemovesOnlyPartialFiles() throws Exception {
    ModelStore store = new ModelStore(tmp.resolve("data"));
    byte[] content = randomBytes(7, 3_000);
    FilePlan kept = plan(0, "kept.bin", content, 1_000, null, null);
    FilePlan dropped = plan(1, "dropped.bin", content, 1_000, null, null);
    for (ObjectPlan o : kept.objects()) {
      copyObject(store, kept, o, content);
    }
    store.materialize(payload(kept));
    copyObject(store, dropped, dropped.objects().get(0), content);
    Path partial = store.partialPath(TestModels.MODEL, dropped);
    assertTrue(Files.exists(partial));

    store.discardPartials(payload(kept, dropped));

    assertFalse(Files.exists(partial));
    assertEquals(Optional.empty(), store.existingFile(store.finalPath(TestModels.MODEL, dropped)));
    assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, kept)));
  }
}
