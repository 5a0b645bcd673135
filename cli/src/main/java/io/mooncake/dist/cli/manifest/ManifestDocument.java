package io.mooncake.dist.cli.manifest;

import java.util.List;

/** The RFC's {@code manifest} object, in Java names; {@link ManifestJson} writes the RFC's. */
public record ManifestDocument(
    String modelId,
    String revision,
    String format,
    String provider,
    long totalSizeBytes,
    String fileManifestVersion,
    List<Entry> files) {

  public ManifestDocument {
    files = List.copyOf(files);
  }

  /** One file: where it is, what it hashes to, and the objects it is cut into. */
  public record Entry(
      String path,
      long sizeBytes,
      String checksum,
      String downloadUrl,
      String artifactKey,
      List<String> objectIds,
      long chunkSizeBytes,
      int chunkCount,
      String objectPrefix) {

    public Entry {
      objectIds = List.copyOf(objectIds);
    }
  }
}
