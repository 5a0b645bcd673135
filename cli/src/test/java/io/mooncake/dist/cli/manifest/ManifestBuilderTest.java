package io.mooncake.dist.cli.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ManifestBuilderTest {
  private static final String HEX = "ab".repeat(32);

  private static ManifestOptions options(long chunk, String prefix) {
    return new ManifestOptions(
        "org/model",
        "r1",
        "safetensors",
        "local",
        chunk,
        UrlBase.parse("https://models.example/org/model/r1/"),
        prefix);
  }

  @Test
  void chunkCountIsTheCeilingOfSizeOverChunkAndZeroForAnEmptyFile() {
    assertEquals(0, ManifestBuilder.chunkCount(0, 10));
    assertEquals(1, ManifestBuilder.chunkCount(1, 10));
    assertEquals(1, ManifestBuilder.chunkCount(10, 10));
    assertEquals(2, ManifestBuilder.chunkCount(11, 10));
  }

  @Test
  void objectIdsNameThePrefixThePathAndAFiveDigitIndex() {
    assertEquals("m/r1/a/b.bin/chunk-00007", ManifestBuilder.objectId("m/r1", "a/b.bin", 7));
    assertEquals("b.bin/chunk-00000", ManifestBuilder.objectId("", "b.bin", 0));
  }

  @Test
  void everyFileGetsItsLayoutIdsUrlChecksumAndTheSharedArtifactKey() {
    ManifestDocument m =
        ManifestBuilder.build(
            options(100, "org/model/r1"),
            List.of(
                new ManifestBuilder.HashedFile("config.json", 30, HEX),
                new ManifestBuilder.HashedFile("weights/model 1.safetensors", 250, HEX)));

    assertEquals(280, m.totalSizeBytes());
    assertEquals("v1", m.fileManifestVersion());
    ManifestDocument.Entry config = m.files().get(0);
    assertEquals(1, config.chunkCount());
    assertEquals(List.of("org/model/r1/config.json/chunk-00000"), config.objectIds());
    ManifestDocument.Entry weights = m.files().get(1);
    assertEquals(3, weights.chunkCount());
    assertEquals(
        List.of(
            "org/model/r1/weights/model 1.safetensors/chunk-00000",
            "org/model/r1/weights/model 1.safetensors/chunk-00001",
            "org/model/r1/weights/model 1.safetensors/chunk-00002"),
        weights.objectIds());
    assertEquals("sha256:" + HEX, weights.checksum());
    assertEquals(
        "https://models.example/org/model/r1/weights/model%201.safetensors", weights.downloadUrl());
    assertEquals("org/model-r1", weights.artifactKey());
    assertEquals(100, weights.chunkSizeBytes());
    assertEquals("org/model/r1", weights.objectPrefix());
  }

  @Test
  void aChunkSizeThatMakesMoreObjectsThanTheMasterAcceptsIsRefusedBeforeAnyIdIsMade() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ManifestBuilder.build(
                    options(1, "p"),
                    List.of(new ManifestBuilder.HashedFile("big.bin", 2_000_000, HEX))));
    assertTrue(e.getMessage().contains("2000000 objects"), e.getMessage());
  }
}
