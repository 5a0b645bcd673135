package io.mooncake.dist.cli.manifest.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class HubRefTest {
  @Test
  void theRevisionDefaultsToMainAndFollowsTheAt() {
    assertEquals(new HubRef("org/name", "main"), HubRef.parse("hf://org/name"));
    assertEquals(new HubRef("org/name", "v1.0"), HubRef.parse("hf://org/name@v1.0"));
    assertEquals(
        new HubRef("org/Na_me.2", "refs/pr/1"), HubRef.parse("hf://org/Na_me.2@refs/pr/1"));
    assertEquals(new HubRef("gpt2", "main"), HubRef.parse("HF://gpt2"));
    assertEquals("hf://org/name@main", HubRef.parse("hf://org/name").toString());
  }

  @Test
  void onlyHfUrlsAreHubReferences() {
    assertTrue(HubRef.isHub("hf://x/y"));
    assertFalse(HubRef.isHub("/models/hf://x"));
    assertFalse(HubRef.isHub("models"));
  }

  @Test
  void malformedReferencesAreRefused() {
    for (String bad :
        List.of(
            "hf://",
            "hf://a/b/c",
            "hf://org/na me",
            "hf://.org/name",
            "hf://org/name@",
            "hf://org/name@a..b",
            "hf://org/name@/x",
            "hf://org/name@x y")) {
      assertThrows(IllegalArgumentException.class, () -> HubRef.parse(bad), bad);
    }
  }
}
