package io.mooncake.dist.cli.manifest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The manifest of hashed files: chunk counts, object ids, download URLs and the total. Pure, so the
 * layout rules the master enforces ({@code chunk_count = ceil(size / chunk)}, ids unique and under
 * the prefix) are tested without touching a disk.
 */
public final class ManifestBuilder {
  /**
   * The master refuses manifests with more objects (its ObjectIds.MAX_TOTAL); checked before any id
   * is made.
   */
  public static final long MAX_OBJECTS = 1_000_000;

  static final String FILE_MANIFEST_VERSION = "v1";

  /** One file's manifest path, size and SHA-256 (hex). */
  public record HashedFile(String path, long sizeBytes, String sha256Hex) {}

  private ManifestBuilder() {}

  /**
   * Number of chunks of {@code chunk} bytes that cover {@code size} bytes: zero for an empty file.
   */
  public static long chunkCount(long size, long chunk) {
    return size == 0 ? 0 : (size - 1) / chunk + 1;
  }

  /** {@code <prefix>/<path>/chunk-00007}: the path keeps ids of different files apart. */
  public static String objectId(String prefix, String path, int index) {
    String head = prefix.isEmpty() ? path : prefix + "/" + path;
    return head + String.format(Locale.ROOT, "/chunk-%05d", index);
  }

  /**
   * The manifest for {@code files} in the given order.
   *
   * @throws IllegalArgumentException when the chunk size cuts the model into more objects than the
   *     master accepts (the message gives the count)
   */
  public static ManifestDocument build(ManifestOptions options, List<HashedFile> files) {
    long objects = 0;
    for (HashedFile f : files) {
      objects += chunkCount(f.sizeBytes(), options.chunkSizeBytes());
    }
    if (objects > MAX_OBJECTS) {
      throw new IllegalArgumentException(
          "a chunk size of "
              + options.chunkSizeBytes()
              + " bytes cuts the model into "
              + objects
              + " objects; the master accepts at most "
              + MAX_OBJECTS);
    }
    List<ManifestDocument.Entry> entries = new ArrayList<>(files.size());
    long total = 0;
    for (HashedFile f : files) {
      int count = (int) chunkCount(f.sizeBytes(), options.chunkSizeBytes());
      List<String> ids = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        ids.add(objectId(options.objectPrefix(), f.path(), i));
      }
      entries.add(
          new ManifestDocument.Entry(
              f.path(),
              f.sizeBytes(),
              "sha256:" + f.sha256Hex(),
              options.urlBase().resolve(f.path()),
              options.artifactKey(),
              ids,
              options.chunkSizeBytes(),
              count,
              options.objectPrefix()));
      total += f.sizeBytes();
    }
    return new ManifestDocument(
        options.modelId(),
        options.revision(),
        options.format(),
        options.provider(),
        total,
        FILE_MANIFEST_VERSION,
        entries);
  }
}
