package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code <file>.partial} symlink planted in a model directory: neither a download nor a copy
 * writes through it, and the model file never ends up a link to the victim.
 */
class PartialSymlinkTest {
  @TempDir Path tmp;

  private static final ModelRef MODEL = new ModelRef("m", "r1", "bin", "local");

  private static FilePlan file(Path src) {
    return new FilePlan(
        0, "model.bin", 4, null, src.toString(), List.of(new ObjectPlan("m/0", 0, 0, 4, null)));
  }

  @Test
  void aDownloadRemovesAPlantedPartialLinkAndLeavesItsTargetAlone() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data"));
    ModelStore store = new ModelStore(data);
    // The victim (another model's file) lies inside the model store, so the escape check alone
    // would not stop a write through the link.
    Path victim =
        Files.write(
            Files.createDirectories(data.resolve("models/other")).resolve("victim"),
            new byte[] {9, 9, 9, 9, 9, 9});
    Path src = Files.write(tmp.resolve("src.bin"), new byte[] {1, 2, 3, 4});
    Path modelDir = Files.createDirectories(store.modelDir(MODEL));
    Files.createSymbolicLink(modelDir.resolve("model.bin.partial"), victim);

    store.download(new TaskPayload(MODEL, List.of(file(src))), b -> {});

    assertArrayEquals(new byte[] {9, 9, 9, 9, 9, 9}, Files.readAllBytes(victim));
    Path staged = modelDir.resolve("model.bin");
    assertFalse(Files.isSymbolicLink(staged), "model.bin must not be a link");
    assertArrayEquals(new byte[] {1, 2, 3, 4}, Files.readAllBytes(staged));
  }

  @Test
  void aCopyNeverWritesThroughAPlantedPartialLink() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data2"));
    ModelStore store = new ModelStore(data);
    Path victim =
        Files.write(
            Files.createDirectories(data.resolve("models/other")).resolve("victim"),
            new byte[] {9, 9, 9, 9, 9, 9});
    Path modelDir = Files.createDirectories(store.modelDir(MODEL));
    Path partial = modelDir.resolve("model.bin.partial");
    Files.createSymbolicLink(partial, victim);
    FilePlan file = file(tmp.resolve("unused"));

    try (FileChannel ch = store.openForObjectWrite(MODEL, file)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), 0);
    }

    assertArrayEquals(new byte[] {9, 9, 9, 9, 9, 9}, Files.readAllBytes(victim));
    assertTrue(Files.isRegularFile(partial, LinkOption.NOFOLLOW_LINKS));
    assertEquals(4, Files.size(partial));
  }

  @Test
  void aPartialLinkLeadingOutOfTheDataDirectoryIsRefusedLikeTheFinalName() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data3"));
    Path outside = Files.write(tmp.resolve("outside"), new byte[] {9, 9, 9, 9});
    ModelStore store = new ModelStore(data);
    Path modelDir = Files.createDirectories(store.modelDir(MODEL));
    Files.createSymbolicLink(modelDir.resolve("model.bin.partial"), outside);

    StoreException e =
        assertThrows(
            StoreException.class,
            () -> store.openForObjectWrite(MODEL, file(tmp.resolve("unused"))));
    assertTrue(e.getMessage().contains("outside the data directory"), e.getMessage());
    assertArrayEquals(new byte[] {9, 9, 9, 9}, Files.readAllBytes(outside));
  }

  @Test
  void aPartialThatIsALinkIsNeverCommittedIntoPlace() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data4"));
    Path victim = Files.write(data.resolve("victim"), new byte[] {1, 2, 3, 4});
    Path target = Files.createDirectories(data.resolve("models/x")).resolve("model.bin");
    Path partial = FileOps.partialOf(target);
    Files.createSymbolicLink(partial, victim);

    StoreException e = assertThrows(StoreException.class, () -> FileOps.commit(partial, target));
    assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS));
  }
}
