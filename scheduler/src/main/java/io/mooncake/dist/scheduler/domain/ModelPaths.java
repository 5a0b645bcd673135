package io.mooncake.dist.scheduler.domain;

import java.nio.file.Path;

/**
 * Where a node materializes a model: {@code
 * <data-dir>/models/<provider>/<model_id>/<revision>/<format>}, each of the four parts exactly one
 * directory level. A {@code /} in a model id ({@code meta-llama/Llama-3}) is written {@code %2F} in
 * its directory name ({@code meta-llama%2FLlama-3}): kept as a separator, model {@code
 * (demo-model/r1, bin, x)} would sit inside the directory of {@code (demo-model, r1, bin)}, and
 * deleting the one would delete the other. No part may contain {@code %} (the master allows only
 * {@code [A-Za-z0-9._-]} and {@code /}), so the names of two models never coincide, and all model
 * directories lie at the same depth, so none contains another. The parts are validated by the
 * master (no empty, {@code .} or {@code ..} segments, no absolute paths), so the directory always
 * lies inside the data directory.
 */
public final class ModelPaths {
  private ModelPaths() {}

  /** The single directory name of a model id. */
  public static String modelIdDirName(String modelId) {
    return modelId.replace("/", "%2F");
  }

  public static Path modelDir(Path dataDir, ModelRef model) {
    Path models = dataDir.resolve("models").normalize();
    for (String segment : model.modelId().split("/", -1)) {
      oneLevel(segment, model); // the master refuses these too: '.', '..' or empty segments
    }
    Path dir =
        models
            .resolve(oneLevel(model.provider(), model))
            .resolve(oneLevel(modelIdDirName(model.modelId()), model))
            .resolve(oneLevel(model.revision(), model))
            .resolve(oneLevel(model.format(), model))
            .normalize();
    if (!dir.startsWith(models) || dir.getNameCount() != models.getNameCount() + 4) {
      throw new IllegalArgumentException("model reference escapes the data directory: " + model);
    }
    return dir;
  }

  private static String oneLevel(String part, ModelRef model) {
    if (part.isEmpty() || part.contains("/") || part.equals(".") || part.equals("..")) {
      throw new IllegalArgumentException("model reference escapes the data directory: " + model);
    }
    return part;
  }

  /**
   * The file at manifest path {@code relative} under {@code modelDir}, refused if it escapes it.
   */
  public static Path file(Path modelDir, String relative) {
    Path p = modelDir.resolve(relative).normalize();
    if (Path.of(relative).isAbsolute() || !p.startsWith(modelDir) || p.equals(modelDir)) {
      throw new IllegalArgumentException("manifest path escapes the model directory: " + relative);
    }
    return p;
  }
}
