package io.mooncake.dist.scheduler.domain;

import java.util.Locale;

/**
 * What {@code checksum_verified} rests on. {@code MANIFEST_SHA256}: every node hashed every file
 * and matched the manifest. {@code OBJECT_DIGESTS}: the manifest gave no enforceable checksum, so
 * every object was matched against the SHA-256 the seed computed while reading the source.
 */
public enum Integrity {
  MANIFEST_SHA256,
  OBJECT_DIGESTS;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Integrity fromWire(String s) {
    return valueOf(s.toUpperCase(Locale.ROOT));
  }
}
