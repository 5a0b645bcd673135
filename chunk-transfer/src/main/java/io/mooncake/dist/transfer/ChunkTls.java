package io.mooncake.dist.transfer;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * TLS for the chunk port: this node's certificate and key, and the CA certificates it trusts for
 * peers. Both directions verify (mutual TLS): the server requires a client certificate, the client
 * checks the server's, each against the CA. Any certificate the CA signed is a member: the name in
 * it is not compared with the peer's node id, since members are interchangeable. TLS 1.3 only, the
 * JDK's own provider (no native library).
 *
 * <p>Everything is read and checked when built, so a bad file fails the node's start, not its first
 * transfer: unreadable files, a file without certificates, a key that is not unencrypted PKCS#8
 * PEM, a key that does not belong to the certificate, an expired certificate, a certificate the CA
 * does not sign.
 */
public final class ChunkTls {

  /** Which of the three files a problem is about. */
  public enum Part {
    CERTIFICATE("certificate"),
    PRIVATE_KEY("private key"),
    TRUSTED_CA("CA certificates");

    private final String label;

    Part(String label) {
      this.label = label;
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /** A TLS file that cannot be used, naming which one and why. */
  public static final class InvalidFileException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final Part part;
    private final transient Path file;

    InvalidFileException(Part part, Path file, String problem, Throwable cause) {
      super(part + " " + file + ": " + problem, cause);
      this.part = part;
      this.file = file;
    }

    /**
     * @return which file
     */
    public Part part() {
      return part;
    }

    /**
     * @return the file's path
     */
    public Path file() {
      return file;
    }
  }

  private static final Pattern PEM_KEY =
      Pattern.compile(
          "-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
  private static final String[] PROTOCOLS = {"TLSv1.3"};

  private final SslContext server;
  private final SslContext client;

  private ChunkTls(SslContext server, SslContext client) {
    this.server = server;
    this.client = client;
  }

  /**
   * @param certificate PEM file with this node's certificate (its chain may follow)
   * @param privateKey PEM file with the certificate's private key, unencrypted PKCS#8 ({@code
   *     -----BEGIN PRIVATE KEY-----})
   * @param trustedCa PEM file with the CA certificate(s) that sign the members' certificates
   * @throws InvalidFileException naming the file that cannot be used and why
   */
  public static ChunkTls fromPem(Path certificate, Path privateKey, Path trustedCa) {
    Objects.requireNonNull(certificate, "certificate");
    Objects.requireNonNull(privateKey, "privateKey");
    Objects.requireNonNull(trustedCa, "trustedCa");
    List<X509Certificate> chain = certificates(Part.CERTIFICATE, certificate);
    PrivateKey key = privateKey(privateKey);
    List<X509Certificate> anchors = certificates(Part.TRUSTED_CA, trustedCa);
    X509Certificate own = chain.get(0);
    try {
      own.checkValidity();
    } catch (CertificateException e) {
      throw new InvalidFileException(
          Part.CERTIFICATE,
          certificate,
          "not valid now (valid from "
              + own.getNotBefore().toInstant()
              + " to "
              + own.getNotAfter().toInstant()
              + ")",
          e);
    }
    if (!belongTogether(key, own)) {
      throw new InvalidFileException(
          Part.PRIVATE_KEY,
          privateKey,
          "does not belong to the certificate in " + certificate,
          null);
    }
    verifyChain(chain, anchors, certificate, trustedCa);
    try {
      SslContext server =
          SslContextBuilder.forServer(key, chain)
              .trustManager(anchors)
              .clientAuth(ClientAuth.REQUIRE)
              .sslProvider(SslProvider.JDK)
              .protocols(PROTOCOLS)
              .build();
      SslContext client =
          SslContextBuilder.forClient()
              .keyManager(key, chain)
              .trustManager(anchors)
              .sslProvider(SslProvider.JDK)
              .protocols(PROTOCOLS)
              // Members are interchangeable: the CA's signature is what admits a peer, not its
              // name.
              .endpointIdentificationAlgorithm(null)
              .build();
      return new ChunkTls(server, client);
    } catch (SSLException | RuntimeException e) {
      throw new InvalidFileException(
          Part.CERTIFICATE, certificate, "cannot set up TLS with it: " + e.getMessage(), e);
    }
  }

  SslContext server() {
    return server;
  }

  SslContext client() {
    return client;
  }

  private static List<X509Certificate> certificates(Part part, Path file) {
    byte[] bytes = read(part, file);
    List<X509Certificate> certs = new ArrayList<>();
    try {
      for (var c :
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes))) {
        certs.add((X509Certificate) c);
      }
    } catch (CertificateException e) {
      throw new InvalidFileException(part, file, "not PEM certificates: " + e.getMessage(), e);
    }
    if (certs.isEmpty()) {
      throw new InvalidFileException(part, file, "holds no certificate", null);
    }
    return certs;
  }

