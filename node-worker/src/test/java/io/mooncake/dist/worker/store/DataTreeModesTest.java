package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data tree and staged files give others nothing; --data-group shares them with a group. */
class DataTreeModesTest {
  @TempDir Path tmp;

  private static final ModelRef MODEL = new ModelRef("m", "r1", "bin", "local");

  private static Path stage(ModelStore store, Path src) throws Exception {
    FilePlan file =
        new FilePlan(
            0,
            "sub/model.bin",
            4,
            null,
            src.toString(),
            List.of(new ObjectPlan("m/0", 0, 0, 4, null)));
    store.download(new TaskPayload(MODEL, List.of(file)), b -> {});
    return store.modelDir(MODEL).resolve("sub/model.bin");
  }

  private static Set<PosixFilePermission> mode(Path p) throws Exception {
    return Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
  }

  @Test
  void stagedFilesAndTheirDirectoriesGiveOthersNoAccess() throws Exception {
    Path data = tmp.resolve("data");
    Path src = Files.write(tmp.resolve("src.bin"), new byte[] {1, 2, 3, 4});
    Path staged = stage(new ModelStore(data), src);

    assertEquals(PosixFilePermissions.fromString("rw-r-----"), mode(staged));
    try (Stream<Path> all = Files.walk(data.resolve("models"))) {
      for (Path p : all.toList()) {
        Set<PosixFilePermission> m = mode(p);
        assertFalse(m.contains(PosixFilePermission.OTHERS_READ), p + " " + m);
        assertFalse(m.contains(PosixFilePermission.OTHERS_EXECUTE), p + " " + m);
        assertFalse(m.contains(PosixFilePermission.OTHERS_WRITE), p + " " + m);
      }
    }
    assertEquals(PosixFilePermissions.fromString("rwxr-x---"), mode(store(data).modelDir(MODEL)));
  }

  private static ModelStore store(Path data) {
    return new ModelStore(data);
  }

  @Test
  void anOlderWorldReadableModelsDirectoryIsClosedToOthersAtStart() throws Exception {
    Path models = Files.createDirectories(tmp.resolve("old/models"));
    Files.setPosixFilePermissions(models, PosixFilePermissions.fromString("rwxr-xr-x"));
    new ModelStore(tmp.resolve("old"));
    assertEquals(PosixFilePermissions.fromString("rwxr-x---"), mode(models));
  }

  @Test
  void theDataGroupOwnsTheTreeAndWhatIsStagedLaterInheritsIt() throws Exception {
    // "daemon" exists on every Debian/Ubuntu system; this test runs as a user that may chgrp to it
    // (root in CI), as an operator's client would run as a member of the engine's group.
    Path data = tmp.resolve("grp");
    ModelStore store = new ModelStore(data);
    Path early = Files.write(data.resolve("models/early.bin"), new byte[] {1});
    DataTree.shareWith(store.dataDir(), "daemon");
    Path staged = stage(store, Files.write(tmp.resolve("src2.bin"), new byte[] {1, 2, 3, 4}));

    for (Path p : List.of(data.resolve("models"), early, staged, staged.getParent())) {
      assertEquals(
          "daemon",
          Files.readAttributes(
                  p, java.nio.file.attribute.PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
              .group()
              .getName(),
          p.toString());
    }
    assertTrue(mode(staged).contains(PosixFilePermission.GROUP_READ));
  }

  @Test
  void anUnknownDataGroupIsRefusedNamingIt() {
    Path data = tmp.resolve("nogrp");
    ModelStore store = new ModelStore(data);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DataTree.shareWith(store.dataDir(), "no-such-group-xyz"));
    assertTrue(e.getMessage().contains("no-such-group-xyz"), e.getMessage());
  }
}
