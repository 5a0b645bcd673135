package io.mooncake.dist.master.validation;

import java.util.regex.Pattern;

/**
 * Syntax of the identifiers that end up in object keys and local directory names: a job id, and the
 * four parts of a model's identity. Kept narrow so none of them can smuggle a path separator,
 * whitespace or a traversal segment into the places they are later spliced into.
 */
public final class Identifiers {
  private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9._:-]+");
  private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._-]+");

  static final int MAX_JOB_ID = 128;
  static final int MAX_MODEL_ID = 512;
  static final int MAX_REVISION = 256;
  static final int MAX_FORMAT = 128;
  static final int MAX_PROVIDER = 128;

  private Identifiers() {}

  /**
   * The one job id rule, for the create body and every route's {@code job_id} parameter alike:
   * 1-{@value #MAX_JOB_ID} characters of {@code [A-Za-z0-9._:-]}.
   *
   * @throws ValidationException naming {@code field}
   */
  public static String jobId(String value, String field) {
    Texts.requireLength(value, field, 1, MAX_JOB_ID);
    if (!JOB_ID.matcher(value).matches()) {
      throw new ValidationException(
          field,
          "must contain only letters, digits, '.', '_', ':' and '-', got " + Texts.quote(value));
    }
    return value;
  }

  /** One or more '/'-separated tokens, as in {@code meta-llama/Llama-3}. */
  static String modelId(String value, String field) {
    Texts.requireLength(value, field, 1, MAX_MODEL_ID);
    // limit -1 keeps trailing empty segments, so "a/" is caught like "/a" and "a//b".
    for (String segment : value.split("/", -1)) {
      if (segment.isEmpty()) {
        throw new ValidationException(
            field, "must be '/'-separated non-empty segments, got " + Texts.quote(value));
      }
      requireToken(segment, value, field);
    }
    return value;
  }

  /** A single token: revision, format or provider. */
  static String token(String value, String field, int maxLength) {
    Texts.requireLength(value, field, 1, maxLength);
    requireToken(value, value, field);
    return value;
  }

  private static void requireToken(String segment, String whole, String field) {
    if (!TOKEN.matcher(segment).matches()) {
      throw new ValidationException(
          field, "must contain only letters, digits, '.', '_' and '-', got " + Texts.quote(whole));
    }
    if (segment.equals(".") || segment.equals("..")) {
      throw new ValidationException(
          field, "must not contain '.' or '..' segments, got " + Texts.quote(whole));
    }
  }
}
