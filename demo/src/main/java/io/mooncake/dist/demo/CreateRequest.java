package io.mooncake.dist.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The create request, shaped like the RFC's example: model {@code demo-model} revision {@code r1},
 * one file {@code model.bin} read by the seed from a {@code file://} URL, object ids {@code
 * demo-model/r1/chunk-000}... under the prefix {@code demo-model/r1}, every target a replica.
 */
final class CreateRequest {
  static final String MODEL_ID = "demo-model";
  static final String REVISION = "r1";
  static final String FILE = "model.bin";

  private CreateRequest() {}

  static ObjectNode build(
      ObjectMapper json,
      String jobId,
      SourceModel model,
      long chunkBytes,
      String seed,
      List<String> targets) {
    ObjectNode root = json.createObjectNode();
    root.put("job_id", jobId);
    ObjectNode ref = root.putObject("model");
    ref.put("model_id", MODEL_ID)
        .put("revision", REVISION)
        .put("format", "bin")
        .put("provider", "local");

    ObjectNode manifest = root.putObject("manifest");
    manifest.setAll(ref.deepCopy());
    manifest.put("total_size_bytes", model.sizeBytes());
    manifest.put("file_manifest_version", "v1");
    ObjectNode file = manifest.putArray("files").addObject();
    file.put("path", FILE)
        .put("size_bytes", model.sizeBytes())
        .put("checksum", model.checksum())
        .put("download_url", model.file().toAbsolutePath().toUri().toString());

    long chunks = (model.sizeBytes() + chunkBytes - 1) / chunkBytes;
    String prefix = MODEL_ID + "/" + REVISION;
    ObjectNode artifact = file.putObject("artifact");
    artifact.put("artifact_key", "artifact-" + MODEL_ID + "-" + REVISION);
    ArrayNode ids = artifact.putArray("object_ids");
    for (long i = 0; i < chunks; i++) {
      ids.add(prefix + String.format("/chunk-%03d", i));
    }
    file.putObject("chunk_layout")
        .put("chunk_size_bytes", chunkBytes)
        .put("chunk_count", chunks)
        .put("object_prefix", prefix);

    root.put("seed_node_id", seed);
    ArrayNode t = root.putArray("target_nodes");
    targets.forEach(t::add);
    root.putObject("replica_policy").put("target_replica_count", targets.size());
    return root;
  }
}
