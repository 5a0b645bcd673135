package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credentials by reference: configured on the node, matched per URL, sent to no other origin, never
 * shown.
 */
class SourceCredentialsTest {
  private static final String SECRET = "Bearer s3cr3t-model-registry-token";

  @TempDir Path tmp;

  @Test
  void theLongestPrefixOfTheSameOriginWins() {
    SourceCredentials c =
        SourceCredentials.parse(
            "f",
            """
        # registry tokens
        https://models.example.com/        Authorization: Bearer general
        https://models.example.com/team-a/ Authorization: Bearer team-a
        http://127.0.0.1:8081/m/           X-Api-Key: key-1
        """);
    assertEquals(
        "Bearer team-a",
        c.forUrl(URI.create("https://models.example.com/team-a/x.bin")).orElseThrow().value());
    assertEquals(
        "Bearer general",
        c.forUrl(URI.create("https://MODELS.example.com/team-b/x.bin")).orElseThrow().value());
    assertEquals(
        "Bearer general",
        c.forUrl(URI.create("https://models.example.com:443/x")).orElseThrow().value());
    assertEquals(
        "X-Api-Key", c.forUrl(URI.create("http://127.0.0.1:8081/m/w.bin")).orElseThrow().header());
    // Another scheme, port or host (including one the configured host is a prefix of) gets nothing.
    assertTrue(c.forUrl(URI.create("http://models.example.com/team-a/x.bin")).isEmpty());
    assertTrue(c.forUrl(URI.create("https://models.example.com:8443/x.bin")).isEmpty());
    assertTrue(c.forUrl(URI.create("https://models.example.com.evil.org/x.bin")).isEmpty());
    assertTrue(c.forUrl(URI.create("http://127.0.0.1:8082/m/w.bin")).isEmpty());
    assertTrue(c.forUrl(URI.create("http://127.0.0.1:8081/other/w.bin")).isEmpty());
    assertFalse(c.toString().contains("team-a\"") || c.toString().contains("Bearer"), c.toString());
  }

  @Test
  void badLinesAreRefusedNamingTheLineButNeverQuotingTheValue() {
    for (String[] bad :
        new String[][] {
          {
            "https://h/ Authorization Bearer " + SECRET,
            "f line 1: expected '<url-prefix> <Header-Name>: <value>'"
          },
          {
            "ftp://h/ Authorization: " + SECRET,
            "f line 1: URL prefix must be http(s)://<host>[:<port>][/<path>]"
          },
          {
            "https://u:p@h/ Authorization: " + SECRET,
            "f line 1: URL prefix must not have user info, a query or a fragment"
          },
          {
            "https://h/ Bad Header: " + SECRET,
            "f line 1: header name must be letters, digits and '-'"
          },
          {
            "https://h/ Authorization:   ",
            "f line 1: header value must be non-empty printable ASCII"
          }
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> SourceCredentials.parse("f", bad[0]));
      assertEquals(bad[1], e.getMessage());
      assertFalse(e.getMessage().contains("s3cr3t"));
    }
  }

  @Test
  void aFileOthersCanReadIsRefused() throws Exception {
    Path file = tmp.resolve("creds");
    Files.writeString(file, "https://h/ Authorization: " + SECRET + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    assertEquals(
        file
            + ": group or others may access this credentials file (mode rw-r--r--); make it readable by its"
            + " owner only: chmod 600 "
            + file,
        assertThrows(IllegalArgumentException.class, () -> SourceCredentials.load(file))
            .getMessage());
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertEquals(1, SourceCredentials.load(file).size());
  }

  @Test
  void theHeaderReachesItsOriginOnlyAndARefusalSaysWhy() throws Exception {
    byte[] body = "weights".getBytes(StandardCharsets.UTF_8);
    List<String> registrySaw = new CopyOnWriteArrayList<>();
    List<String> mirrorSaw = new CopyOnWriteArrayList<>();
    try (TestHttpServer registry = new TestHttpServer();
        TestHttpServer mirror = new TestHttpServer()) {
      registry.protect("/m/w.bin", "Authorization", SECRET, body, registrySaw);
      mirror.protect("/w.bin", "Authorization", SECRET, body, mirrorSaw);
      registry.redirect("/moved/w.bin", mirror.url("/w.bin"));
      SourceCredentials creds =
          SourceCredentials.parse("f", registry.url("/m/") + " Authorization: " + SECRET);

      try (InputStream in = new SourceOpener(creds).open(registry.url("/m/w.bin"), body.length)) {
        assertArrayEquals(body, in.readAllBytes());
      }
      assertEquals(List.of(SECRET), registrySaw);

      StoreException anonymous =
          assertThrows(
              StoreException.class,
              () -> new SourceOpener().open(registry.url("/m/w.bin"), body.length));
      assertEquals(
          "HTTP 401 from "
              + registry.url("/m/w.bin")
              + " (no credential configured for it in --source-credentials)",
          anonymous.getMessage());
      assertFalse(anonymous.retryable());

      // A redirect to another origin is followed without the header: the mirror never sees the
      // secret.
      SourceCredentials wide =
          SourceCredentials.parse("f", registry.url("/") + " Authorization: " + SECRET);
      StoreException leaked =
          assertThrows(
              StoreException.class,
              () -> new SourceOpener(wide).open(registry.url("/moved/w.bin"), body.length));
      assertTrue(
          leaked.getMessage().contains("redirected to " + mirror.url("/w.bin")),
          leaked.getMessage());
      assertEquals(List.of("null"), mirrorSaw);
      assertFalse(leaked.getMessage().contains("s3cr3t"));
    }
  }
}
