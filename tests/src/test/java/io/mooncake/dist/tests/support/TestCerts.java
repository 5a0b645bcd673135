package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A CA and member certificates for TLS tests, made by the {@code openssl} command line (EC P-256,
 * PKCS#8 keys, valid one day). A missing {@code openssl} fails the test rather than skipping it.
 */
public final class TestCerts {
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

  /** A certificate and its key. */
  public record Pair(Path certificate, Path key) {}

  private final Path dir;

  public TestCerts(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
    Files.writeString(dir.resolve("openssl.cnf"), CONFIG);
  }

  public Pair ca(String name) {
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

  public Pair leaf(String name, Pair ca) {
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

  /**
   * A client TLS context that trusts exactly the certificates in {@code pem} (e.g. a CA from {@link
   * #ca}).
   */
  public static javax.net.ssl.SSLContext trusting(Path pem) {
    try (java.io.InputStream in = Files.newInputStream(pem)) {
      java.security.KeyStore trust =
          java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
      trust.load(null, null);
      int i = 0;
      for (java.security.cert.Certificate c :
          java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("trusted-" + i++, c);
      }
      javax.net.ssl.TrustManagerFactory tmf =
          javax.net.ssl.TrustManagerFactory.getInstance(
              javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException | java.security.GeneralSecurityException e) {
      throw new AssertionError("cannot build a trust context from " + pem, e);
    }
  }

  private static void openssl(String... args) {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", command) + " failed:\n" + output);
      }
    } catch (IOException e) {
      throw new AssertionError(
          "TLS tests need the openssl command line tool: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted running openssl", e);
    }
  }
}
