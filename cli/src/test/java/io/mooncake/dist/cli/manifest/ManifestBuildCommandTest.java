package io.mooncake.dist.cli.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.cli.support.CliRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestBuildCommandTest {
  private static final int CHUNK = 1000;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  Path model;

  @BeforeEach
  void threeFilesInAFolderAndASubFolder() throws Exception {
    model = Files.createDirectory(dir.resolve("model"));
    Files.createDirectory(model.resolve("shards"));
    Random random = new Random(7);
    write("config.json", 123, random);
    write("shards/model-00001.safetensors", 2500, random);
    write("shards/model-00002.safetensors", 1001, random);
  }

  private void write(String path, int size, Random random) throws Exception {
    byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    Files.write(model.resolve(path), bytes);
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  @Test
  void theManifestListsEachFileWithItsSha256ChunksAndObjectIds() throws Exception {
    Path out = dir.resolve("manifest.json");
    CliRun run =
        CliRun.of(
            "manifest",
            "build",
            model.toString(),
            "--model-id",
            "org/demo",
            "--revision",
            "r1",
            "--chunk-size",
            String.valueOf(CHUNK),
            "-o",
            out.toString());
    assertEquals(0, run.exitCode(), run.transcript());

    JsonNode m = JSON.readTree(Files.readString(out));
    assertEquals("org/demo", m.get("model_id").asText());
    assertEquals("r1", m.get("revision").asText());
    assertEquals("safetensors", m.get("format").asText());
    assertEquals("local", m.get("provider").asText());
    assertEquals("v1", m.get("file_manifest_version").asText());
    assertEquals(123 + 2500 + 1001, m.get("total_size_bytes").asLong());

    List<String> paths = new ArrayList<>();
    m.get("files").forEach(f -> paths.add(f.get("path").asText()));
    assertEquals(
        List.of("config.json", "shards/model-00001.safetensors", "shards/model-00002.safetensors"),
        paths);

    int[] sizes = {123, 2500, 1001};
    int[] chunks = {1, 3, 2};
    for (int i = 0; i < 3; i++) {
      JsonNode f = m.get("files").get(i);
      String path = paths.get(i);
      assertEquals(sizes[i], f.get("size_bytes").asLong());
      assertEquals("sha256:" + sha256(model.resolve(path)), f.get("checksum").asText());
      assertEquals(model.resolve(path).toUri().toASCIIString(), f.get("download_url").asText());
      assertEquals("org/demo-r1", f.get("artifact").get("artifact_key").asText());
      JsonNode layout = f.get("chunk_layout");
      assertEquals(CHUNK, layout.get("chunk_size_bytes").asLong());
      assertEquals(chunks[i], layout.get("chunk_count").asInt());
      assertEquals("org/demo/r1", layout.get("object_prefix").asText());
      JsonNode ids = f.get("artifact").get("object_ids");
      assertEquals(chunks[i], ids.size());
      for (int c = 0; c < chunks[i]; c++) {
        assertEquals(String.format("org/demo/r1/%s/chunk-%05d", path, c), ids.get(c).asText());
      }
    }
  }

  @Test
  void theJsonUsesExactlyTheRfcFieldNames() throws Exception {
    CliRun run =
        CliRun.of("manifest", "build", model.toString(), "--model-id", "m", "--revision", "r");
    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode m = JSON.readTree(run.out());
    assertEquals(
        Set.of(
            "model_id",
            "revision",
            "format",
            "provider",
            "total_size_bytes",
            "file_manifest_version",
            "files"),
        names(m));
    JsonNode f = m.get("files").get(0);
    assertEquals(
        Set.of("path", "size_bytes", "checksum", "download_url", "artifact", "chunk_layout"),
        names(f));
    assertEquals(Set.of("artifact_key", "object_ids"), names(f.get("artifact")));
    assertEquals(
        Set.of("chunk_size_bytes", "chunk_count", "object_prefix"), names(f.get("chunk_layout")));
    assertEquals(64L << 20, f.get("chunk_layout").get("chunk_size_bytes").asLong());
  }

  private static Set<String> names(JsonNode node) {
    Set<String> names = new TreeSet<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  void givenFormatProviderUrlBaseAndPrefixAreUsedAsGiven() throws Exception {
    CliRun run =
        CliRun.of(
            "manifest",
            "build",
            model.toString(),
            "--model-id",
            "m",
            "--revision",
            "r",
            "--format",
            "bin",
            "--provider",
            "hf",
            "--chunk-size",
            "1K",
            "--url-base",
            "https://mirror.local/m/r",
            "--object-prefix",
            "store/m/");
    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode m = JSON.readTree(run.out());
    assertEquals("bin", m.get("format").asText());
    assertEquals("hf", m.get("provider").asText());
    JsonNode f = m.get("files").get(1);
    assertEquals(
        "https://mirror.local/m/r/shards/model-00001.safetensors", f.get("download_url").asText());
    assertEquals(1024, f.get("chunk_layout").get("chunk_size_bytes").asLong());
    assertEquals("store/m", f.get("chunk_layout").get("object_prefix").asText());
    assertEquals(
        "store/m/shards/model-00001.safetensors/chunk-00002",
        f.get("artifact").get("object_ids").get(2).asText());
  }

  @Test
  void aManifestWrittenIntoTheModelFolderIsNotPartOfTheNextManifest() throws Exception {
    Path out = model.resolve("manifest.json");
    assertEquals(
        0,
        CliRun.of(
                "manifest",
                "build",
                model.toString(),
                "--model-id",
                "m",
                "--revision",
                "r",
                "-o",
                out.toString())
            .exitCode());
    assertEquals(
        0,
        CliRun.of(
                "manifest",
                "build",
                model.toString(),
                "--model-id",
                "m",
                "--revision",
                "r",
                "-o",
                out.toString())
            .exitCode());
    assertEquals(3, JSON.readTree(Files.readString(out)).get("files").size());
  }

  @Test
  void aMissingFolderIsAUsageErrorNamingTheArgument() {
    CliRun run =
        CliRun.of(
            "manifest",
            "build",
            dir.resolve("nope").toString(),
            "--model-id",
            "m",
            "--revision",
            "r");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("<model dir>") && run.err().contains("does not exist"),
        run.transcript());
  }

  @Test
  void aFolderNeedsModelIdAndRevisionAndTakesNoHubFlags() {
    CliRun noId = CliRun.of("manifest", "build", model.toString(), "--revision", "r");
    assertEquals(2, noId.exitCode(), noId.transcript());
    assertTrue(noId.err().contains("--model-id"), noId.transcript());
    CliRun noRev = CliRun.of("manifest", "build", model.toString(), "--model-id", "m");
    assertEquals(2, noRev.exitCode(), noRev.transcript());
    assertTrue(noRev.err().contains("--revision"), noRev.transcript());
    CliRun hubFlag =
        CliRun.of(
            "manifest",
            "build",
            model.toString(),
            "--model-id",
            "m",
            "--revision",
            "r",
            "--hf-endpoint",
            "http://127.0.0.1:1");
    assertEquals(2, hubFlag.exitCode(), hubFlag.transcript());
    assertTrue(hubFlag.err().contains("--hf-endpoint is for hf://"), hubFlag.transcript());
  }

  @Test
  void aFolderWithOnlyHiddenFilesIsAUsageError() throws Exception {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Files.writeString(empty.resolve(".hidden"), "x");
    CliRun run =
        CliRun.of("manifest", "build", empty.toString(), "--model-id", "m", "--revision", "r");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("has no files"), run.transcript());
  }

  @Test
  void aChunkSizeOfZeroOrLessIsAUsageErrorNamingTheFlag() {
    for (String size : List.of("0", "-1", "-4MiB")) {
      CliRun run =
          CliRun.of(
              "manifest",
              "build",
              model.toString(),
              "--model-id",
              "m",
              "--revision",
              "r",
              "--chunk-size",
              size);
      assertEquals(2, run.exitCode(), run.transcript());
      assertTrue(run.err().contains("--chunk-size"), run.transcript());
    }
  }

  @Test
  void anUnparsableChunkSizeIsAUsageErrorNamingTheFlag() {
    CliRun run =
        CliRun.of(
            "manifest",
            "build",
            model.toString(),
            "--model-id",
            "m",
            "--revision",
            "r",
            "--chunk-size",
            "big");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("--chunk-size"), run.transcript());
  }

  @Test
  void aFolderWithoutKnownWeightsNeedsAnExplicitFormat() throws Exception {
    Path docs = Files.createDirectory(dir.resolve("docs"));
    Files.writeString(docs.resolve("README.md"), "x");
    CliRun run =
        CliRun.of("manifest", "build", docs.toString(), "--model-id", "m", "--revision", "r");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("--format"), run.transcript());
  }
}
