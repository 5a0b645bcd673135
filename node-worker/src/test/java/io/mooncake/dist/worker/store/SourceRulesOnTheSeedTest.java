package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.SourceRules;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seed applies its job's source rules to every hop, not only the URL the master checked: a
 * redirect to an origin the rules do not name is refused before it is fetched, {@code
 * --public-sources-only} refuses loopback hosts, a link under an allowed root leading out of it is
 * refused, and errors never show a redirect's query string.
 */
class SourceRulesOnTheSeedTest {
  @TempDir Path tmp;

  private final SourceOpener opener = new SourceOpener();

  private static String origin(TestHttpServer http) {
    String u = http.url("/");
    return u.substring(0, u.length() - 1);
  }

  @Test
  void aRedirectToAnOriginTheRulesDoNotNameIsRefusedBeforeItIsFetched() throws Exception {
    List<String> seenByB = new ArrayList<>();
    try (TestHttpServer a = new TestHttpServer();
        TestHttpServer b =
            new TestHttpServer()
                .protect("/internal/admin", "X-None", "never", "secret".getBytes(), seenByB)) {
      a.redirect("/model.bin", b.url("/internal/admin"));
      SourceRules onlyA = SourceRules.parse(origin(a), false, false);
      StoreException e =
          assertThrows(StoreException.class, () -> opener.open(a.url("/model.bin"), 6, onlyA));
      assertFalse(e.retryable());
      assertTrue(e.getMessage().contains("redirect from " + a.url("/model.bin")), e.getMessage());
      assertTrue(e.getMessage().contains("is not allowed"), e.getMessage());
      // "HTTP 401", not "401": the ports in the message may contain those digits
      assertFalse(e.getMessage().contains("HTTP 401"), "nothing of B's answer: " + e.getMessage());
      assertTrue(seenByB.isEmpty(), "B was never asked");
    }
  }

  @Test
  void aRedirectWithinTheAllowedOriginsIsFollowed() throws Exception {
    byte[] content = randomBytes(3, 777);
    try (TestHttpServer a = new TestHttpServer();
        TestHttpServer b = new TestHttpServer().serve("/real", content)) {
      a.redirect("/moved", b.url("/real"));
      SourceRules both = SourceRules.parse(origin(a) + "," + origin(b), false, false);
      try (InputStream in = opener.open(a.url("/moved"), content.length, both)) {
        assertArrayEquals(content, in.readAllBytes());
      }
    }
  }

  @Test
  void publicSourcesOnlyRefusesALoopbackHostEvenUnderAnySource() throws Exception {
    try (TestHttpServer a = new TestHttpServer().serve("/m", new byte[] {1})) {
      StoreException e =
          assertThrows(
              StoreException.class,
              () -> opener.open(a.url("/m"), 1, new SourceRules(true, List.of(), List.of(), true)));
      assertTrue(e.getMessage().contains("127.0.0.1"), e.getMessage());
      assertTrue(e.getMessage().contains("--public-sources-only"), e.getMessage());
    }
  }

  @Test
  void aLinkUnderAnAllowedRootLeadingOutOfItIsRefused() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("models"));
    Path secret = Files.writeString(tmp.resolve("hostname"), "secret\n");
    Files.createSymbolicLink(root.resolve("model.bin"), secret);
    SourceRules rules = SourceRules.parse(root.toUri().toString(), false, false);
    StoreException e =
        assertThrows(
            StoreException.class,
            () -> opener.open(root.resolve("model.bin").toString(), 7, rules));
    assertTrue(e.getMessage().contains("outside the allowed sources"), e.getMessage());
    Path plain = Files.writeString(root.resolve("ok.bin"), "ok");
    try (InputStream in = opener.open(plain.toUri().toString(), 2, rules)) {
      assertEquals("ok", new String(in.readAllBytes()));
    }
  }

  @Test
  void noRulesAllowNothing() {
    StoreException e =
        assertThrows(StoreException.class, () -> opener.open("/etc/hostname", 1, SourceRules.NONE));
    assertTrue(e.getMessage().contains("--allowed-sources"), e.getMessage());
  }

  @Test
  void aRedirectsSignedQueryStringNeverReachesTheError() throws Exception {
    try (TestHttpServer a = new TestHttpServer().respond("/blob", 404, new byte[0])) {
      a.redirect(
          "/model.bin",
          "http://user:pw@127.0.0.1:"
              + a.url("/").split(":")[2].replace("/", "")
              + "/blob?X-Amz-Signature=deadbeefsecret&X-Amz-Credential=AKIA");
      StoreException e =
          assertThrows(StoreException.class, () -> opener.open(a.url("/model.bin"), 1));
      assertTrue(e.getMessage().contains("HTTP 404"), e.getMessage());
      assertTrue(e.getMessage().contains("/blob?..."), e.getMessage());
      assertFalse(e.getMessage().contains("deadbeefsecret"), e.getMessage());
      assertFalse(e.getMessage().contains("AKIA"), e.getMessage());
      assertFalse(e.getMessage().contains("pw@"), e.getMessage());
    }
  }

  @Test
  void aSourceThatStallsMidBodyFailsRetryablyInsteadOfHoldingTheSlot() throws Exception {
    try (java.net.ServerSocket server =
        new java.net.ServerSocket(0, 5, java.net.InetAddress.getLoopbackAddress())) {
      Thread.ofPlatform()
          .daemon()
          .start(
              () -> {
                try (java.net.Socket s = server.accept()) {
                  s.getInputStream().read(new byte[4096]);
                  s.getOutputStream()
                      .write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc".getBytes());
                  s.getOutputStream().flush();
                  Thread.sleep(30_000);
                } catch (Exception e) {
                  // the test is over
                }
              });
      SourceOpener impatient =
          new SourceOpener(SourceCredentials.NONE, java.time.Duration.ofMillis(500));
      long started = System.nanoTime();
      try (InputStream in =
          impatient.open("http://127.0.0.1:" + server.getLocalPort() + "/m.bin", 1000)) {
        assertEquals(3, in.readNBytes(3).length);
        java.io.IOException e = assertThrows(java.io.IOException.class, in::read);
        assertTrue(e.getMessage().contains("no byte from"), e.getMessage());
      }
      assertTrue(System.nanoTime() - started < java.time.Duration.ofSeconds(10).toNanos());
    }
  }
}
