package io.mooncake.dist.cli.manifest;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The model format from file extensions, when {@code --format} is not given. Hugging Face
 * repositories often carry both {@code .safetensors} and legacy {@code pytorch_model.bin}, so the
 * order is safetensors, then gguf, then bin.
 */
public final class FormatGuess {
  private static final List<String> ORDER = List.of("safetensors", "gguf", "bin");

  private FormatGuess() {}

  /**
   * The first format in that order some path ends with ({@code .<format>}, any case); empty if
   * none.
   */
  public static Optional<String> fromPaths(List<String> paths) {
    for (String format : ORDER) {
      String ext = "." + format;
      for (String p : paths) {
        if (p.toLowerCase(Locale.ROOT).endsWith(ext)) {
          return Optional.of(format);
        }
      }
    }
    return Optional.empty();
  }
}
