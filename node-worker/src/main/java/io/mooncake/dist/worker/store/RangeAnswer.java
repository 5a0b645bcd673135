package io.mooncake.dist.worker.store;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether an HTTP 206 answers a download's {@code Range: bytes=<from>-} request with exactly the
 * rest of the file: {@code Content-Range: bytes <from>-<size-1>/<size>} (or {@code /*}), and a
 * {@code Content-Length} of {@code size - from} when one is sent. Anything else (another start, a
 * shorter piece, another total size, several ranges) is not resumed from: the caller reads the file
 * from the start instead. Pure.
 */
final class RangeAnswer {
  private static final Pattern CONTENT_RANGE =
      Pattern.compile("\\s*bytes\\s+(\\d{1,19})-(\\d{1,19})/(\\d{1,19}|\\*)\\s*");

  private RangeAnswer() {}

  /**
   * @return empty when the answer carries exactly bytes {@code [from, size)} of a {@code size}-byte
   *     file, else what is wrong with it, in words
   */
  static Optional<String> problem(
      String contentRange, OptionalLong contentLength, long from, long size) {
    if (contentRange == null) {
      return Optional.of("its 206 answer has no Content-Range");
    }
    Matcher m = CONTENT_RANGE.matcher(contentRange);
    if (!m.matches()) {
      return Optional.of("its Content-Range \"" + contentRange + "\" is not one byte range");
    }
    long first;
    long last;
    try {
      first = Long.parseLong(m.group(1));
      last = Long.parseLong(m.group(2));
      if (!m.group(3).equals("*") && Long.parseLong(m.group(3)) != size) {
        return Optional.of(
            "its Content-Range \""
                + contentRange
                + "\" gives a total size other than size_bytes "
                + size);
      }
    } catch (NumberFormatException e) {
      return Optional.of("its Content-Range \"" + contentRange + "\" has an out-of-range number");
    }
    if (first != from || last != size - 1) {
      return Optional.of(
          "it sent bytes "
              + first
              + "-"
              + last
              + " for a request of bytes "
              + from
              + "-"
              + (size - 1));
    }
    if (contentLength.isPresent() && contentLength.getAsLong() != size - from) {
      return Optional.of(
          "its Content-Length "
              + contentLength.getAsLong()
              + " is not the "
              + (size - from)
              + " bytes of its Content-Range");
    }
    return Optional.empty();
  }
}
