package io.mooncake.dist.scheduler.domain;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Pure conversions from a manifest (and published digests) to task payloads. */
public final class Payloads {
  private Payloads() {}

  /** The {@code MODEL_DOWNLOAD} payload: every file with its source URL and object ranges. */
  public static TaskPayload download(Manifest manifest) {
    return download(manifest, null);
  }

  /** As {@link #download(Manifest)}, carrying the source rules the job was admitted under. */
  public static TaskPayload download(Manifest manifest, SourceRules sources) {
    List<FilePlan> files = new ArrayList<>();
    for (int i = 0; i < manifest.files().size(); i++) {
      ManifestFile f = manifest.files().get(i);
      files.add(
          new FilePlan(
              i,
              f.path(),
              f.sizeBytes(),
              f.sha256OrNull(),
              f.downloadUrl(),
              plans(f.slices(i), Map.of())));
    }
    return new TaskPayload(manifest.model(), files, sources);
  }

  /**
   * A whole-model payload without source URLs ({@code MODEL_VERIFY}, {@code MATERIALIZE}), each
   * object carrying the digest published for it.
   *
   * @param digests object id to published digest; every object of the manifest must be present
   */
  public static TaskPayload withDigests(Manifest manifest, Map<String, String> digests) {
    List<FilePlan> files = new ArrayList<>();
    for (int i = 0; i < manifest.files().size(); i++) {
      ManifestFile f = manifest.files().get(i);
      files.add(
          new FilePlan(
              i, f.path(), f.sizeBytes(), f.sha256OrNull(), null, plans(f.slices(i), digests)));
    }
    return new TaskPayload(manifest.model(), files);
  }

  /**
   * The {@code REPLICA_COPY} payload for one object: its file (without siblings) and its digest.
   */
  public static TaskPayload copy(Manifest manifest, ObjectSlice slice, String digest) {
    ManifestFile f = manifest.files().get(slice.fileIndex());
    ObjectPlan object =
        new ObjectPlan(
            slice.objectId(), slice.chunkIndex(), slice.offset(), slice.length(), digest);
    FilePlan file =
        new FilePlan(
            slice.fileIndex(), f.path(), f.sizeBytes(), f.sha256OrNull(), null, List.of(object));
    return new TaskPayload(manifest.model(), List.of(file));
  }

  private static List<ObjectPlan> plans(List<ObjectSlice> slices, Map<String, String> digests) {
    List<ObjectPlan> out = new ArrayList<>(slices.size());
    for (ObjectSlice s : slices) {
      out.add(
          new ObjectPlan(
              s.objectId(), s.chunkIndex(), s.offset(), s.length(), digests.get(s.objectId())));
    }
    return out;
  }
}
