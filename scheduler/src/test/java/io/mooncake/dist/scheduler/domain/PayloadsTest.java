package io.mooncake.dist.scheduler.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PayloadsTest {
  private static final ModelRef MODEL = new ModelRef("demo-model", "r1", "bin", "local");

  private static Manifest rfcManifest(String checksum) {
    ManifestFile f =
        new ManifestFile(
            "model.bin",
            1_048_576,
            checksum,
            "file:///tmp/mooncake-dist-test/model.bin",
            "artifact-demo-model-r1",
            List.of(
                "demo-model/r1/chunk-000",
                "demo-model/r1/chunk-001",
                "demo-model/r1/chunk-002",
                "demo-model/r1/chunk-003"),
            new ChunkLayout(262_144, 4, "demo-model/r1"));
    return new Manifest(MODEL, 1_048_576, "v1", List.of(f));
  }

  @Test
  void theRfcManifestBecomesADownloadOfFourQuarterMebibyteObjects() {
    TaskPayload p = Payloads.download(rfcManifest("dummy"));
    assertEquals(MODEL, p.model());
    FilePlan file = p.files().get(0);
    assertEquals("file:///tmp/mooncake-dist-test/model.bin", file.downloadUrl());
    assertNull(file.sha256(), "a dummy checksum is not enforceable");
    assertEquals(4, file.objects().size());
    assertEquals(
        new ObjectPlan("demo-model/r1/chunk-002", 2, 524_288, 262_144, null),
        file.objects().get(2));
    assertEquals(1_048_576, p.totalBytes());
  }

  @Test
  void theLastObjectOfAnUnevenFileIsShorter() {
    ManifestFile f =
        new ManifestFile(
            "a.bin",
            10,
            "x",
            "/src/a.bin",
            "k",
            List.of("p/0", "p/1", "p/2"),
            new ChunkLayout(4, 3, "p"));
    List<ObjectSlice> slices = f.slices(0);
    assertEquals(new ObjectSlice("p/2", 0, 2, 8, 2), slices.get(2));
  }

  @Test
  void aShardedManifestNumbersFilesAndKeepsObjectsPerFile() {
    ManifestFile a =
        new ManifestFile(
            "a.safetensors",
            8,
            "x",
            "/a",
            "k",
            List.of("p/a0", "p/a1"),
            new ChunkLayout(4, 2, "p"));
    ManifestFile b =
        new ManifestFile(
            "b.safetensors", 3, "x", "/b", "k", List.of("p/b0"), new ChunkLayout(4, 1, "p"));
    Manifest m = new Manifest(MODEL, 11, "v1", List.of(a, b));
    assertEquals(3, m.objectCount());
    assertEquals(new ObjectSlice("p/b0", 1, 0, 0, 3), m.slices().get(2));
    TaskPayload copy = Payloads.copy(m, m.slices().get(2), "sha256:ab");
    assertEquals(1, copy.files().size());
    assertEquals("b.safetensors", copy.files().get(0).path());
    assertEquals("sha256:ab", copy.files().get(0).objects().get(0).digest());
  }

  @Test
  void publishedDigestsTravelInVerifyAndMaterializePayloadsWithoutTheSourceUrl() {
    String hex = "a".repeat(64);
    Manifest m = rfcManifest("sha256:" + hex.toUpperCase());
    TaskPayload p = Payloads.withDigests(m, Map.of("demo-model/r1/chunk-000", "sha256:00"));
    assertNull(p.files().get(0).downloadUrl());
    assertEquals(hex, p.files().get(0).sha256());
    assertEquals("sha256:00", p.files().get(0).objects().get(0).digest());
  }

  @Test
  void payloadsSurviveTheJsonRoundTripInSnakeCase() {
    TaskPayload p = Payloads.download(rfcManifest("dummy"));
    String json = Json.write(p);
    assertEquals(true, json.contains("\"download_url\""));
    assertEquals(p, Json.read(json, TaskPayload.class));
  }

  @Test
  void checksumsAreEnforceableOnlyWhenTheyNameASha256() {
    String hex = "0123456789abcdef".repeat(4);
    assertEquals(hex, Checksums.sha256HexOrNull("sha256:" + hex));
    assertEquals(hex, Checksums.sha256HexOrNull(hex.toUpperCase()));
    assertNull(Checksums.sha256HexOrNull("dummy"));
    assertNull(Checksums.sha256HexOrNull("sha256:abc"));
    assertNull(Checksums.sha256HexOrNull("md5:" + hex));
  }

  @Test
  void modelPathsStayInsideTheDataDirectory() {
    Path data = Path.of("/data");
    Path dir = ModelPaths.modelDir(data, new ModelRef("org/name", "r1", "bin", "hf"));
    assertEquals(Path.of("/data/models/hf/org%2Fname/r1/bin"), dir);
    assertEquals(
        Path.of("/data/models/hf/org%2Fname/r1/bin/sub/a.bin"), ModelPaths.file(dir, "sub/a.bin"));
    assertThrows(IllegalArgumentException.class, () -> ModelPaths.file(dir, "../x"));
    assertThrows(IllegalArgumentException.class, () -> ModelPaths.file(dir, "/etc/passwd"));
    assertThrows(
        IllegalArgumentException.class,
        () -> ModelPaths.modelDir(data, new ModelRef("../../x", "r", "f", "p")));
  }

  @Test
  void nodeIdsAreHostColonPort() {
    assertEquals(new NodeId("127.0.0.1", 25001), NodeId.parse("127.0.0.1:25001"));
    assertThrows(IllegalArgumentException.class, () -> NodeId.parse("node1"));
    assertThrows(IllegalArgumentException.class, () -> NodeId.parse("h:0"));
    assertThrows(IllegalArgumentException.class, () -> NodeId.parse("h:70000"));
    assertThrows(IllegalArgumentException.class, () -> NodeId.parse(":80"));
  }
}
