package io.mooncake.dist.cli.manifest.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The huggingface_hub order: $HF_TOKEN, $HF_TOKEN_PATH, $HF_HOME/token, ~/.cache/huggingface. */
class HubTokenTest {
  @TempDir Path home;

  @Test
  void hfTokenWinsOverEveryFile() throws Exception {
    Path file = Files.writeString(home.resolve("t"), "from-file");
    Optional<HubToken> t =
        HubToken.resolve(Map.of("HF_TOKEN", " hf_env \n", "HF_TOKEN_PATH", file.toString()), home);
    assertEquals("hf_env", t.orElseThrow().value());
    assertEquals("$HF_TOKEN", t.orElseThrow().source());
  }

  @Test
  void hfTokenPathComesNextAndMustExist() throws Exception {
    Path file = Files.writeString(home.resolve("t"), "hf_path\n");
    assertEquals(
        "hf_path",
        HubToken.resolve(Map.of("HF_TOKEN_PATH", file.toString()), home).orElseThrow().value());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HubToken.resolve(Map.of("HF_TOKEN_PATH", home.resolve("nope").toString()), home));
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
  }

  @Test
  void thenHfHomeThenXdgCacheThenTheHomeCache() throws Exception {
    Path hfHome = Files.createDirectories(home.resolve("hf"));
    Files.writeString(hfHome.resolve("token"), "hf_home");
    assertEquals(
        "hf_home",
        HubToken.resolve(Map.of("HF_HOME", hfHome.toString()), home).orElseThrow().value());

    Path xdg = Files.createDirectories(home.resolve("xdg/huggingface"));
    Files.writeString(xdg.resolve("token"), "hf_xdg");
    assertEquals(
        "hf_xdg",
        HubToken.resolve(Map.of("XDG_CACHE_HOME", home.resolve("xdg").toString()), home)
            .orElseThrow()
            .value());

    assertFalse(HubToken.resolve(Map.of(), home).isPresent(), "no default token file: no token");
    Path dflt = Files.createDirectories(home.resolve(".cache/huggingface"));
    Files.writeString(dflt.resolve("token"), "hf_default\n");
    HubToken t = HubToken.resolve(Map.of(), home).orElseThrow();
    assertEquals("hf_default", t.value());
    assertEquals(dflt.resolve("token").toString(), t.source());
  }

  @Test
  void theTokenNeverShowsInToStringAndMustBeOneWord() {
    HubToken t = new HubToken("hf_secret", "$HF_TOKEN");
    assertFalse(t.toString().contains("hf_secret"));
    assertEquals("Bearer hf_secret", t.authorization());
    assertThrows(IllegalArgumentException.class, () -> new HubToken("two words", "x"));
  }
}
