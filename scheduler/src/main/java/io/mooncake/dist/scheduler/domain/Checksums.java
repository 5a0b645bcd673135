package io.mooncake.dist.scheduler.domain;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Manifest checksums. {@code sha256:<64 hex>} or 64 bare hex digits is an enforceable SHA-256;
 * anything else (the RFC example says {@code "dummy"}) is opaque: accepted, not enforced.
 */
public final class Checksums {
  private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");

  private Checksums() {}

  /** The lower-case hex SHA-256 the checksum names, or {@code null} when it names none. */
  public static String sha256HexOrNull(String checksum) {
    if (checksum == null) {
      return null;
    }
    String hex =
        checksum.regionMatches(true, 0, "sha256:", 0, 7) ? checksum.substring(7) : checksum;
    return HEX64.matcher(hex).matches() ? hex.toLowerCase(Locale.ROOT) : null;
  }
}
