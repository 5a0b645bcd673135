package io.mooncake.dist.transfer;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chunk protocol over mutual TLS, with certificates made by openssl for this run: a member CA,
 * two member certificates, and a stranger CA with its own certificate.
 */
@Timeout(120)
class TlsTransferTest {

  @TempDir static Path dir;

  static TestCerts.Pair ca;
  static TestCerts.Pair serverCert;
  static TestCerts.Pair clientCert;
  static TestCerts.Pair strangerCa;
  static TestCerts.Pair strangerCert;
  static TestCerts certs;
  static ChunkSecurity serverSecurity;
  static Path source;
  static long length;
  static ChunkServer server;

  @BeforeAll
  static void start() throws Exception {
    certs = new TestCerts(dir.resolve("certs"));
    ca = certs.ca("member-ca");
    serverCert = certs.leaf("node-a", ca);
    clientCert = certs.leaf("node-b", ca);
    strangerCa = certs.ca("stranger-ca");
    strangerCert = certs.leaf("stranger", strangerCa);
    length = (5L << 20) + 4321;
    source = TestData.largeFile(dir, "model.bin", length, 60);
    // Short enough that a plaintext client, which waits for a challenge that never comes, is cut
    // soon.
    serverSecurity =
        TestData.SECURITY
            .withHandshakeTimeout(java.time.Duration.ofSeconds(5))
            .withTls(
                ChunkTls.fromPem(serverCert.certificate(), serverCert.key(), ca.certificate()));
    server =
        ChunkServer.start(
            "127.0.0.1",
            0,
            id ->
                id.equals("obj") ? Optional.of(new FileRange(source, 0, length)) : Optional.empty(),
            serverSecurity);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void aMemberFetchesAWholeObjectOverTlsIntact() throws Exception {
    ChunkSecurity security =
        TestData.SECURITY.withTls(
            ChunkTls.fromPem(clientCert.certificate(), clientCert.key(), ca.certificate()));
    Path target = dir.resolve("copy");
    try (ChunkClient client = new ChunkClient(security);
        FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      FetchResult result =
          client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, length, out, 0, null);

      assertEquals(length, result.bytes());
      assertEquals(TestData.sha256(source), result.sha256Hex());
    }
    assertEquals(-1L, Files.mismatch(source, target));
  }

  @Test
  void aClientWhoseCertificateTheServersCaDidNotSignIsRefused() throws Exception {
    // The client trusts both CAs, so it accepts the server; the server trusts only the member CA.
    Path bothCas = dir.resolve("both-cas.pem");
    Files.writeString(
        bothCas, Files.readString(ca.certificate()) + Files.readString(strangerCa.certificate()));
    ChunkSecurity stranger =
        TestData.SECURITY.withTls(
            ChunkTls.fromPem(strangerCert.certificate(), strangerCert.key(), bothCas));
    Path target = dir.resolve("refused");
    try (ChunkClient client = new ChunkClient(stranger);
        FileChannel out = FileChannel.open(target, CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 1_000, out, 0, null));

      assertEquals(Kind.AUTHENTICATION, e.kind(), e.toString());
    }
    assertEquals(0, Files.size(target));
  }

  @Test
  void aClientRefusesAServerWhoseCertificateItsCaDidNotSign() throws Exception {
    ChunkSecurity stranger =
        TestData.SECURITY.withTls(
            ChunkTls.fromPem(
                strangerCert.certificate(), strangerCert.key(), strangerCa.certificate()));
    try (ChunkClient client = new ChunkClient(stranger);
        FileChannel out = FileChannel.open(dir.resolve("refused2"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () ->
                  client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 1_000, out, 0, null));

      assertEquals(Kind.AUTHENTICATION, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("TLS"), e.getMessage());
    }
  }

  @Test
  void aPlaintextClientIsRefusedByATlsServer() throws Exception {
    // Each side waits for the other to speak first; the client's handshake timeout ends it.
    try (ChunkClient plain =
            new ChunkClient(
                TestData.SECURITY.withHandshakeTimeout(java.time.Duration.ofMillis(500)));
        FileChannel out = FileChannel.open(dir.resolve("plain"), CREATE, WRITE)) {
      ChunkTransferException e =
          assertThrows(
              ChunkTransferException.class,
              () -> plain.fetchBlocking("127.0.0.1", server.port(), "obj", 0, 1_000, out, 0, null));

      assertEquals(Kind.TIMEOUT, e.kind(), e.toString());
      assertTrue(e.getMessage().contains("TLS on one side only"), e.getMessage());
    }
  }

  @Test
  void aRawSocketGetsNoChunkProtocolByteFromATlsServer() throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.getOutputStream().write(RawWire.request(1, "obj", 0, 100));
      DataInputStream in = new DataInputStream(socket.getInputStream());

      // Whatever comes back (a TLS alert at most) is not a challenge nor a response frame. The
      // TLS layer may read these bytes as the start of a long SSLv2 record and wait for the
      // rest: the handshake timeout then closes the connection.
      byte[] reply = in.readNBytes(5);
      assertTrue(
          reply.length < 4
              || ((reply[0] & 0xff) << 24
                      | (reply[1] & 0xff) << 16
                      | (reply[2] & 0xff) << 8
                      | (reply[3] & 0xff))
                  != RawWire.HANDSHAKE_MAGIC,
          "no handshake frame in the clear");
    } catch (java.net.SocketException reset) {
      // the server closed on us: refused
    }
  }

  @Test
  void tlsFilesThatCannotWorkAreRejectedNamingTheFile() throws IOException {
    ChunkTls.InvalidFileException missing =
        assertThrows(
            ChunkTls.InvalidFileException.class,
            () -> ChunkTls.fromPem(dir.resolve("nope.pem"), clientCert.key(), ca.certificate()));
    assertEquals(ChunkTls.Part.CERTIFICATE, missing.part());
    assertTrue(missing.getMessage().contains("nope.pem"), missing.getMessage());

    ChunkTls.InvalidFileException wrongKey =
        assertThrows(
            ChunkTls.InvalidFileException.class,
            () -> ChunkTls.fromPem(clientCert.certificate(), serverCert.key(), ca.certificate()));
    assertEquals(ChunkTls.Part.PRIVATE_KEY, wrongKey.part());
    assertTrue(
        wrongKey.getMessage().contains("does not belong to the certificate"),
        wrongKey.getMessage());

    ChunkTls.InvalidFileException keyAsCert =
        assertThrows(
            ChunkTls.InvalidFileException.class,
            () -> ChunkTls.fromPem(clientCert.key(), clientCert.key(), ca.certificate()));
    assertEquals(ChunkTls.Part.CERTIFICATE, keyAsCert.part());

    ChunkTls.InvalidFileException sec1 =
        assertThrows(
            ChunkTls.InvalidFileException.class,
            () ->
                ChunkTls.fromPem(
                    clientCert.certificate(), certs.traditionalKey(clientCert), ca.certificate()));
    assertEquals(ChunkTls.Part.PRIVATE_KEY, sec1.part());
    assertTrue(sec1.getMessage().contains("openssl pkcs8 -topk8 -nocrypt"), sec1.getMessage());

    ChunkTls.InvalidFileException unsigned =
        assertThrows(
            ChunkTls.InvalidFileException.class,
            () ->
                ChunkTls.fromPem(strangerCert.certificate(), strangerCert.key(), ca.certificate()));
    assertEquals(ChunkTls.Part.CERTIFICATE, unsigned.part());
    assertTrue(unsigned.getMessage().contains("not signed by a CA in"), unsigned.getMessage());
  }
}
