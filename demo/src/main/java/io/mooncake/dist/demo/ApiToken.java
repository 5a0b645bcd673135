package io.mooncake.dist.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;

/** A bearer token for the demo's master, in a token file only its owner can read. */
final class ApiToken {
  private ApiToken() {}

  /** 256 random bits, hex. */
  static String random() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /**
   * Writes {@code content} to a new file of mode 600, as {@code mooncake_master --api-tokens-file}
   * requires.
   */
  static Path writeFile(Path file, String content) throws IOException {
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, content, StandardCharsets.UTF_8);
    return file;
  }
}
