package io.mooncake.dist.scheduler.domain;

import java.util.ArrayList;
import java.util.List;

/**
 * One file of a manifest and the objects it is stored as. Object {@code i} covers bytes {@code [i *
 * chunk_size, min((i + 1) * chunk_size, size))}.
 */
public record ManifestFile(
    String path,
    long sizeBytes,
    String checksum,
    String downloadUrl,
    String artifactKey,
    List<String> objectIds,
    ChunkLayout chunkLayout) {

  public ManifestFile {
    objectIds = List.copyOf(objectIds);
  }

  /** The byte range of every object of this file, in order. */
  public List<ObjectSlice> slices(int fileIndex) {
    List<ObjectSlice> out = new ArrayList<>(objectIds.size());
    long chunk = chunkLayout.chunkSizeBytes();
    for (int i = 0; i < objectIds.size(); i++) {
      long offset = i * chunk;
      long length = Math.min(chunk, sizeBytes - offset);
      out.add(new ObjectSlice(objectIds.get(i), fileIndex, i, offset, length));
    }
    return out;
  }

  /** The expected whole-file digest when the manifest gives one, else {@code null}. */
  public String sha256OrNull() {
    return Checksums.sha256HexOrNull(checksum);
  }
}
