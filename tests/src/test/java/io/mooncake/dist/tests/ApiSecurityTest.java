package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.TestCerts;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API as an attacker and an operator meet it, on a real {@code bin/mooncake_master}:
 * bearer tokens with read and write permission, HTTPS, and the launcher refusing to start open
 * unless told {@code --no-auth}.
 */
class ApiSecurityTest {
  private static final String JOB = "019d3ca8-c2e7-7d73-ab73-445f9143d1eb";
  private static final String READ = "read-token-abcdefghijklmnop";
  private static final String WRITE = "write-token-abcdefghijklmnop";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void tokensGateEveryRouteButTheProbeAndTheStaticPagesOverHttps() throws Exception {
    Path tokens =
        TestFiles.privateFile(
            tmp.resolve("tokens"),
            "# who may call the API\nread "
                + READ
                + " dashboards\nwrite "
                + WRITE
                + " control-plane\n");
    TestCerts certs = new TestCerts(tmp.resolve("tls"));
    TestCerts.Pair ca = certs.ca("api-ca");
    TestCerts.Pair cert = certs.leaf("master", ca);
    int port = TestFiles.freePort();
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      procs.start(
          "master",
          "mooncake_master",
          "--http-port",
          String.valueOf(port),
          "--allow-any-source",
          "--db-url",
          pg.url(),
          "--api-tokens-file",
          tokens.toString(),
          "--tls-cert",
          cert.certificate().toString(),
          "--tls-key",
          cert.key().toString());
      String base = "https://127.0.0.1:" + port;
      Api anonymous = new Api(base, null, TestCerts.trusting(ca.certificate()));
      Processes.await(
          "master /health over https",
          Duration.ofSeconds(60),
          () -> {
            try {
              return anonymous.get("/health").status() == 200;
            } catch (UncheckedIOException e) {
              return false;
            }
          });
      Api reader = anonymous.withToken(READ);
      Api writer = anonymous.withToken(WRITE);

      // Public: the probe and the static documents, which carry no data.
      assertEquals(200, anonymous.get("/health").status());
      assertEquals(200, anonymous.get("/openapi").status());

      // No token, a wrong token, a token in the wrong scheme: 401 with a JSON error, even for paths
      // no route serves.
      Api.Reply none = anonymous.get("/api/v1/model-distribution/jobs?job_id=" + JOB);
      assertEquals(401, none.status(), String.valueOf(none.json()));
      assertTrue(
          none.json().get("error_message").asText().contains("Authorization: Bearer"),
          none.json().toString());
      assertEquals(401, anonymous.get("/no/such/route").status());
      assertEquals(401, anonymous.get("/metrics").status());
      Api.Reply wrong = anonymous.withToken("not-a-token-of-this-master").get("/api/v1/nodes");
      assertEquals(401, wrong.status());
      assertEquals("invalid bearer token", wrong.json().get("error_message").asText());
      assertEquals(
          401, anonymous.post("/api/v1/model-distribution/jobs", Requests.rfcExample()).status());

      // A read token reads but cannot write; the refused POST writes nothing.
      assertEquals(200, reader.get("/api/v1/nodes").status());
      assertEquals(200, reader.get("/api/v1/model-distribution/jobs").status());
      Api.Reply forbidden = reader.post("/api/v1/model-distribution/jobs", Requests.rfcExample());
      assertEquals(403, forbidden.status(), String.valueOf(forbidden.json()));
      assertTrue(
          forbidden.json().get("error_message").asText().contains("'dashboards' may only read"));
      assertEquals(404, reader.get("/api/v1/model-distribution/jobs?job_id=" + JOB).status());
      assertEquals(
          403, reader.post("/api/v1/model-distribution/jobs/cancel?job_id=" + JOB, "").status());

      // A write token creates and also reads.
      Api.Reply created = writer.post("/api/v1/model-distribution/jobs", Requests.rfcExample());
      assertEquals(201, created.status(), String.valueOf(created.json()));
      assertEquals(200, writer.get("/api/v1/model-distribution/jobs?job_id=" + JOB).status());
      assertEquals(200, reader.get("/api/v1/model-distribution/jobs?job_id=" + JOB).status());

      // Pins: listed with a read token, changed only with a write token, which is named as the
      // pin's author; a user's mistake is a 400 naming the parameter.
      String pin =
          "/api/v1/model-distribution/pins?model_id=demo-model&revision=r1&format=bin"
              + "&provider=local&nodes=127.0.0.1:25002";
      assertEquals(401, anonymous.get("/api/v1/model-distribution/pins").status());
      assertEquals(403, reader.post(pin, "").status());
      assertEquals(403, reader.delete(pin).status());
      assertEquals(200, writer.post(pin, "").status());
      Api.Reply pins = reader.get("/api/v1/model-distribution/pins");
      assertEquals(200, pins.status());
      assertEquals("control-plane", pins.json().get("pins").get(0).get("pinned_by").asText());
      Api.Reply badNode = writer.post(pin.replace("127.0.0.1:25002", "127.0.0.1:25002,nope"), "");
      assertEquals(400, badNode.status());
      assertEquals("nodes[1]", badNode.json().get("field").asText(), badNode.json().toString());
      Api.Reply noModel = writer.post("/api/v1/model-distribution/pins?nodes=127.0.0.1:1", "");
      assertEquals("model_id", noModel.json().get("field").asText());
      assertEquals(200, writer.delete(pin).status());
      assertEquals(0, reader.get("/api/v1/model-distribution/pins").json().get("pins").size());

      // The port speaks only TLS, and a client that does not trust the certificate gets nowhere.
      assertThrows(
          UncheckedIOException.class,
          () -> new Api("http://127.0.0.1:" + port, WRITE, null).get("/health"));
      assertThrows(UncheckedIOException.class, () -> new Api(base, WRITE, null).get("/health"));

      // The tokens never reach the log.
      String log = procs.log("master");
      assertTrue(log.contains("by token 'control-plane'"), log);
      assertTrue(!log.contains(READ) && !log.contains(WRITE), "a token was logged:\n" + log);
    }
  }

  @Test
  void theMasterRefusesToStartOpenOrWithUnsafeSettings() throws Exception {
    Processes.Run open = Processes.run("mooncake_master", "--db-url", pg.url());
    assertEquals(2, open.exitCode(), open.output());
    assertTrue(
        open.output().contains("--api-tokens-file") && open.output().contains("--no-auth"),
        open.output());

    Path readable = tmp.resolve("readable-tokens");
    Files.writeString(readable, "write " + WRITE + "\n");
    Files.setPosixFilePermissions(
        readable, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    Processes.Run leaky =
        Processes.run(
            "mooncake_master", "--db-url", pg.url(), "--api-tokens-file", readable.toString());
    assertEquals(2, leaky.exitCode(), leaky.output());
    assertTrue(leaky.output().contains("chmod 600 " + readable), leaky.output());

    Path weak = TestFiles.privateFile(tmp.resolve("weak-tokens"), "write short\n");
    Processes.Run shortToken =
        Processes.run(
            "mooncake_master", "--db-url", pg.url(), "--api-tokens-file", weak.toString());
    assertEquals(2, shortToken.exitCode(), shortToken.output());
    assertTrue(
        shortToken.output().contains(weak + " line 1: token shorter than 16"), shortToken.output());

    Path good = TestFiles.privateFile(tmp.resolve("tokens"), "write " + WRITE + "\n");
    Processes.Run both =
        Processes.run(
            "mooncake_master",
            "--db-url",
            pg.url(),
            "--api-tokens-file",
            good.toString(),
            "--no-auth");
    assertEquals(2, both.exitCode(), both.output());

    TestCerts certs = new TestCerts(tmp.resolve("tls"));
    TestCerts.Pair cert = certs.leaf("master", certs.ca("api-ca"));
    Processes.Run halfTls =
        Processes.run(
            "mooncake_master",
            "--db-url",
            pg.url(),
            "--no-auth",
            "--tls-cert",
            cert.certificate().toString());
    assertEquals(2, halfTls.exitCode(), halfTls.output());
    assertTrue(halfTls.output().contains("--tls-cert and --tls-key go together"), halfTls.output());

    Processes.Run keyAsCert =
        Processes.run(
            "mooncake_master",
            "--db-url",
            pg.url(),
            "--no-auth",
            "--tls-cert",
            cert.key().toString(),
            "--tls-key",
            cert.key().toString());
    assertEquals(2, keyAsCert.exitCode(), keyAsCert.output());
    assertTrue(keyAsCert.output().contains("--tls-cert: " + cert.key()), keyAsCert.output());

    Path openKey = Files.copy(cert.key(), tmp.resolve("open-master.key"));
    java.nio.file.Files.setPosixFilePermissions(
        openKey, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    Processes.Run worldReadableKey =
        Processes.run(
            "mooncake_master",
            "--db-url",
            pg.url(),
            "--no-auth",
            "--tls-cert",
            cert.certificate().toString(),
            "--tls-key",
            openKey.toString());
    assertEquals(2, worldReadableKey.exitCode(), worldReadableKey.output());
    assertTrue(
        worldReadableKey.output().contains("--tls-key: " + openKey + ": group or others may"),
        worldReadableKey.output());
    assertTrue(
        worldReadableKey.output().contains("chmod 600 " + openKey), worldReadableKey.output());
  }
}
