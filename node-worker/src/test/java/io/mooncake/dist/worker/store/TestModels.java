package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Random;

/** Builds manifests over in-memory contents and computes the digests the store must produce. */
final class TestModels {
  static final ModelRef MODEL = new ModelRef("llama-test-8b", "rev1", "safetensors", "hf");

  private TestModels() {}

  static byte[] randomBytes(long seed, int n) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** A plan cutting {@code content} into objects of {@code chunk} bytes (the last one shorter). */
  static FilePlan plan(
      int index, String path, byte[] content, int chunk, String sha256, String url) {
    List<ObjectPlan> objects = new ArrayList<>();
    for (int i = 0; (long) i * chunk < content.length; i++) {
      long offset = (long) i * chunk;
      long length = Math.min(chunk, content.length - offset);
      objects.add(new ObjectPlan("obj-" + index + "-" + i, i, offset, length, null));
    }
    return new FilePlan(index, path, content.length, sha256, url, objects);
  }

  /**
   * The same plan with each object's published digest filled in from {@code content}, in the
   * store's default algorithm (crc32c-crc32).
   */
  static FilePlan withDigests(FilePlan file, byte[] content) {
    return withDigests(file, content, false);
  }

  /** As {@link #withDigests(FilePlan, byte[])}, with SHA-256 object digests when {@code sha256}. */
  static FilePlan withDigests(FilePlan file, byte[] content, boolean sha256) {
    List<ObjectPlan> objects =
        file.objects().stream()
            .map(
                o ->
                    new ObjectPlan(
                        o.objectId(),
                        o.chunkIndex(),
                        o.offset(),
                        o.length(),
                        sha256
                            ? "sha256:" + sha256Hex(content, (int) o.offset(), (int) o.length())
                            : crcDigest(content, (int) o.offset(), (int) o.length())))
            .toList();
    return new FilePlan(
        file.fileIndex(), file.path(), file.sizeBytes(), file.sha256(), null, objects);
  }

  static TaskPayload payload(FilePlan... files) {
    return new TaskPayload(MODEL, List.of(files));
  }

  /**
   * Object id to the default object digest ("crc32c-crc32:" CRC-32C hex then CRC-32 hex), computed
   * independently of the store, in manifest order.
   */
  static LinkedHashMap<String, String> expectedDigests(FilePlan file, byte[] content) {
    LinkedHashMap<String, String> m = new LinkedHashMap<>();
    for (ObjectPlan o : file.objects()) {
      m.put(o.objectId(), crcDigest(content, (int) o.offset(), (int) o.length()));
    }
    return m;
  }

  static String crcDigest(byte[] data, int off, int len) {
    java.util.zip.CRC32C c = new java.util.zip.CRC32C();
    c.update(data, off, len);
    java.util.zip.CRC32 d = new java.util.zip.CRC32();
    d.update(data, off, len);
    return String.format("crc32c-crc32:%08x%08x", c.getValue(), d.getValue());
  }

  static String sha256Hex(byte[] data) {
    return sha256Hex(data, 0, data.length);
  }

  static String sha256Hex(byte[] data, int off, int len) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(data, off, len);
      return HexFormat.of().formatHex(md.digest());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
