package io.mooncake.dist.cli.manifest.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What the hub's JSON must hold before it may become a manifest. */
class HubJsonTest {
  private static final String SHA = "ab".repeat(32);
  private static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

  @Test
  void theRevisionIsTheCommitAndGatedOrPrivateNeedsAToken() throws Exception {
    HubRevision open =
        HubJson.revision("{\"sha\":\"" + COMMIT + "\",\"private\":false,\"gated\":false}", "r");
    assertEquals(COMMIT, open.commit());
    assertFalse(open.needsToken());
    assertTrue(
        HubJson.revision("{\"sha\":\"" + COMMIT + "\",\"gated\":\"auto\"}", "r").needsToken());
    assertTrue(HubJson.revision("{\"sha\":\"" + COMMIT + "\",\"private\":true}", "r").needsToken());
    HubException e =
        assertThrows(HubException.class, () -> HubJson.revision("{\"sha\":\"main\"}", "r"));
    assertEquals(HubException.Kind.INCONSISTENT, e.kind());
    assertTrue(e.getMessage().contains("'sha'"), e.getMessage());
    assertThrows(HubException.class, () -> HubJson.revision("<html>", "r"));
  }

  @Test
  void folderEntriesAreDroppedAndLfsFilesCarryTheirSha256() throws Exception {
    List<HubEntry> files =
        HubJson.treePage(
            "[{\"type\":\"directory\",\"path\":\"shards\",\"size\":0},"
                + "{\"type\":\"file\",\"path\":\"config.json\",\"size\":12,\"oid\":\"aa\"},"
                + "{\"type\":\"file\",\"path\":\"shards/a.safetensors\",\"size\":9,\"oid\":\"bb\","
                + "\"lfs\":{\"oid\":\""
                + SHA.toUpperCase()
                + "\",\"size\":9,\"pointerSize\":130}}]",
            "t");
    assertEquals(
        List.of(
            new HubEntry("config.json", 12, "aa", null),
            new HubEntry("shards/a.safetensors", 9, "bb", SHA)),
        files);
  }

  @Test
  void pathsThatLeaveTheModelOrMalformedEntriesAreRefusedNamingTheEntry() {
    for (String path : List.of("../etc/passwd", "/abs", "a//b", "a/./b", "a\\\\b", "")) {
      HubException e =
          assertThrows(
              HubException.class,
              () ->
                  HubJson.treePage(
                      "[{\"type\":\"file\",\"path\":\"" + path + "\",\"size\":1}]", "t"),
              path);
      assertTrue(e.getMessage().contains("not a relative file path"), e.getMessage());
    }
    assertThrows(
        HubException.class,
        () -> HubJson.treePage("[{\"type\":\"file\",\"path\":\"a\"}]", "t"),
        "no size");
    assertThrows(
        HubException.class,
        () ->
            HubJson.treePage(
                "[{\"type\":\"file\",\"path\":\"a\",\"size\":1,\"lfs\":{\"oid\":\"xyz\"}}]", "t"),
        "an lfs oid that is no sha256");
    HubException mismatch =
        assertThrows(
            HubException.class,
            () ->
                HubJson.treePage(
                    "[{\"type\":\"file\",\"path\":\"a\",\"size\":1,\"lfs\":{\"oid\":\""
                        + SHA
                        + "\",\"size\":2}}]",
                    "t"));
    assertTrue(mismatch.getMessage().contains("lfs.size 2"), mismatch.getMessage());
    assertThrows(HubException.class, () -> HubJson.treePage("{\"error\":\"x\"}", "t"));
  }
}
