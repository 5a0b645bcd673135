package io.mooncake.dist.scheduler.domain;

import java.nio.file.Path;

/**
 * Where a node materializes a model: {@code
 * <data-dir>/models/<provider>/<model_id>/<revision>/<format>}. The four parts are validated by the
 * master (no empty, {@code .} or {@code ..} segments, no absolute paths), so the directory always
 * lies inside the data directory.
 */
public final class ModelPaths {
  private ModelPaths() {}

  public static Path modelDir(Path dataDir, ModelRef model) {
    Path dir =
        dataDir
            .resolve("models")
            .resolve(model.provider())
            .resolve(model.modelId())
            .resolve(model.revision())
            .resolve(model.format())
            .normalize();
    if (!dir.startsWith(dataDir.resolve("models").normalize())) {
      throw new IllegalArgumentException("model reference escapes the data directory: " + model);
    }
    return dir;
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
