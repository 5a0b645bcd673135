package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One entry of {@code manifest.files}: its own fields, then the rules tying size, chunks and ids.
 */
final class ManifestFileParser {
  /** 1 PiB: far above any real weight file, low enough that chunk arithmetic cannot overflow. */
  static final long MAX_FILE_BYTES = 1L << 50;

  static final long MAX_CHUNK_BYTES = 1L << 40;
  static final int MAX_CHECKSUM = 256;
  static final int MAX_ARTIFACT_KEY = 1024;
  static final int MAX_OBJECT_PREFIX = 1024;

  private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");
  private static final String SHA256 = "sha256:";

  private ManifestFileParser() {}

  static ManifestFile parse(Fields file, int index, FilePaths paths, ObjectIds objectIds) {
    String path = paths.claim(file.requiredString("path"), file.path("path"), index);

    long size = Fields.nonNegative(file.requiredLong("size_bytes"), file.path("size_bytes"));
    if (size > MAX_FILE_BYTES) {
      throw new ValidationException(
          file.path("size_bytes"), "must be at most " + MAX_FILE_BYTES + " (2^50), got " + size);
    }

    String checksum = checksum(file.requiredString("checksum"), file.path("checksum"));
    String downloadUrl =
        DownloadUrls.requireValid(file.requiredString("download_url"), file.path("download_url"));

    Fields artifact = file.requiredObject("artifact");
    String artifactKey =
        Texts.requirePrintable(
            Texts.requireLength(
                artifact.requiredString("artifact_key"),
                artifact.path("artifact_key"),
                1,
                MAX_ARTIFACT_KEY),
            artifact.path("artifact_key"));
    String idsField = artifact.path("object_ids");
    List<String> ids = strings(artifact.requiredArray("object_ids"), idsField);

    Fields layout = file.requiredObject("chunk_layout");
    long chunkSize =
        Fields.inRange(
            layout.requiredLong("chunk_size_bytes"),
            layout.path("chunk_size_bytes"),
            1,
            MAX_CHUNK_BYTES);
    String countField = layout.path("chunk_count");
    long chunkCount = Fields.nonNegative(layout.requiredLong("chunk_count"), countField);
    String prefix =
        Texts.requirePrintable(
            Texts.requireLength(
                layout.requiredString("object_prefix"),
                layout.path("object_prefix"),
                0,
                MAX_OBJECT_PREFIX),
            layout.path("object_prefix"));

    // Readers slice object i as [i * chunk, min((i + 1) * chunk, size)): any other count leaves
    // bytes uncovered or objects empty.
    long expected = size == 0 ? 0 : (size - 1) / chunkSize + 1;
    if (chunkCount != expected) {
      throw new ValidationException(
          countField,
          "must be ceil(size_bytes / chunk_size_bytes) = " + expected + ", got " + chunkCount);
    }
    objectIds.reserve(chunkCount, countField);
    if (ids.size() != chunkCount) {
      throw new ValidationException(
          idsField,
          "must have chunk_layout.chunk_count = " + chunkCount + " entries, got " + ids.size());
    }
    for (int i = 0; i < ids.size(); i++) {
      objectIds.claim(ids.get(i), prefix, Fields.index(idsField, i));
    }

    // The reserve above capped chunkCount at ObjectIds.MAX_TOTAL, so the narrowing is exact.
    return new ManifestFile(
        path,
        size,
        checksum,
        downloadUrl,
        artifactKey,
        ids,
        new ChunkLayout(chunkSize, (int) chunkCount, prefix));
  }

  /**
   * Opaque checksums (the RFC example says "dummy") are accepted as such, but one that claims to be
   * a SHA-256 must be one: a malformed digest would otherwise be silently not enforced.
   */
  private static String checksum(String value, String field) {
    Texts.requireLength(value, field, 1, MAX_CHECKSUM);
    if (value.regionMatches(true, 0, SHA256, 0, SHA256.length())
        && !HEX64.matcher(value.substring(SHA256.length())).matches()) {
      throw new ValidationException(
          field, "must be 'sha256:' followed by exactly 64 hex digits, got " + Texts.quote(value));
    }
    return value;
  }

  private static List<String> strings(ArrayNode array, String field) {
    List<String> out = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      out.add(Fields.string(array.get(i), Fields.index(field, i)));
    }
    return out;
  }
}
