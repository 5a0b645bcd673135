package io.mooncake.dist.transfer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made by the {@code openssl} command line (EC P-256, valid one day). A
 * missing {@code openssl} fails the test: a TLS test that cannot make its certificates must not
 * pass by skipping.
 */
final class TestCerts {

  private static final String CONFIG =
      """
            [req]
            distinguished_name = dn
            [dn]
            [ca]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [leaf]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth, clientAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            """;

  /** A certificate and its PKCS#8 key. */
  record Pair(Path certificate, Path key) {}

  private final Path dir;

  TestCerts(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
    Files.writeString(dir.resolve("openssl.cnf"), CONFIG);
  }

  /** A self-signed CA. */
  Pair ca(String name) throws IOException {
    Pair ca = new Pair(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
    openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        ca.key().toString(),
        "-out",
        ca.certificate().toString(),
        "-days",
        "1",
        "-subj",
        "/CN=" + name,
        "-config",
        dir.resolve("openssl.cnf").toString(),
        "-extensions",
        "ca");
    return ca;
  }

  /** A member certificate signed by {@code ca}. */
  Pair leaf(String name, Pair ca) throws IOException {
    Pair leaf = new Pair(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
    openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        leaf.key().toString(),
        "-out",
        leaf.certificate().toString(),
        "-days",
        "1",
        "-subj",
        "/CN=" + name,
        "-config",
        dir.resolve("openssl.cnf").toString(),
        "-extensions",
        "leaf",
        "-CA",
        ca.certificate().toString(),
        "-CAkey",
        ca.key().toString());
    return leaf;
  }

  /** The same key in the traditional (not PKCS#8) EC format. */
  Path traditionalKey(Pair pair) throws IOException {
    Path out = dir.resolve(pair.key().getFileName() + ".sec1");
    openssl("ec", "-in", pair.key().toString(), "-out", out.toString());
    return out;
  }

  private static void openssl(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError(
          "TLS tests need the openssl command line tool: " + e.getMessage(), e);
    }
    try {
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", command) + " failed:\n" + output);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted running openssl", e);
    }
  }
}
