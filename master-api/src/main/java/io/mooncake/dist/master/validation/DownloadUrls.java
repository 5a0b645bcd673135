package io.mooncake.dist.master.validation;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Where the seed node reads a file from: an absolute local path, a local {@code file://} URL, or an
 * {@code http(s)://} URL. Anything else would reach the seed as a task it cannot run, so it is
 * refused here, where the caller can still be told which file was wrong.
 */
final class DownloadUrls {
  static final int MAX_LENGTH = 8192;

  private DownloadUrls() {}

  static String requireValid(String value, String field) {
    Texts.requireLength(value, field, 1, MAX_LENGTH);
    Texts.requirePrintable(value, field);
    if (value.startsWith("/")) {
      return value;
    }
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new ValidationException(
          field,
          "must be a valid URL: " + Texts.printable(e.getReason()) + " at index " + e.getIndex());
    }
    String scheme = uri.getScheme();
    if (scheme == null) {
      throw new ValidationException(
          field,
          "must be a file:// or http(s):// URL or an absolute local path, got "
              + Texts.quote(value));
    }
    switch (scheme.toLowerCase(Locale.ROOT)) {
      case "file" -> requireLocalFile(uri, value, field);
      case "http", "https" -> {
        if (uri.getRawUserInfo() != null) {
          // The URL is stored in the job and echoed in snapshots and logs: no secret may ride in
          // it.
          throw new ValidationException(
              field,
              "must not carry credentials (user:password@); configure them on "
                  + "the seed node with mooncake_client --source-credentials");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
          throw new ValidationException(field, "must name a host, got " + Texts.quote(value));
        }
      }
      default ->
          throw new ValidationException(
              field,
              "scheme "
                  + Texts.quote(scheme)
                  + " is not supported; use file://, http://, https:// or an absolute local path");
    }
    return value;
  }

  /** A file URL is read by the seed itself, so it must name a local absolute path, never a host. */
  private static void requireLocalFile(URI uri, String value, String field) {
    if (!value.regionMatches(true, 0, "file://", 0, 7)) {
      throw new ValidationException(
          field, "file URLs must look like file:///absolute/path, got " + Texts.quote(value));
    }
    String authority = uri.getRawAuthority();
    if (authority != null && !authority.isEmpty() && !authority.equalsIgnoreCase("localhost")) {
      throw new ValidationException(
          field, "file URLs must not name a remote host, got " + Texts.quote(authority));
    }
    String path = uri.getPath();
    if (path == null || path.length() < 2 || !path.startsWith("/")) {
      throw new ValidationException(
          field, "file URLs must name an absolute file path, got " + Texts.quote(value));
    }
    // getPath() is percent-decoded: "%00" would otherwise slip a NUL past the check above.
    Texts.requirePrintable(path, field);
  }
}
