package io.mooncake.dist.scheduler.domain;

import java.util.ArrayList;
import java.util.List;

/** The RFC's model manifest: an immutable description of one model version and its files. */
public record Manifest(
    ModelRef model, long totalSizeBytes, String fileManifestVersion, List<ManifestFile> files) {

  public Manifest {
    files = List.copyOf(files);
  }

  /** Every object of the model, file by file, chunk by chunk. */
  public List<ObjectSlice> slices() {
    List<ObjectSlice> out = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      out.addAll(files.get(i).slices(i));
    }
    return out;
  }

  public int objectCount() {
    return files.stream().mapToInt(f -> f.objectIds().size()).sum();
  }

  /** True when every file carries a sha256 the nodes can enforce. */
  public boolean allFilesHaveSha256() {
    return files.stream().allMatch(f -> f.sha256OrNull() != null);
  }
}
