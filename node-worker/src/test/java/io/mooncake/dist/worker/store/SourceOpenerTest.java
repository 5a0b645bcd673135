package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SourceOpenerTest {
  @TempDir Path tmp;

  private final SourceOpener opener = new SourceOpener();

  @Test
  void aFileUrlAndAnAbsolutePathOpenTheSameBytes() throws Exception {
    byte[] content = randomBytes(1, 1_234);
    Path p = Files.write(tmp.resolve("a b.bin"), content);

    try (InputStream viaUrl = opener.open(p.toUri().toString(), content.length);
        InputStream viaPath = opener.open(p.toString(), content.length)) {
      assertArrayEquals(content, viaUrl.readAllBytes());
      assertArrayEquals(content, viaPath.readAllBytes());
    }
  }

  @Test
  void redirectsAreFollowed() throws Exception {
    byte[] content = randomBytes(2, 4_321);
    try (TestHttpServer http = new TestHttpServer().serve("/real", content)) {
      http.redirect("/moved", http.url("/real"));
      try (InputStream in = opener.open(http.url("/moved"), content.length)) {
        assertArrayEquals(content, in.readAllBytes());
      }
    }
  }

  @Test
  void http429IsRetryableAndHttp403IsNot() throws Exception {
    try (TestHttpServer http =
        new TestHttpServer()
            .respond("/slow-down", 429, new byte[0])
            .respond("/forbidden", 403, "denied".getBytes())) {
      StoreException busy =
          assertThrows(StoreException.class, () -> opener.open(http.url("/slow-down"), 1));
      StoreException denied =
          assertThrows(StoreException.class, () -> opener.open(http.url("/forbidden"), 1));

      assertTrue(busy.retryable());
      assertFalse(denied.retryable());
      assertEquals(
          "HTTP 403 from "
              + http.url("/forbidden")
              + " (no credential configured for it in --source-credentials)",
          denied.getMessage());
    }
  }

  @Test
  void anUnsupportedSchemeIsRefusedPermanently() {
    StoreException e =
        assertThrows(StoreException.class, () -> opener.open("s3://bucket/model.bin", 1));

    assertFalse(e.retryable());
    assertTrue(
        e.getMessage().contains("unsupported source URL s3://bucket/model.bin"), e.getMessage());
  }

  @Test
  void anUnreadableFileIsRefusedInPlainWords() throws Exception {
    Path p = Files.write(tmp.resolve("secret.bin"), new byte[3]);
    assertTrue(p.toFile().setReadable(false, false));
    org.junit.jupiter.api.Assumptions.assumeFalse(
        Files.isReadable(p), "running as a user that reads anything");

    StoreException e = assertThrows(StoreException.class, () -> opener.open(p.toString(), 3));

    assertFalse(e.retryable());
    assertTrue(e.getMessage().contains("not readable"), e.getMessage());
  }
}
