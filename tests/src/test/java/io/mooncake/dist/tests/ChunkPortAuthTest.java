package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.ProcessCluster;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestCerts;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.transfer.ChunkClient;
import io.mooncake.dist.transfer.ChunkSecurity;
import io.mooncake.dist.transfer.ChunkTransferException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chunk port of real {@code bin/mooncake_client} processes admits cluster members only: a job
 * stages between two clients that know nothing but the database (whose secret they share), a
 * stranger is refused, and the TLS and secret-file flags work end to end.
 */
class ChunkPortAuthTest {
  private static final long MIB = 1024 * 1024;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aJobStagesBetweenTwoClientsOnTheDatabaseSecretWhileAStrangerIsRefused() throws Exception {
    Path source = TestFiles.random(tmp.resolve("src/model.bin"), 3 * MIB + 123, 7);
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api api = startMaster(procs);
      int seedPort = TestFiles.freePort();
      int followerPort = TestFiles.freePort();
      String seed = startClient(procs, "seed", seedPort);
      String follower = startClient(procs, "follower", followerPort);
      awaitLive(api, 2);

      JsonNode job = runJob(api, "auth-db-secret", "model-db", source, seed, follower);

      assertStaged(job, source, procs);
      // The follower pulled every object from the seed over the authenticated port.
      assertTrue(procs.log("follower").contains("REPLICA_COPY"), procs.log("follower"));

      // A client with another secret: refused, told why.
      try (ChunkClient stranger =
              new ChunkClient(ChunkSecurity.of("not this cluster's secret, but long enough"));
          FileChannel out =
              FileChannel.open(
                  tmp.resolve("stolen"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        ChunkTransferException e =
            assertThrows(
                ChunkTransferException.class,
                () ->
                    stranger.fetchBlocking(
                        "127.0.0.1",
                        seedPort,
                        "model-db/r1/model.bin/chunk-000",
                        0,
                        MIB,
                        out,
                        0,
                        null));
        assertEquals(ChunkTransferException.Kind.AUTHENTICATION, e.kind(), e.toString());
        assertTrue(
            e.getMessage().contains("not a cluster member: authentication failed"), e.getMessage());
      }
      assertEquals(0, Files.size(tmp.resolve("stolen")));

      // A raw socket that skips the handshake and asks for an object: an error frame, then closed.
      try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), seedPort)) {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        assertEquals(0x4D434B41, in.readInt(), "the server opens with its challenge");
        in.skipNBytes(1 + 32);
        socket.getOutputStream().write(request("model-db/r1/model.bin/chunk-000", MIB));
        assertEquals(0x4D434B54, in.readInt());
        assertEquals(2, in.readUnsignedByte());
        assertEquals(0, in.readInt(), "request id 0: the request was never read");
        assertEquals(6, in.readUnsignedByte(), "status UNAUTHENTICATED");
        String message = new String(in.readNBytes(in.readUnsignedShort()), StandardCharsets.UTF_8);
        assertTrue(message.startsWith("not a cluster member"), message);
        assertEndOfStream(in);
      }
    }
  }

  @Test
  void theTlsAndSecretFileFlagsStageAJobOverMutualTls() throws Exception {
    Path source = TestFiles.random(tmp.resolve("src/model.bin"), 2 * MIB + 5, 8);
    TestCerts certs = new TestCerts(tmp.resolve("certs"));
    TestCerts.Pair ca = certs.ca("cluster-ca");
    Path secret = tmp.resolve("cluster.secret");
    Files.writeString(secret, "a secret file shared by these two nodes only, 50+ bytes\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      Api api = startMaster(procs);
      int seedPort = TestFiles.freePort();
      List<String> nodes = new ArrayList<>();
      for (String name : List.of("seed", "follower")) {
        TestCerts.Pair cert = certs.leaf(name, ca);
        int port = name.equals("seed") ? seedPort : TestFiles.freePort();
        nodes.add(
            startClient(
                procs,
                name,
                port,
                "--cluster-secret-file",
                secret.toString(),
                "--chunk-tls-cert",
                cert.certificate().toString(),
                "--chunk-tls-key",
                cert.key().toString(),
                "--chunk-tls-ca",
                ca.certificate().toString()));
      }
      awaitLive(api, 2);

      JsonNode job = runJob(api, "auth-tls", "model-tls", source, nodes.get(0), nodes.get(1));

      assertStaged(job, source, procs);
      assertTrue(procs.log("seed").contains("TLS on"), procs.log("seed"));
      // The database's secret is not this cluster's any more: a client holding it is refused.
      String dbSecret =
          pg.database().dsl().fetchValue("SELECT secret FROM cluster_secret").toString();
      try (ChunkClient plain =
              new ChunkClient(
                  ChunkSecurity.of(dbSecret).withHandshakeTimeout(Duration.ofSeconds(1)));
          FileChannel out =
              FileChannel.open(
                  tmp.resolve("t"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        assertThrows(
            ChunkTransferException.class,
            () ->
                plain.fetchBlocking(
                    "127.0.0.1",
                    seedPort,
                    "model-tls/r1/model.bin/chunk-000",
                    0,
                    MIB,
                    out,
                    0,
                    null));
      }
    }
  }

  @Test
  void unusableSecretAndTlsFlagsFailTheStartNamingTheFlagAndFile() throws IOException {
    Path open = tmp.resolve("open.secret");
    Files.writeString(open, "x".repeat(64));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
    assertFailsToStart(
        "--cluster-secret-file: " + open + ": group or others may access this secret file",
        "--cluster-secret-file",
        open.toString());

    Path shortSecret = tmp.resolve("short.secret");
    Files.writeString(shortSecret, "too short\n");
    Files.setPosixFilePermissions(shortSecret, PosixFilePermissions.fromString("rw-------"));
    assertFailsToStart("need at least 32", "--cluster-secret-file", shortSecret.toString());

    Path empty = tmp.resolve("empty.secret");
    Files.writeString(empty, "");
    Files.setPosixFilePermissions(empty, PosixFilePermissions.fromString("rw-------"));
    assertFailsToStart(empty + " holds no secret", "--cluster-secret-file", empty.toString());

    TestCerts certs = new TestCerts(tmp.resolve("certs"));
    TestCerts.Pair ca = certs.ca("ca");
    TestCerts.Pair node = certs.leaf("node", ca);
    assertFailsToStart(
        "missing --chunk-tls-key",
        "--chunk-tls-cert",
        node.certificate().toString(),
        "--chunk-tls-ca",
        ca.certificate().toString());
    Path missing = tmp.resolve("missing.pem");
    assertFailsToStart(
        "--chunk-tls-cert: certificate " + missing + ": cannot read it",
        "--chunk-tls-cert",
        missing.toString(),
        "--chunk-tls-key",
        node.key().toString(),
        "--chunk-tls-ca",
        ca.certificate().toString());
    assertFailsToStart(
        "--chunk-tls-key: private key " + ca.key() + ": does not belong to the certificate",
        "--chunk-tls-cert",
        node.certificate().toString(),
        "--chunk-tls-key",
        ca.key().toString(),
        "--chunk-tls-ca",
        ca.certificate().toString());
    Path openKey = Files.copy(node.key(), tmp.resolve("open-node.key"));
    Files.setPosixFilePermissions(openKey, PosixFilePermissions.fromString("rw-r-----"));
    assertFailsToStart(
        "--chunk-tls-key: " + openKey + ": group or others may access this private key",
        "--chunk-tls-cert",
        node.certificate().toString(),
        "--chunk-tls-key",
        openKey.toString(),
        "--chunk-tls-ca",
        ca.certificate().toString());
    assertFailsToStart(
        "unknown object digest algorithm 'md5' (expected crc32c-crc32 or sha256)",
        "--object-digest",
        "md5");
  }

  private void assertFailsToStart(String expected, String... flags) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--node-id",
                "127.0.0.1:25019",
                "--data-dir",
                tmp.resolve("unused").toString(),
                "--db-url",
                pg.url()));
    args.addAll(List.of(flags));
    Processes.Run run = Processes.run("mooncake_client", args.toArray(String[]::new));
    assertEquals(2, run.exitCode(), run.output());
    assertTrue(run.output().contains(expected), "expected '" + expected + "' in:\n" + run.output());
  }

  private static Api startMaster(Processes procs) {
    return new ProcessCluster(procs, pg).startMaster("master");
  }

  private String startClient(Processes procs, String name, int port, String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--node-id",
                "127.0.0.1:" + port,
                "--data-dir",
                tmp.resolve(name).toString(),
                "--db-url",
                pg.url(),
                "--poll-ms",
                "200"));
    args.addAll(List.of(extra));
    procs.start(name, "mooncake_client", args.toArray(String[]::new));
    return "127.0.0.1:" + port;
  }

  private static void awaitLive(Api api, int count) {
    Processes.await(
        count + " nodes registered and live",
        Duration.ofSeconds(60),
        () -> {
          int live = 0;
          for (JsonNode n : api.get("/api/v1/nodes").json().get("nodes")) {
            live += n.get("live").asBoolean() ? 1 : 0;
          }
          return live == count;
        });
  }

  private static JsonNode runJob(
      Api api, String jobId, String modelId, Path source, String seed, String follower) {
    String body =
        Requests.job(
            jobId,
            modelId,
            "r1",
            List.of(
                new FileSpec(
                    "model.bin",
                    sizeOf(source),
                    MIB,
                    "sha256:" + TestFiles.sha256(source),
                    source.toUri().toString())),
            seed,
            List.of(seed, follower));
    Api.Reply created = api.post("/api/v1/model-distribution/jobs", body);
    assertEquals(201, created.status(), String.valueOf(created.json()));
    return api.awaitTerminal(jobId);
  }

  private static void assertStaged(JsonNode job, Path source, Processes procs) {
    String logs = "\nseed:\n" + procs.log("seed") + "\nfollower:\n" + procs.log("follower");
    assertEquals("completed", job.get("status").asText(), job + logs);
    for (JsonNode p : job.get("placements")) {
      assertEquals("staged", p.get("state").asText(), job + logs);
      Path staged = Path.of(p.get("local_path").asText()).resolve("model.bin");
      assertTrue(TestFiles.sameBytes(source, staged), "bytes differ at " + staged);
    }
  }

  /** A chunk request frame (PROTOCOL.md) with request id 1 for the first {@code length} bytes. */
  private static byte[] request(String objectId, long length) throws IOException {
    byte[] id = objectId.getBytes(StandardCharsets.UTF_8);
    var bytes = new java.io.ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(0x4D434B54);
      out.writeByte(2);
      out.writeInt(1);
      out.writeShort(id.length);
      out.write(id);
      out.writeLong(0);
      out.writeLong(length);
    }
    return bytes.toByteArray();
  }

  private static void assertEndOfStream(DataInputStream in) throws IOException {
    try {
      assertEquals(-1, in.read());
    } catch (SocketException reset) {
      // closed with our bytes unread: a reset, also closed
    }
  }

  private static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
