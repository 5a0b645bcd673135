package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.transfer.ChunkClient;
import io.mooncake.dist.transfer.ChunkSecurity;
import io.mooncake.dist.transfer.ChunkTransferException;
import io.mooncake.dist.worker.security.ClusterSecret;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A database writer cannot make a node's chunk server stream a file it did not publish: rows naming
 * a file outside {@code <data-dir>/models}, a model file replaced by a link, or an object the node
 * never published are all answered "not here", to a client holding the cluster secret.
 */
class ServedPathsTest {
  private static final long MIB = 1024 * 1024;
  private static final String OBJECT = "model-sp/r1/w.bin/chunk-000";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static String seed;
  static int seedPort;
  static Path secretFile;
  static ChunkClient member;

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    seed = cluster.addNode(tmp.resolve("seed"));
    seedPort = Integer.parseInt(seed.substring(seed.lastIndexOf(':') + 1));
    Path src = TestFiles.random(tmp.resolve("src/w.bin"), 2 * MIB, 3);
    Api.Reply r =
        cluster
            .api()
            .post(
                "/api/v1/model-distribution/jobs",
                Requests.job(
                    "sp-1",
                    "model-sp",
                    "r1",
                    List.of(
                        new FileSpec(
                            "w.bin",
                            2 * MIB,
                            MIB,
                            "sha256:" + TestFiles.sha256(src),
                            src.toUri().toString())),
                    seed,
                    List.of(seed)));
    assertEquals(201, r.status(), String.valueOf(r.json()));
    JsonNode job = cluster.api().awaitTerminal("sp-1");
    assertEquals("completed", job.get("status").asText(), job.toString());
    secretFile = Files.writeString(tmp.resolve("shadow"), "root:secret-hash:19000::::::\n");
    member = new ChunkClient(ChunkSecurity.of(ClusterSecret.fromDatabase(pg.database())));
  }

  @AfterAll
  static void stop() {
    member.close();
    cluster.close();
  }

  private static long fetch(String objectId, long length) throws Exception {
    Path out = Files.createTempFile(tmp, "out", ".bin");
    try (FileChannel ch = FileChannel.open(out, StandardOpenOption.WRITE)) {
      member.fetchBlocking("127.0.0.1", seedPort, objectId, 0, length, ch, 0, null);
    }
    return Files.size(out);
  }

  private static void assertNotServed(String objectId, long length) {
    ChunkTransferException e =
        assertThrows(ChunkTransferException.class, () -> fetch(objectId, length));
    assertEquals(ChunkTransferException.Kind.NOT_FOUND, e.kind(), e.toString());
  }

  private static String rowPath(String objectId) {
    return pg.database()
        .dsl()
        .select(OBJECT_REPLICAS.FILE_PATH)
        .from(OBJECT_REPLICAS)
        .where(OBJECT_REPLICAS.OBJECT_ID.eq(objectId))
        .and(OBJECT_REPLICAS.NODE_ID.eq(seed))
        .fetchOne(OBJECT_REPLICAS.FILE_PATH);
  }

  private static void setRow(String objectId, String path, long offset, long size) {
    pg.database()
        .dsl()
        .update(OBJECT_REPLICAS)
        .set(OBJECT_REPLICAS.FILE_PATH, path)
        .set(OBJECT_REPLICAS.FILE_OFFSET, offset)
        .set(OBJECT_REPLICAS.SIZE_BYTES, size)
        .where(OBJECT_REPLICAS.OBJECT_ID.eq(objectId))
        .and(OBJECT_REPLICAS.NODE_ID.eq(seed))
        .execute();
  }

  @Test
  void aRowPointingOutsideTheModelStoreIsNotServed() throws Exception {
    assertEquals(MIB, fetch(OBJECT, MIB), "the node's own replica is served");
    String original = rowPath(OBJECT);
    long size = Files.size(secretFile);
    setRow(OBJECT, secretFile.toString(), 0, size);
    try {
      assertNotServed(OBJECT, size);
    } finally {
      setRow(OBJECT, original, 0, MIB);
    }
    assertEquals(MIB, fetch(OBJECT, MIB));
  }

  @Test
  void anObjectTheNodeNeverPublishedIsNotServedEvenFromInsideTheStore() throws Exception {
    String staged = rowPath(OBJECT);
    pg.database()
        .dsl()
        .insertInto(OBJECT_REPLICAS)
        .set(OBJECT_REPLICAS.OBJECT_ID, "forged/chunk-000")
        .set(OBJECT_REPLICAS.NODE_ID, seed)
        .set(OBJECT_REPLICAS.SIZE_BYTES, MIB)
        .set(OBJECT_REPLICAS.DIGEST, "sha256:" + "0".repeat(64))
        .set(OBJECT_REPLICAS.FILE_PATH, staged)
        .set(OBJECT_REPLICAS.FILE_OFFSET, MIB)
        .execute();
    assertNotServed("forged/chunk-000", MIB);
  }

  @Test
  void aModelFileReplacedByALinkOutOfTheStoreIsNotServed() throws Exception {
    String object = "model-sp/r1/w.bin/chunk-001";
    Path staged = Path.of(rowPath(object));
    Path kept = staged.resolveSibling("w.bin.kept");
    Files.move(staged, kept);
    Path big = TestFiles.random(tmp.resolve("outside.bin"), 2 * MIB, 9);
    Files.createSymbolicLink(staged, big);
    try {
      assertNotServed(object, MIB);
    } finally {
      Files.delete(staged);
      Files.move(kept, staged);
    }
    assertEquals(MIB, fetch(object, MIB));
  }
}
