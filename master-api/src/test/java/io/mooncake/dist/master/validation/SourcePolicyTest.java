package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.util.List;
import org.junit.jupiter.api.Test;

class SourcePolicyTest {
  private static final SourcePolicy POLICY =
      SourcePolicy.parse("file:///models/, https://hub.example.com");

  private static JobRequest request(String... urls) {
    ModelRef model = new ModelRef("m", "r1", "bin", "local");
    List<ManifestFile> files = new java.util.ArrayList<>();
    for (int i = 0; i < urls.length; i++) {
      files.add(
          new ManifestFile(
              "f" + i, 1, "dummy", urls[i], "k", List.of("m/" + i), new ChunkLayout(1, 1, "m")));
    }
    return new JobRequest(
        "j", model, new Manifest(model, urls.length, "v1", files), "h:1", List.of("h:1"), null);
  }

  @Test
  void anEmptyPolicyAllowsNothingAndSaysWhatToPass() {
    ValidationException e =
        assertThrows(
            ValidationException.class,
            () -> SourcePolicy.parse("").check(request("file:///etc/hostname")));
    assertEquals("manifest.files[0].download_url", e.field());
    assertTrue(e.getMessage().contains("--allowed-sources"), e.getMessage());
    assertTrue(e.getMessage().contains("--allow-any-source"), e.getMessage());
    assertTrue(SourcePolicy.parse(" ").rules().allowsNothing());
  }

  @Test
  void anyMeansAny() {
    SourcePolicy.ALLOW_ALL.check(request("/etc/anything", "http://anywhere:9/x"));
    assertTrue(SourcePolicy.ALLOW_ALL.allowsAll());
  }

  @Test
  void publicSourcesOnlyRefusesLoopbackAndPrivateHostsAtCreation() throws Exception {
    SourcePolicy publicOnly =
        SourcePolicy.of(io.mooncake.dist.scheduler.domain.SourceRules.parse("", true, true));
    for (String url :
        List.of(
            "http://127.0.0.1:8080/x",
            "http://localhost/x",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.1.2.3/x",
            "http://192.168.0.1/x",
            "http://[::1]/x")) {
      ValidationException e =
          assertThrows(ValidationException.class, () -> publicOnly.check(request(url)));
      assertTrue(e.getMessage().contains("--public-sources-only"), url + ": " + e.getMessage());
    }
    publicOnly.check(request("file:///models/a.bin"));
    assertTrue(
        io.mooncake.dist.scheduler.domain.SourceRules.isPublic(
            java.net.InetAddress.getByName("93.184.216.34")));
  }

  @Test
  void filesUnderAnAllowedRootAndUrlsOfAnAllowedOriginPass() {
    POLICY.check(
        request(
            "file:///models/a/b.bin",
            "/models/c.bin",
            "https://hub.example.com/x/y",
            "https://HUB.example.com:443/z"));
  }

  @Test
  void anyOtherSourceIsRefusedNamingTheFieldAndTheAllowedSources() {
    ValidationException e =
        assertThrows(
            ValidationException.class,
            () -> POLICY.check(request("/models/ok.bin", "file:///etc/passwd")));
    assertEquals("manifest.files[1].download_url", e.field());
    assertTrue(e.getMessage().contains("file:///models/"), e.getMessage());
    assertFalse(POLICY.allows("/models/../etc/passwd"));
    assertFalse(POLICY.allows("https://hub.example.com:8443/x"));
    assertFalse(POLICY.allows("http://hub.example.com/x"));
    assertFalse(POLICY.allows("https://evil.example.com/x"));
  }

  @Test
  void aMalformedPolicyEntryIsRejectedNamingIt() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SourcePolicy.parse("ftp://x/"));
    assertTrue(e.getMessage().contains("ftp://x/"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SourcePolicy.parse("models"));
  }
}
