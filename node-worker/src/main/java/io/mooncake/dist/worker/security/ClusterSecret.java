package io.mooncake.dist.worker.security;

import static io.mooncake.dist.db.jooq.Tables.CLUSTER_SECRET;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.transfer.ChunkSecurity;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The cluster secret a node proves on its chunk port: by default the one the database made when it
 * was migrated ({@code cluster_secret}, V005), so every member, having database access, agrees on
 * it without configuration; or the content of a file that overrides it.
 */
public final class ClusterSecret {

  private ClusterSecret() {}

  /** A secret that cannot be used, with the reason. */
  public static final class InvalidSecretException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    InvalidSecretException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Reads the secret the migrations created.
   *
   * @throws InvalidSecretException if the row is missing or too short (edited by hand)
   * @throws org.jooq.exception.DataAccessException if the database cannot be read
   */
  public static byte[] fromDatabase(Database db) {
    String secret =
        db.dsl().select(CLUSTER_SECRET.SECRET).from(CLUSTER_SECRET).fetchOne(CLUSTER_SECRET.SECRET);
    if (secret == null) {
      throw new InvalidSecretException(
          "the database has no cluster secret (table cluster_secret is empty;"
              + " migration V005 creates its row)",
          null);
    }
    byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
    if (bytes.length < ChunkSecurity.MIN_SECRET_BYTES) {
      throw new InvalidSecretException(
          "the cluster secret in table cluster_secret has "
              + bytes.length
              + " bytes, need at least "
              + ChunkSecurity.MIN_SECRET_BYTES,
          null);
    }
    return bytes;
  }

  /**
   * Reads a secret file: its bytes, less trailing whitespace (so {@code echo ... > file} works).
   * Refuses a file that users other than its owner may read, as ssh does with keys.
   *
   * @throws InvalidSecretException naming the file: unreadable, readable by group or others, or
   *     holding fewer than {@value ChunkSecurity#MIN_SECRET_BYTES} bytes
   */
  public static byte[] fromFile(Path file) {
    try {
      io.mooncake.dist.db.SecretFiles.requireOwnerOnly(file, "secret file");
    } catch (IllegalArgumentException e) {
      throw new InvalidSecretException(e.getMessage(), e);
    }
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new InvalidSecretException("cannot read " + file + ": " + e, e);
    }
    int end = bytes.length;
    while (end > 0 && Character.isWhitespace(bytes[end - 1])) {
      end--;
    }
    if (end < ChunkSecurity.MIN_SECRET_BYTES) {
      throw new InvalidSecretException(
          file
              + " holds "
              + (end == 0 ? "no secret" : "a secret of " + end + " bytes")
              + ", need at least "
              + ChunkSecurity.MIN_SECRET_BYTES
              + " (e.g. openssl rand -hex 32 > "
              + file
              + ")",
          null);
    }
    return java.util.Arrays.copyOf(bytes, end);
  }
}
