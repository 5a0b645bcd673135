package io.mooncake.dist.scheduler.store;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;

/**
 * The position after the last job of a page: its {@code (created_at, job_id)}, the list's sort key.
 * On the wire it is opaque (URL-safe base64 of a versioned text), so callers cannot build one and
 * the encoding may change without breaking them.
 */
public record JobCursor(Instant createdAt, String jobId) {
  private static final String VERSION = "v1";

  public String encode() {
    String plain = VERSION + "|" + createdAt + "|" + jobId;
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * @throws IllegalArgumentException when {@code token} is not a cursor this class wrote
   */
  public static JobCursor decode(String token) {
    String plain;
    try {
      plain = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a cursor returned by this API (bad encoding)");
    }
    // At most three parts with the job id last, so decoding does not depend on which characters
    // job ids may contain.
    String[] parts = plain.split("\\|", 3);
    if (parts.length != 3 || !VERSION.equals(parts[0]) || parts[2].isEmpty()) {
      throw new IllegalArgumentException("not a cursor returned by this API");
    }
    try {
      return new JobCursor(Instant.parse(parts[1]), parts[2]);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("not a cursor returned by this API (bad position)");
    }
  }
}
