package io.mooncake.dist.worker.store;

import static io.mooncake.dist.transfer.ObjectDigest.Algorithm.SHA256;
import static io.mooncake.dist.worker.store.TestModels.payload;
import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static io.mooncake.dist.worker.store.TestModels.sha256Hex;
import static io.mooncake.dist.worker.store.TestModels.withDigests;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelStoreVerifyTest {
  @TempDir Path tmp;

  private ModelStore store;
  private byte[] shard;
  private byte[] config;
  private FilePlan shardPlan;
  private FilePlan configPlan;

  /** A seed that downloaded two files earlier; the verify plans carry the digests it published. */
  @BeforeEach
  void seedAModel() throws Exception {
    store = new ModelStore(tmp.resolve("data"));
    shard = randomBytes(1, 1_500_000);
    config = randomBytes(2, 321);
    Path s1 = Files.write(tmp.resolve("shard"), shard);
    Path s2 = Files.write(tmp.resolve("config"), config);
    FilePlan d1 = plan(0, "model.safetensors", shard, 400_000, sha256Hex(shard), s1.toString());
    FilePlan d2 = plan(1, "config.json", config, 400_000, null, s2.toString());
    store.download(payload(d1, d2), b -> {});
    shardPlan = withDigests(d1, shard);
    configPlan = withDigests(d2, config);
  }

  @Test
  void intactFilesVerifyAndTheByteCountIsReturned() throws Exception {
    assertEquals(shard.length + config.length, store.verify(payload(shardPlan, configPlan)));
  }

  @Test
  void aSeedPublishingSha256VerifiesWithSha256AndAnExpectationInTheOtherAlgorithmIsRehashed()
      throws Exception {
    ModelStore sha = new ModelStore(tmp.resolve("sha-data"), new SourceOpener(), false, SHA256);
    Path src = Files.write(tmp.resolve("shard-sha"), shard);
    FilePlan d = plan(0, "model.safetensors", shard, 400_000, null, src.toString());
    FilePlan published = withDigests(d, shard, true);
    java.util.Map<String, String> digests = sha.download(payload(d), b -> {});
    for (ObjectPlan o : published.objects()) {
      assertEquals(o.digest(), digests.get(o.objectId()), "the download publishes SHA-256 digests");
    }
    assertEquals(shard.length, sha.verify(payload(published)));
    assertEquals(
        0, sha.verifyBytesHashed(), "unchanged since hashed: stamps hold the SHA-256 digests");
    // The same bytes described by crc32c-crc32 digests: the stamp (SHA-256) cannot vouch, so the
    // file is read again and matched in the algorithm the expectation names.
    assertEquals(shard.length, sha.verify(payload(withDigests(d, shard))));
    assertEquals(shard.length, sha.verifyBytesHashed());
  }

  @Test
  void aFileUnchangedSinceItWasHashedIsNotReadAgainUnlessFullReverifyIsAsked() throws Exception {
    assertEquals(shard.length + config.length, store.verify(payload(shardPlan, configPlan)));
    assertEquals(0, store.verifyBytesHashed(), "the download hashed these very files");

    ModelStore full = new ModelStore(tmp.resolve("data"), new SourceOpener(), true);
    full.verify(payload(shardPlan, configPlan));
    assertEquals(shard.length + config.length, full.verifyBytesHashed());

    // Touching the file (even back to the same modification time) changes its ctime: hashed again.
    Path fin = store.finalPath(TestModels.MODEL, shardPlan);
    java.nio.file.attribute.FileTime mtime = Files.getLastModifiedTime(fin);
    Files.setLastModifiedTime(fin, mtime);
    store.verify(payload(shardPlan, configPlan));
    assertEquals(shard.length, store.verifyBytesHashed());
    // ...and stamped again, so the next reuse skips it.
    store.verify(payload(shardPlan, configPlan));
    assertEquals(shard.length, store.verifyBytesHashed());
  }

  @Test
  void aFileReplacedByAnIdenticalCopyOrExpectedWithOtherDigestsIsHashedAgain() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, configPlan);
    Path copy = Files.copy(fin, tmp.resolve("config-copy"));
    Files.move(copy, fin, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    store.verify(payload(configPlan));
    assertEquals(
        config.length, store.verifyBytesHashed(), "another inode: not the file that was hashed");

    byte[] other = randomBytes(9, config.length);
    StoreException e =
        assertThrows(
            StoreException.class, () -> store.verify(payload(withDigests(configPlan, other))));
    assertTrue(e.getMessage().contains("does not match its published digest"), e.getMessage());
  }

  @Test
  void aFlippedByteWithTheModificationTimePutBackIsStillDetected() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, shardPlan);
    java.nio.file.attribute.FileTime mtime = Files.getLastModifiedTime(fin);
    try (FileChannel ch =
        FileChannel.open(fin, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, 10);
      b.put(0, (byte) (b.get(0) ^ 1)).rewind();
      ch.write(b, 10);
    }
    Files.setLastModifiedTime(fin, mtime);
    StoreException e = assertThrows(StoreException.class, () -> store.verify(payload(shardPlan)));
    assertTrue(e.getMessage().contains("does not match its published digest"), e.getMessage());
  }

  @Test
  void aFlippedByteIsDetectedAndTheBadObjectIsNamed() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, shardPlan);
    long where = 800_000 + 12_345; // inside the third object
    try (FileChannel ch =
        FileChannel.open(fin, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, where);
      b.put(0, (byte) (b.get(0) ^ 0x01)).rewind();
      ch.write(b, where);
    }

    StoreException e =
        assertThrows(StoreException.class, () -> store.verify(payload(shardPlan, configPlan)));

    assertFalse(e.retryable());
    assertTrue(e.getMessage().startsWith("object obj-0-2 of model.safetensors"), e.getMessage());
  }

  @Test
  void aMissingFinalFileFailsNamingIt() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, configPlan);
    Files.delete(fin);

    StoreException e =
        assertThrows(StoreException.class, () -> store.verify(payload(shardPlan, configPlan)));

    assertFalse(e.retryable());
    assertEquals("model file missing: " + fin, e.getMessage());
  }

  @Test
  void aTruncatedFinalFileFailsOnItsSize() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, shardPlan);
    try (FileChannel ch = FileChannel.open(fin, StandardOpenOption.WRITE)) {
      ch.truncate(1_000);
    }

    StoreException e = assertThrows(StoreException.class, () -> store.verify(payload(shardPlan)));

    assertFalse(e.retryable());
    assertEquals(fin + " has 1000 bytes, manifest size_bytes is 1500000", e.getMessage());
  }

  @Test
  void aWrongWholeFileSha256IsRefusedEvenWhenEveryObjectMatches() {
    String wrong = sha256Hex(config);
    FilePlan lying =
        new FilePlan(0, shardPlan.path(), shardPlan.sizeBytes(), wrong, null, shardPlan.objects());

    StoreException e = assertThrows(StoreException.class, () -> store.verify(payload(lying)));

    assertTrue(
        e.getMessage()
            .startsWith("checksum mismatch for model.safetensors: manifest sha256 " + wrong),
        e.getMessage());
  }

  @Test
  void anObjectWithoutAPublishedDigestCannotBeVerified() {
    List<ObjectPlan> objs =
        shardPlan.objects().stream()
            .map(
                o ->
                    o.chunkIndex() == 1
                        ? new ObjectPlan(o.objectId(), 1, o.offset(), o.length(), null)
                        : o)
            .toList();
    FilePlan noDigest = new FilePlan(0, shardPlan.path(), shardPlan.sizeBytes(), null, null, objs);

    StoreException e = assertThrows(StoreException.class, () -> store.verify(payload(noDigest)));

    assertFalse(e.retryable());
    assertTrue(e.getMessage().contains("obj-0-1"), e.getMessage());
  }

  @Test
  void digestRangeHashesExactlyTheRequestedBytes() throws Exception {
    Path fin = store.finalPath(TestModels.MODEL, shardPlan);

    assertEquals(
        "sha256:" + sha256Hex(shard, 123_456, 1_111_111),
        store.digestRange(fin, 123_456, 1_111_111, SHA256));
    assertEquals("sha256:" + sha256Hex(new byte[0]), store.digestRange(fin, 10, 0, SHA256));
    ObjectDigest crc = ObjectDigest.start(ObjectDigest.Algorithm.CRC32C_CRC32);
    crc.update(shard, 123_456, 1_111_111);
    assertEquals(
        crc.finish(),
        store.digestRange(fin, 123_456, 1_111_111, ObjectDigest.Algorithm.CRC32C_CRC32));
    StoreException beyond =
        assertThrows(
            StoreException.class, () -> store.digestRange(fin, shard.length - 10, 11, SHA256));
    assertFalse(beyond.retryable());
    StoreException missing =
        assertThrows(
            StoreException.class, () -> store.digestRange(tmp.resolve("nope"), 0, 1, SHA256));
    assertEquals("file not found: " + tmp.resolve("nope"), missing.getMessage());
  }
}
