package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SymlinkEscapeTest {
  @TempDir Path tmp;

  @Test
  void aManifestPathThatResolvesThroughASymlinkOutsideTheDataDirectoryIsRefused() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data"));
    Path outside = Files.createDirectories(tmp.resolve("outside"));
    ModelStore store = new ModelStore(data);
    ModelRef model = new ModelRef("m", "r1", "bin", "local");
    Path modelDir = Files.createDirectories(store.modelDir(model));
    Files.createSymbolicLink(modelDir.resolve("sub"), outside);
    Path src = Files.write(tmp.resolve("src.bin"), new byte[] {1, 2, 3, 4});
    FilePlan file =
        new FilePlan(
            0,
            "sub/evil.bin",
            4,
            null,
            src.toString(),
            List.of(new ObjectPlan("m/0", 0, 0, 4, null)));

    StoreException e =
        assertThrows(
            StoreException.class,
            () -> store.download(new TaskPayload(model, List.of(file)), b -> {}));
    assertTrue(e.getMessage().contains("symlink"), e.getMessage());
    assertFalse(e.retryable());
    try (var listing = Files.list(outside)) {
      assertTrue(listing.findAny().isEmpty(), "nothing may be written outside the data directory");
    }
    assertThrows(StoreException.class, () -> store.openForObjectWrite(model, file));
  }

  @Test
  void aSymlinkToAnAncestorOfTheDataDirectoryIsRefusedToo() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data2"));
    ModelStore store = new ModelStore(data);
    ModelRef model = new ModelRef("m", "r1", "bin", "local");
    Path modelDir = Files.createDirectories(store.modelDir(model));
    Files.createSymbolicLink(modelDir.resolve("up"), Path.of("/"));
    FilePlan file =
        new FilePlan(
            0,
            "up/evil.bin",
            4,
            null,
            "/nonexistent",
            List.of(new ObjectPlan("m/0", 0, 0, 4, null)));
    assertThrows(StoreException.class, () -> store.openForObjectWrite(model, file));
  }

  @Test
  void aModelsDirectoryRemovedByAnOperatorIsRecreatedNotRefused() throws Exception {
    Path data = Files.createDirectories(tmp.resolve("data3"));
    ModelStore store = new ModelStore(data);
    ModelRef model = new ModelRef("m", "r1", "bin", "local");
    Files.delete(data.resolve("models"));
    FilePlan file =
        new FilePlan(
            0, "ok.bin", 4, null, "/nonexistent", List.of(new ObjectPlan("m/0", 0, 0, 4, null)));
    try (var ch = store.openForObjectWrite(model, file)) {
      assertTrue(ch.isOpen());
    }
  }
}
