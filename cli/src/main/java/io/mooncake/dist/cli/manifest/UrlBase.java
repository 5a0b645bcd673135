package io.mooncake.dist.cli.manifest;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where the seed downloads a model's files from: a {@code file://} or {@code http(s)://} base to
 * which each relative path is appended, percent-encoded segment by segment (the seed parses {@code
 * file://} URLs as URIs, so a space in a file name must arrive as {@code %20}).
 */
public final class UrlBase {
  private final String base;

  private UrlBase(String base) {
    this.base = base.endsWith("/") ? base : base + "/";
  }

  /** The folder itself as a {@code file://} URL, the default. */
  public static UrlBase of(Path folder) {
    return new UrlBase(folder.toAbsolutePath().normalize().toUri().toASCIIString());
  }

  /**
   * An operator-given base.
   *
   * @throws IllegalArgumentException when it is not a {@code file:///...} or {@code
   *     http(s)://host/...} URL
   */
  public static UrlBase parse(String text) {
    URI uri;
    try {
      uri = new URI(text);
    } catch (Exception e) {
      throw new IllegalArgumentException("'" + text + "' is not a URL: " + e.getMessage(), e);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    boolean ok =
        switch (scheme) {
          case "file" -> text.regionMatches(true, 0, "file:///", 0, 8);
          case "http", "https" -> uri.getHost() != null && !uri.getHost().isEmpty();
          default -> false;
        };
    if (!ok) {
      throw new IllegalArgumentException(
          "must be a file:///absolute/path/ or http(s)://host/path/ base, got '" + text + "'");
    }
    return new UrlBase(text);
  }

  /** The base, always ending in '/'. */
  public String base() {
    return base;
  }

  /** The URL of {@code relativePath} ('/'-separated) under this base. */
  public String resolve(String relativePath) {
    StringBuilder sb = new StringBuilder(base);
    String[] segments = relativePath.split("/", -1);
    for (int i = 0; i < segments.length; i++) {
      if (i > 0) {
        sb.append('/');
      }
      encodeSegment(segments[i], sb);
    }
    return sb.toString();
  }

  // RFC 3986 unreserved characters stay; every other byte of the UTF-8 form is %XX. Stricter than
  // needed, but one rule that both the file:// and the http(s):// readers decode the same way.
  private static void encodeSegment(String segment, StringBuilder out) {
    for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        out.append((char) c);
      } else {
        out.append('%')
            .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
  }
}
