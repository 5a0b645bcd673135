package io.mooncake.dist.master.auth;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The master's API bearer tokens, read from the file given by {@code --api-tokens-file}. One token
 * per line, {@code <read|write> <token> [<name>]}; a line whose first non-blank character is {@code
 * #} is a comment (a {@code #} elsewhere is part of the token or name). A {@code write} token may
 * also read. Only SHA-256 digests of the tokens are kept in memory, and a presented token is
 * compared with every entry in constant time, so neither a heap dump nor response timing gives a
 * token away.
 */
public final class ApiTokens {
  /** Shorter tokens are refused: a bearer token must not be guessable. */
  public static final int MIN_TOKEN_LENGTH = 16;

  /** What a token allows; {@link #WRITE} includes {@link #READ}. */
  public enum Permission {
    READ,
    WRITE;

    /** Whether a token with this permission may do what {@code needed} asks. */
    public boolean allows(Permission needed) {
      return this == WRITE || needed == READ;
    }
  }

  /** A token's identity: its name (for logs, never the token) and permission. */
  public record Grant(String name, Permission permission) {}

  private record Entry(byte[] digest, Grant grant) {}

  private final List<Entry> entries;

  private ApiTokens(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  /**
   * Reads a token file. Refuses, with a message naming the file and line, a file others may read,
   * an unknown permission, a short or duplicate token, or a file without any token.
   */
  public static ApiTokens load(Path file) {
    String text;
    try {
      io.mooncake.dist.db.SecretFiles.requireOwnerOnly(file, "token file");
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(file)))
              .toString();
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such file");
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(file + ": not UTF-8 text");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage());
    }
    return parse(file.toString(), text);
  }

  /** Parses token-file text; {@code origin} names it in errors. */
  public static ApiTokens parse(String origin, String text) {
    List<Entry> entries = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      // Only a whole line is a comment: cutting at any '#' would silently shorten a token that
      // contains one.
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = origin + " line " + (i + 1) + ": ";
      String[] parts = line.split("\\s+");
      if (parts.length < 2 || parts.length > 3) {
        throw new IllegalArgumentException(
            where
                + "expected '<read|write> <token> [<name>]'"
                + (line.contains("#")
                    ? " ('#' starts a comment only at the start of a line)"
                    : ""));
      }
      Permission permission =
          switch (parts[0]) {
            case "read" -> Permission.READ;
            case "write" -> Permission.WRITE;
            default ->
                throw new IllegalArgumentException(
                    where + "permission must be 'read' or 'write', got '" + parts[0] + "'");
          };
      String token = parts[1];
      if (token.length() < MIN_TOKEN_LENGTH) {
        throw new IllegalArgumentException(
            where + "token shorter than " + MIN_TOKEN_LENGTH + " characters");
      }
      if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
        throw new IllegalArgumentException(where + "token must be printable ASCII");
      }
      if (!seen.add(token)) {
        throw new IllegalArgumentException(where + "token listed twice");
      }
      String name = parts.length == 3 ? parts[2] : "line-" + (i + 1);
      entries.add(new Entry(sha256(token), new Grant(name, permission)));
    }
    if (entries.isEmpty()) {
      throw new IllegalArgumentException(
          origin + ": no token in the file; add lines '<read|write> <token> [<name>]'");
    }
    return new ApiTokens(entries);
  }

  /**
   * The grant of a presented token, if it is one of ours. Every entry is compared, match or not.
   */
  public Optional<Grant> lookup(String presented) {
    byte[] digest = sha256(presented);
    Grant found = null;
    for (Entry e : entries) {
      if (MessageDigest.isEqual(e.digest, digest) && found == null) {
        found = e.grant;
      }
    }
    return Optional.ofNullable(found);
  }

  /** How many tokens the file listed. */
  public int size() {
    return entries.size();
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
