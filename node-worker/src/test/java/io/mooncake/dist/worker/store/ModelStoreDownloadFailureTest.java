package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.payload;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelStoreDownloadFailureTest {
  @TempDir Path tmp;

  private ModelStore store() {
    return new ModelStore(tmp.resolve("data"));
  }

  private Path source(String name, byte[] content) throws Exception {
    Path p = tmp.resolve(name);
    Files.write(p, content);
    return p;
  }

  /** Downloads {@code file}, expects a failure, and checks nothing of the file is left behind. */
  private StoreException failingDownload(FilePlan file) {
    ModelStore store = store();
    StoreException e =
        assertThrows(StoreException.class, () -> store.download(payload(file), b -> {}));
    assertFalse(Files.exists(store.partialPath(TestModels.MODEL, file)), "no .partial left");
    assertFalse(Files.exists(store.finalPath(TestModels.MODEL, file)), "no final file");
    return e;
  }

  @Test
  void aMissingSourceFileIsAPermanentFailureNamingThePath() {
    Path missing = tmp.resolve("nowhere/model.bin");
    FilePlan file = plan(0, "model.bin", new byte[100], 64, null, missing.toUri().toString());

    StoreException e = failingDownload(file);

    assertFalse(e.retryable());
    assertEquals("source file not found: " + missing, e.getMessage());
  }

  @Test
  void aDirectoryAsSourceIsRefusedInPlainWords() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("adir"));
    FilePlan file = plan(0, "model.bin", new byte[100], 64, null, dir.toString());

    StoreException e = failingDownload(file);

    assertFalse(e.retryable());
    assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
  }

  @Test
  void http404IsPermanentAndSaysHttp404() throws Exception {
    try (TestHttpServer http = new TestHttpServer().respond("/gone", 404, "no".getBytes())) {
      FilePlan file = plan(0, "model.bin", new byte[100], 64, null, http.url("/gone"));

      StoreException e = failingDownload(file);

      assertFalse(e.retryable());
      assertEquals("HTTP 404 from " + http.url("/gone"), e.getMessage());
    }
  }

  @Test
  void http500IsRetryable() throws Exception {
    try (TestHttpServer http = new TestHttpServer().respond("/boom", 500, "oops".getBytes())) {
      FilePlan file = plan(0, "model.bin", new byte[100], 64, null, http.url("/boom"));

      StoreException e = failingDownload(file);

      assertTrue(e.retryable());
      assertTrue(e.getMessage().contains("HTTP 500"), e.getMessage());
    }
  }

  @Test
  void aSourceShorterThanSizeBytesIsAPermanentSizeMismatch() throws Exception {
    byte[] manifestContent = randomBytes(1, 5_000);
    Path src = source("short.bin", java.util.Arrays.copyOf(manifestContent, 4_000));
    FilePlan file = plan(0, "short.bin", manifestContent, 1_024, null, src.toString());

    StoreException e = failingDownload(file);

    assertFalse(e.retryable());
    assertEquals("source " + src + " is 4000 bytes, manifest size_bytes is 5000", e.getMessage());
  }

  @Test
  void aSourceLongerThanSizeBytesIsAPermanentSizeMismatch() throws Exception {
    byte[] manifestContent = randomBytes(2, 5_000);
    Path src = source("long.bin", randomBytes(2, 7_500));
    FilePlan file = plan(0, "long.bin", manifestContent, 1_024, null, src.toUri().toString());

    StoreException e = failingDownload(file);

    assertFalse(e.retryable());
    assertEquals("source " + src + " is 7500 bytes, manifest size_bytes is 5000", e.getMessage());
  }

  @Test
  void aContentLengthThatDisagreesWithTheManifestFailsBeforeReading() throws Exception {
    try (TestHttpServer http = new TestHttpServer().serve("/m", randomBytes(3, 3_000))) {
      FilePlan file = plan(0, "m.bin", new byte[2_000], 1_000, null, http.url("/m"));

      StoreException e = failingDownload(file);

      assertFalse(e.retryable());
      assertEquals(
          "source " + http.url("/m") + " has Content-Length 3000, manifest size_bytes 2000",
          e.getMessage());
    }
  }

  @Test
  void aWholeFileChecksumMismatchIsRefusedAndNamesBothDigests() throws Exception {
    byte[] content = randomBytes(4, 9_000);
    Path src = source("c.bin", content);
    String wrong = sha256Hex(randomBytes(5, 10));
    FilePlan file = plan(0, "c.bin", content, 4_000, wrong, src.toString());

    StoreException e = failingDownload(file);

    assertFalse(e.retryable());
    assertEquals(
        "checksum mismatch for c.bin: manifest sha256 "
            + wrong
            + ", source sha256 "
            + sha256Hex(content),
        e.getMessage());
  }

  @Test
  void aConnectionDroppedMidBodyIsRetryableAndNamesTheUrl() throws Exception {
    byte[] content = randomBytes(6, 200_000);
    try (var server =
        new TestHttpServer.DroppingServer(
            java.util.Arrays.copyOf(content, 80_000), content.length)) {
      FilePlan file = plan(0, "d.bin", content, 64_000, null, server.url("/d"));

      StoreException e = failingDownload(file);

      assertTrue(e.retryable(), e.getMessage());
      assertTrue(e.getMessage().contains(server.url("/d")), e.getMessage());
    }
  }

  @Test
  void anUnreachableServerIsRetryable() throws Exception {
    int port;
    try (var s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    FilePlan file = plan(0, "u.bin", new byte[10], 10, null, "http://127.0.0.1:" + port + "/u");

    StoreException e = failingDownload(file);

    assertTrue(e.retryable());
    assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
  }

  @Test
  void aFailingSecondFileKeepsTheCompletedFirstFileAndRemovesOnlyItsOwnPartial() throws Exception {
    byte[] first = randomBytes(7, 3_000);
    FilePlan ok = plan(0, "a.bin", first, 1_000, null, source("a.bin", first).toString());
    FilePlan bad =
        plan(1, "b.bin", new byte[500], 1_000, null, tmp.resolve("missing.bin").toString());
    ModelStore store = store();

    assertThrows(StoreException.class, () -> store.download(payload(ok, bad), b -> {}));

    assertArrayEquals(first, Files.readAllBytes(store.finalPath(TestModels.MODEL, ok)));
    assertFalse(Files.exists(store.partialPath(TestModels.MODEL, bad)));
  }

  @Test
  void objectsThatDoNotTileTheFileAreRejectedBeforeAnyByteIsWritten() throws Exception {
    byte[] content = randomBytes(8, 1_000);
    Path src = source("g.bin", content);
    FilePlan gap =
        new FilePlan(
            0,
            "g.bin",
            1_000,
            null,
            src.toString(),
            List.of(
                new ObjectPlan("o0", 0, 0, 400, null), new ObjectPlan("o1", 1, 500, 500, null)));

    StoreException e = failingDownload(gap);

    assertFalse(e.retryable());
    assertTrue(e.getMessage().contains("o1 starts at byte 500"), e.getMessage());
  }

  @Test
  void aManifestPathThatEscapesTheModelDirectoryIsRefused() throws Exception {
    FilePlan evil =
        plan(
            0,
            "../../../../../etc/evil",
            new byte[1],
            1,
            null,
            source("e", new byte[1]).toString());

    StoreException e =
        assertThrows(StoreException.class, () -> store().download(payload(evil), b -> {}));

    assertFalse(e.retryable());
    assertTrue(e.getMessage().contains("escapes"), e.getMessage());
  }
}
