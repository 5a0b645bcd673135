package io.mooncake.dist.cli.manifest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The manifest in the RFC's JSON shape. Field names are spelled out here rather than derived from
 * Java names, so the wire format reads exactly as in the RFC and cannot shift with a rename.
 */
public final class ManifestJson {
  private ManifestJson() {}

  public static ObjectNode toJson(ManifestDocument m) {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    root.put("model_id", m.modelId());
    root.put("revision", m.revision());
    root.put("format", m.format());
    root.put("provider", m.provider());
    root.put("total_size_bytes", m.totalSizeBytes());
    root.put("file_manifest_version", m.fileManifestVersion());
    ArrayNode files = root.putArray("files");
    for (ManifestDocument.Entry e : m.files()) {
      ObjectNode file = files.addObject();
      file.put("path", e.path());
      file.put("size_bytes", e.sizeBytes());
      file.put("checksum", e.checksum());
      file.put("download_url", e.downloadUrl());
      ObjectNode artifact = file.putObject("artifact");
      artifact.put("artifact_key", e.artifactKey());
      ArrayNode ids = artifact.putArray("object_ids");
      e.objectIds().forEach(ids::add);
      ObjectNode layout = file.putObject("chunk_layout");
      layout.put("chunk_size_bytes", e.chunkSizeBytes());
      layout.put("chunk_count", e.chunkCount());
      layout.put("object_prefix", e.objectPrefix());
    }
    return root;
  }
}
