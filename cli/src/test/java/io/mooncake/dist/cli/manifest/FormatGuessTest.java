package io.mooncake.dist.cli.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FormatGuessTest {

  @Test
  void safetensorsWinsOverLegacyBinWeightsInTheSameFolder() {
    assertEquals(
        Optional.of("safetensors"),
        FormatGuess.fromPaths(List.of("pytorch_model.bin", "model-00001-of-00002.SAFETENSORS")));
  }

  @Test
  void ggufAndBinAreRecognised() {
    assertEquals(Optional.of("gguf"), FormatGuess.fromPaths(List.of("README.md", "q4.gguf")));
    assertEquals(Optional.of("bin"), FormatGuess.fromPaths(List.of("model.bin")));
  }

  @Test
  void noKnownExtensionGivesNoGuess() {
    assertEquals(Optional.empty(), FormatGuess.fromPaths(List.of("config.json", "binary")));
  }
}
