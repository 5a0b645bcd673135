package io.mooncake.dist.master.validation;

/** String rules shared by several fields, and safe echoing of caller text in error messages. */
final class Texts {
  /** Long enough to recognise a value, short enough that a hostile one cannot bloat an error. */
  private static final int ECHO_LIMIT = 80;

  private Texts() {}

  /** {@code value} must have between {@code min} and {@code max} UTF-16 chars. */
  static String requireLength(String value, String field, int min, int max) {
    if (value.length() < min) {
      throw new ValidationException(
          field, min == 1 ? "must not be empty" : "must be at least " + min + " characters");
    }
    if (value.length() > max) {
      throw new ValidationException(
          field, "must be at most " + max + " characters, got " + value.length());
    }
    return value;
  }

  /**
   * Rejects control characters and unpaired surrogates, which no file system or log handles well.
   */
  static String requirePrintable(String value, String field) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c)) {
        throw new ValidationException(
            field,
            String.format(
                "must not contain control characters, found U+%04X at index %d", (int) c, i));
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < value.length()
          && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new ValidationException(
            field, "must be valid Unicode, found an unpaired surrogate at index " + i);
      }
    }
    return value;
  }

  /** The value in single quotes, truncated and with control characters escaped, for messages. */
  static String quote(String value) {
    return "'" + printable(value) + "'";
  }

  /**
   * {@code value} truncated and with control characters escaped, so it is safe to log or return.
   */
  static String printable(String value) {
    return printable(value, ECHO_LIMIT);
  }

  /** As {@link #printable(String)}, keeping up to {@code limit} chars. */
  static String printable(String value, int limit) {
    boolean truncated = value.length() > limit;
    String head = truncated ? value.substring(0, limit) : value;
    StringBuilder out = new StringBuilder(head.length() + 8);
    for (int i = 0; i < head.length(); i++) {
      char c = head.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return truncated ? out.append("...").toString() : out.toString();
  }
}