  private static PrivateKey privateKey(Path file) {
    String text = new String(read(Part.PRIVATE_KEY, file), StandardCharsets.US_ASCII);
    Matcher m = PEM_KEY.matcher(text);
    if (!m.find()) {
      throw new InvalidFileException(Part.PRIVATE_KEY, file, "holds no PEM private key", null);
    }
    String type = m.group(1);
    if (!type.equals("PRIVATE KEY")) {
      String problem =
          type.equals("ENCRYPTED PRIVATE KEY")
              ? "is encrypted; give an unencrypted PKCS#8 key (openssl pkcs8 -topk8 -nocrypt) readable by this user only"
              : "is a '"
                  + type
                  + "', not PKCS#8; convert it with: openssl pkcs8 -topk8 -nocrypt -in "
                  + file
                  + " -out <new file>";
      throw new InvalidFileException(Part.PRIVATE_KEY, file, problem, null);
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(m.group(2).trim());
    } catch (IllegalArgumentException e) {
      throw new InvalidFileException(Part.PRIVATE_KEY, file, "bad base64: " + e.getMessage(), e);
    }
    for (String algorithm : new String[] {"RSA", "EC", "EdDSA", "RSASSA-PSS"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm; try the next
      }
    }
    throw new InvalidFileException(
        Part.PRIVATE_KEY, file, "not an RSA, EC or EdDSA PKCS#8 key", null);
  }

  /** Signs with the key and verifies with the certificate's public key. */
  private static boolean belongTogether(PrivateKey key, X509Certificate cert) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "EdDSA", "Ed25519", "Ed448" -> cert.getPublicKey().getAlgorithm();
          default -> null;
        };
    if (algorithm == null) {
      return true; // no cheap check for this kind of key; the TLS handshake will tell
    }
    try {
      byte[] probe = "mooncake chunk tls key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /** Peers check our certificate against the same CA; fail here rather than on every connection. */
  private static void verifyChain(
      List<X509Certificate> chain,
      List<X509Certificate> anchors,
      Path certificate,
      Path trustedCa) {
    try {
      Set<TrustAnchor> trust = new HashSet<>();
      for (X509Certificate ca : anchors) {
        trust.add(new TrustAnchor(ca, null));
      }
      PKIXParameters params = new PKIXParameters(trust);
      params.setRevocationEnabled(false);
      // A chain file that ends with the CA itself is common; the path stops below the anchor.
      List<X509Certificate> path = new ArrayList<>(chain);
      path.removeIf(c -> path.indexOf(c) > 0 && anchors.contains(c));
      CertPathValidator.getInstance("PKIX")
          .validate(CertificateFactory.getInstance("X.509").generateCertPath(path), params);
    } catch (GeneralSecurityException e) {
      throw new InvalidFileException(
          Part.CERTIFICATE,
          certificate,
          "not signed by a CA in " + trustedCa + ": " + e.getMessage(),
          e);
    }
  }

  private static byte[] read(Part part, Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new InvalidFileException(part, file, "cannot read it: " + e, e);
    }
  }
}
