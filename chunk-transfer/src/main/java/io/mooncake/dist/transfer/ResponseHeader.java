package io.mooncake.dist.transfer;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The header of one response; an {@link Ok} header is followed by exactly {@code length} payload
 * bytes.
 */
sealed interface ResponseHeader {

  /** The request id this response answers. */
  int requestId();

  /** The payload follows: exactly {@code length} raw bytes. */
  record Ok(int requestId, long length) implements ResponseHeader {}

  /** The request failed; no payload follows. */
  record Failure(int requestId, Status status, String message) implements ResponseHeader {

    public Failure {
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(message, "message");
      if (status == Status.OK) {
        throw new IllegalArgumentException("a failure cannot carry status OK");
      }
    }

    /**
     * Builds a failure whose message fits the protocol limit, cutting it at a character boundary.
     */
    static Failure of(int requestId, Status status, String message) {
      return new Failure(
          requestId, status, truncateUtf8(message, Protocol.MAX_ERROR_MESSAGE_BYTES));
    }

    private static String truncateUtf8(String s, int maxBytes) {
      if (s.getBytes(StandardCharsets.UTF_8).length <= maxBytes) {
        return s;
      }
      // Leave room for the ellipsis; walk code points so a surrogate pair is never split.
      int budget = maxBytes - 3;
      StringBuilder out = new StringBuilder();
      int used = 0;
      for (int i = 0; i < s.length(); ) {
        int cp = s.codePointAt(i);
        int bytes = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
        if (used + bytes > budget) {
          break;
        }
        out.appendCodePoint(cp);
        used += bytes;
        i += Character.charCount(cp);
      }
      return out.append("...").toString();
    }
  }
}
