package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.expectedDigests;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The download of a seed that took over from a failed one: it reads only the objects no live node
 * holds, one range request per run, writes them in place beside the objects its copies wrote,
 * renames nothing, and its MATERIALIZE then finds the whole file right.
 */
class FillInTest {
  private static final int CHUNK = 64 * 1024;
  private static final int SIZE = 10 * CHUNK - 7;

  @TempDir Path tmp;

  /** Objects 0-3 and 6 are held: this node copied 0, 1 and 6; others hold 2 and 3. */
  private static final Set<String> HELD =
      Set.of("obj-0-0", "obj-0-1", "obj-0-2", "obj-0-3", "obj-0-6");

  private static final Set<String> COPIED_HERE = Set.of("obj-0-0", "obj-0-1", "obj-0-6");

  /** What the node's copies wrote into the partial file before it became the seed. */
  private static void copied(ModelStore store, FilePlan file, byte[] content, Set<String> ids)
      throws Exception {
    try (FileChannel ch = store.openForObjectWrite(TestModels.MODEL, file)) {
      for (ObjectPlan o : file.objects()) {
        if (ids.contains(o.objectId())) {
          ch.write(ByteBuffer.wrap(content, (int) o.offset(), (int) o.length()), o.offset());
        }
      }
    }
  }

  @Test
  void onlyTheObjectsNoLiveNodeHoldsAreReadOneRangePerRunAndNothingIsRenamed() throws Exception {
    byte[] content = randomBytes(7, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = new ModelStore(tmp.resolve("data"));
      copied(store, file, content, COPIED_HERE);
      TaskPayload payload = new TaskPayload(TestModels.MODEL, List.of(file)).holding(HELD);

      List<String> handedOut = new ArrayList<>();
      LinkedHashMap<String, String> digests =
          store.download(payload, b -> {}, (f, o, d) -> handedOut.add(o.objectId()));

      LinkedHashMap<String, String> expected = expectedDigests(file, content);
      expected.keySet().removeAll(HELD);
      assertEquals(expected, digests);
      assertEquals(List.copyOf(expected.keySet()), handedOut);
      assertEquals(
          List.of("bytes=" + 4L * CHUNK + "-", "bytes=" + 7L * CHUNK + "-"), server.ranges);
      assertEquals(payload.bytesToFetch(), SIZE - 5L * CHUNK);
      Path partial = store.partialPath(TestModels.MODEL, file);
      assertTrue(Files.exists(partial), "the file stays partial until MATERIALIZE");
      assertFalse(Files.exists(store.finalPath(TestModels.MODEL, file)));

      // The node still copies the two objects others hold; then its MATERIALIZE commits the file.
      copied(store, file, content, Set.of("obj-0-2", "obj-0-3"));
      store.materialize(new TaskPayload(TestModels.MODEL, List.of(file)));
      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
    }
  }

  @Test
  void aSourceThatIgnoresRangesIsReadFromByteZeroAndTheRunIsStillWrittenInPlace() throws Exception {
    byte[] content = randomBytes(8, SIZE);
    try (RangeServer server = new RangeServer(content, null)) {
      server.honorRanges = false;
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = new ModelStore(tmp.resolve("data"));
      copied(store, file, content, HELD);

      store.download(new TaskPayload(TestModels.MODEL, List.of(file)).holding(HELD), b -> {});

      assertEquals(List.of(200, 200), server.statuses);
      store.materialize(new TaskPayload(TestModels.MODEL, List.of(file)));
      assertArrayEquals(content, Files.readAllBytes(store.finalPath(TestModels.MODEL, file)));
    }
  }

  @Test
  void aSourceCutOffMidRunFailsRetryablyAndKeepsTheCopiedObjects() throws Exception {
    byte[] content = randomBytes(9, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, sha256Hex(content), server.url());
      ModelStore store = new ModelStore(tmp.resolve("data"));
      copied(store, file, content, HELD);
      server.cutNextAfter = CHUNK + 10;

      StoreException e =
          assertThrows(
              StoreException.class,
              () ->
                  store.download(
                      new TaskPayload(TestModels.MODEL, List.of(file)).holding(HELD), b -> {}));
      assertTrue(e.retryable(), e.getMessage());
      byte[] partial = Files.readAllBytes(store.partialPath(TestModels.MODEL, file));
      for (ObjectPlan o : file.objects()) {
        if (HELD.contains(o.objectId())) {
          assertArrayEquals(
              java.util.Arrays.copyOfRange(
                  content, (int) o.offset(), (int) (o.offset() + o.length())),
              java.util.Arrays.copyOfRange(
                  partial, (int) o.offset(), (int) (o.offset() + o.length())),
              o.objectId() + " is left as the copy wrote it");
        }
      }
    }
  }

  @Test
  void everythingHeldReadsNothing() throws Exception {
    byte[] content = randomBytes(10, SIZE);
    try (RangeServer server = new RangeServer(content, "\"v1\"")) {
      FilePlan file = plan(0, "model.bin", content, CHUNK, null, server.url());
      ModelStore store = new ModelStore(tmp.resolve("data"));
      Set<String> all = new java.util.HashSet<>();
      file.objects().forEach(o -> all.add(o.objectId()));
      assertTrue(
          store
              .download(new TaskPayload(TestModels.MODEL, List.of(file)).holding(all), b -> {})
              .isEmpty());
      assertTrue(server.ranges.isEmpty());
    }
  }
}
