package io.mooncake.dist.master.auth;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The master's TLS material from PEM files, with errors that name the file and say what to do. */
public final class PemFiles {
  private static final Pattern PKCS8 =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

  private PemFiles() {}

  /** The certificate chain in {@code file}, leaf first. */
  public static List<X509Certificate> certificates(Path file) {
    byte[] bytes = read(file);
    try {
      List<X509Certificate> chain =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes))
              .stream()
              .map(c -> (X509Certificate) c)
              .toList();
      if (chain.isEmpty()) {
        throw new IllegalArgumentException(file + ": no PEM certificate in the file");
      }
      return chain;
    } catch (CertificateException e) {
      throw new IllegalArgumentException(file + ": not a PEM certificate: " + e.getMessage());
    }
  }

  /** An unencrypted PKCS#8 private key ({@code BEGIN PRIVATE KEY}), RSA, EC or Ed25519. */
  public static PrivateKey privateKey(Path file) {
    String text = new String(read(file), StandardCharsets.US_ASCII);
    Matcher m = PKCS8.matcher(text);
    if (!m.find()) {
      throw new IllegalArgumentException(
          file
              + ": expected an unencrypted PKCS#8 key ('BEGIN PRIVATE KEY'); convert with "
              + "openssl pkcs8 -topk8 -nocrypt -in <key> -out <key.pk8.pem>");
    }
    byte[] der = Base64.getMimeDecoder().decode(m.group(1));
    for (String algorithm : new String[] {"RSA", "EC", "Ed25519"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IllegalArgumentException(file + ": not an RSA, EC or Ed25519 private key");
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such file");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage());
    }
  }
}
