package io.mooncake.dist.cli.master;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * An {@link SSLContext} that trusts exactly the PEM certificates of one file ({@code --ca-cert}).
 */
public final class TrustedCertificates {
  private TrustedCertificates() {}

  public static SSLContext sslContext(Path pem) {
    try (InputStream in = Files.newInputStream(pem)) {
      Collection<? extends Certificate> certs =
          CertificateFactory.getInstance("X.509").generateCertificates(in);
      if (certs.isEmpty()) {
        throw new IllegalArgumentException(pem + ": no PEM certificate in the file");
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : certs) {
        store.setCertificateEntry("trusted-" + i++, c);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(pem + ": no such file");
    } catch (IOException e) {
      throw new IllegalArgumentException(pem + ": cannot read: " + e.getMessage());
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(pem + ": not PEM certificates: " + e.getMessage());
    }
  }
}
