package io.mooncake.dist.cli.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelFolderTest {

  private static List<String> paths(ModelFolder.Listing listing) {
    return listing.files().stream().map(ModelFile::relativePath).toList();
  }

  @Test
  void regularFilesAreListedSortedWithSlashSeparatedRelativePaths(@TempDir Path dir)
      throws Exception {
    Files.createDirectories(dir.resolve("b/c"));
    Files.writeString(dir.resolve("z.bin"), "z");
    Files.writeString(dir.resolve("b/c/deep.bin"), "d");
    Files.writeString(dir.resolve("a.json"), "a");
    assertEquals(
        List.of("a.json", "b/c/deep.bin", "z.bin"), paths(ModelFolder.list(dir, Set.of())));
  }

  @Test
  void hiddenFilesAndFoldersAreLeftOut(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve(".cache/huggingface"));
    Files.writeString(dir.resolve(".cache/huggingface/lock"), "x");
    Files.writeString(dir.resolve(".gitattributes"), "x");
    Files.writeString(dir.resolve("model.bin"), "m");
    assertEquals(List.of("model.bin"), paths(ModelFolder.list(dir, Set.of())));
  }

  @Test
  void linksInsideTheFolderAreFollowedAndLinksLeavingItAreSkippedAndReported(@TempDir Path dir)
      throws Exception {
    Path model = Files.createDirectory(dir.resolve("model"));
    Path outside = Files.writeString(dir.resolve("secret.txt"), "s");
    Files.writeString(model.resolve("real.bin"), "r");
    Files.createSymbolicLink(model.resolve("alias.bin"), model.resolve("real.bin"));
    Files.createSymbolicLink(model.resolve("escape.txt"), outside);
    Files.createSymbolicLink(model.resolve("up"), dir);
    Files.createSymbolicLink(model.resolve("loop"), model);

    ModelFolder.Listing listing = ModelFolder.list(model, Set.of());

    assertEquals(List.of("alias.bin", "real.bin"), paths(listing));
    assertTrue(
        listing.skipped().contains("escape.txt (link leaves the folder)"),
        listing.skipped().toString());
    assertTrue(
        listing.skipped().contains("up/ (link leaves the folder)"), listing.skipped().toString());
    assertTrue(listing.skipped().contains("loop/ (link cycle)"), listing.skipped().toString());
  }

  @Test
  void excludedFilesSuchAsThePreviousManifestAreNotListed(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("model.bin"), "m");
    Path manifest = Files.writeString(dir.resolve("manifest.json"), "{}");
    assertEquals(List.of("model.bin"), paths(ModelFolder.list(dir, Set.of(manifest.toRealPath()))));
  }
}
