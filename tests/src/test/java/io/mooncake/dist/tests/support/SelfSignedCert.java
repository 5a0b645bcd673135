package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate for 127.0.0.1/localhost made with the running JDK's {@code keytool},
 * written as the PEM files the launchers take ({@code cert.pem}, PKCS#8 {@code key.pem}).
 */
public record SelfSignedCert(Path certPem, Path keyPem, Certificate certificate) {
  private static final char[] PASSWORD = "changeit".toCharArray();

  public static SelfSignedCert create(Path dir, String name) {
    try {
      Files.createDirectories(dir);
      Path store = dir.resolve(name + ".p12");
      Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
      Process p = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-keystore", store.toString(),
          "-storetype", "PKCS12", "-storepass", new String(PASSWORD), "-alias", name, "-keyalg", "EC",
          "-groupname", "secp256r1", "-validity", "2", "-dname", "CN=" + name,
          "-ext", "SAN=ip:127.0.0.1,dns:localhost")).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + out);
      }
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(store)) {
        ks.load(in, PASSWORD);
      }
      Certificate cert = ks.getCertificate(name);
      PrivateKey key = (PrivateKey) ks.getKey(name, PASSWORD);
      Path certPem = dir.resolve(name + "-cert.pem");
      Path keyPem = dir.resolve(name + "-key.pem");
      Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
      Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));
      return new SelfSignedCert(certPem, keyPem, cert);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A client context trusting only this certificate. */
  public SSLContext trustingContext() {
    try {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      trust.setCertificateEntry("self", certificate);
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
