package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.util.ArrayList;
import java.util.List;

/** The {@code manifest} object: identity, version, files, and the totals that must add up. */
final class ManifestParser {
  static final String SUPPORTED_VERSION = "v1";
  static final int MAX_FILES = 100_000;

  private ManifestParser() {}

  static Manifest parse(Fields manifest, ModelRef model) {
    ModelRefParser.requireSame(manifest, model);

    String totalField = manifest.path("total_size_bytes");
    long total = Fields.nonNegative(manifest.requiredLong("total_size_bytes"), totalField);

    String version = manifest.requiredString("file_manifest_version");
    if (!version.equals(SUPPORTED_VERSION)) {
      throw new ValidationException(
          manifest.path("file_manifest_version"),
          "must be " + Texts.quote(SUPPORTED_VERSION) + ", got " + Texts.quote(version));
    }

    String filesField = manifest.path("files");
    ArrayNode array = manifest.requiredArray("files");
    if (array.isEmpty()) {
      throw new ValidationException(filesField, "must not be empty");
    }
    if (array.size() > MAX_FILES) {
      throw new ValidationException(
          filesField, "must have at most " + MAX_FILES + " entries, got " + array.size());
    }

    FilePaths paths = new FilePaths(filesField);
    ObjectIds objectIds = new ObjectIds();
    List<ManifestFile> files = new ArrayList<>(array.size());
    long sum = 0;
    boolean overflow = false;
    for (int i = 0; i < array.size(); i++) {
      String fileField = Fields.index(filesField, i);
      ManifestFile file =
          ManifestFileParser.parse(Fields.object(array.get(i), fileField), i, paths, objectIds);
      files.add(file);
      // 100k files of up to 2^50 bytes can exceed a long; past that point no total can match.
      if (!overflow) {
        try {
          sum = Math.addExact(sum, file.sizeBytes());
        } catch (ArithmeticException e) {
          overflow = true;
        }
      }
    }
    paths.requireNoFileUnderAnother();

    if (overflow || sum != total) {
      throw new ValidationException(
          totalField,
          "must equal the sum of files' size_bytes ("
              + (overflow ? "more than " + Long.MAX_VALUE : Long.toString(sum))
              + "), got "
              + total);
    }
    return new Manifest(model, total, version, files);
  }
}
