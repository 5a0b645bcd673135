package io.mooncake.dist.scheduler.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ModelPathsTest {
  private static final Path DATA = Path.of("/data");

  @Test
  void aModelIdWithASlashIsOneDirectoryLevel() {
    assertEquals(
        Path.of("/data/models/hf/meta-llama%2FLlama-3/main/safetensors"),
        ModelPaths.modelDir(DATA, new ModelRef("meta-llama/Llama-3", "main", "safetensors", "hf")));
    assertEquals(
        Path.of("/data/models/local/demo-model/r1/bin"),
        ModelPaths.modelDir(DATA, new ModelRef("demo-model", "r1", "bin", "local")));
  }

  @Test
  void noModelDirectoryLiesInsideAnother() {
    Path outer = ModelPaths.modelDir(DATA, new ModelRef("demo-model", "r1", "bin", "local"));
    Path inner = ModelPaths.modelDir(DATA, new ModelRef("demo-model/r1", "bin", "x", "local"));
    assertFalse(inner.startsWith(outer), inner + " inside " + outer);
    assertFalse(outer.startsWith(inner), outer + " inside " + inner);
    assertNotEquals(
        ModelPaths.modelDir(DATA, new ModelRef("a/b", "r", "f", "p")),
        ModelPaths.modelDir(DATA, new ModelRef("a", "b", "r", "f")));
  }

  @Test
  void partsThatWouldLeaveTheirLevelAreRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> ModelPaths.modelDir(DATA, new ModelRef("m", "..", "bin", "local")));
    assertThrows(
        IllegalArgumentException.class,
        () -> ModelPaths.modelDir(DATA, new ModelRef("m", "r/x", "bin", "local")));
  }
}
