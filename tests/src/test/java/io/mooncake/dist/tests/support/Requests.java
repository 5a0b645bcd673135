package io.mooncake.dist.tests.support;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.scheduler.domain.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Create-request bodies: the RFC example verbatim, and manifests built for test files. */
public final class Requests {
  private Requests() {}

  /** The RFC's example create request, byte for byte as the RFC prints it. */
  public static String rfcExample() {
    try (InputStream in = Requests.class.getResourceAsStream("/rfc-create-request.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One model file of a test manifest. */
  public record FileSpec(
      String path, long size, long chunkSize, String checksum, String downloadUrl) {}

  /**
   * A request for {@code model_id}/{@code revision} with the given files, seed first in targets.
   */
  public static String job(
      String jobId,
      String modelId,
      String revision,
      List<FileSpec> files,
      String seed,
      List<String> targets) {
    ObjectNode root = Json.MAPPER.createObjectNode();
    root.put("job_id", jobId);
    ObjectNode model = root.putObject("model");
    model
        .put("model_id", modelId)
        .put("revision", revision)
        .put("format", "bin")
        .put("provider", "local");
    ObjectNode manifest = root.putObject("manifest");
    manifest.setAll(model.deepCopy());
    manifest.put("total_size_bytes", files.stream().mapToLong(FileSpec::size).sum());
    manifest.put("file_manifest_version", "v1");
    ArrayNode fileNodes = manifest.putArray("files");
    for (FileSpec f : files) {
      ObjectNode n = fileNodes.addObject();
      n.put("path", f.path())
          .put("size_bytes", f.size())
          .put("checksum", f.checksum())
          .put("download_url", f.downloadUrl());
      int chunks = (int) ((f.size() + f.chunkSize() - 1) / f.chunkSize());
      String prefix = modelId + "/" + revision + "/" + f.path();
      ObjectNode artifact = n.putObject("artifact");
      artifact.put("artifact_key", "artifact-" + modelId + "-" + revision);
      ArrayNode ids = artifact.putArray("object_ids");
      for (int i = 0; i < chunks; i++) {
        ids.add(prefix + String.format("/chunk-%03d", i));
      }
      n.putObject("chunk_layout")
          .put("chunk_size_bytes", f.chunkSize())
          .put("chunk_count", chunks)
          .put("object_prefix", prefix);
    }
    root.put("seed_node_id", seed);
    ArrayNode t = root.putArray("target_nodes");
    targets.forEach(t::add);
    return Json.write(root);
  }
}
