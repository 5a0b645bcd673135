package io.mooncake.dist.master.validation;

/**
 * A request error the caller caused. {@link #field()} is a JSON path such as {@code
 * manifest.files[0].chunk_layout.chunk_count}, or {@code body} when the document as a whole is at
 * fault; the message reads {@code "<field>: <reason>"} so it can be returned to the caller as is.
 */
public final class ValidationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final String reason;

  /**
   * @param field the JSON path of the offending field, or {@code body}
   * @param message what is wrong with it, e.g. {@code must be a non-negative integer}
   */
  public ValidationException(String field, String message) {
    // No cause and no stack trace capture cost worth worrying about: this is thrown once per bad
    // request.
    super(field + ": " + message);
    this.field = field;
    this.reason = message;
  }

  /** The JSON path of the offending field, or {@code body}. */
  public String field() {
    return field;
  }

  /** The message without the field prefix. */
  public String reason() {
    return reason;
  }
}
