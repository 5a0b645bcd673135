package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Credentials for HTTP(S) sources, kept on the node ({@code mooncake_client --source-credentials}),
 * never in a job: a job names a URL, the node adds the header configured for that URL's prefix. One
 * entry per line, {@code <url-prefix> <Header-Name>: <value>}, e.g. {@code
 * https://models.example.com/private/ Authorization: Bearer abc}; {@code #} lines are comments. A
 * prefix matches a URL of the same scheme, host and port whose path starts with the prefix's path;
 * the longest prefix wins. Matching is per request, so a redirect to another origin does not carry
 * the header along. {@link #toString()} never shows a value.
 */
public final class SourceCredentials {
  /** A header to send to URLs under {@code prefix}. */
  public record Entry(URI prefix, String header, String value) {
    @Override
    public String toString() {
      return prefix + " " + header + ": <redacted>";
    }
  }

  /** No credentials: every source is fetched anonymously. */
  public static final SourceCredentials NONE = new SourceCredentials(List.of());

  private final List<Entry> entries; // longest prefix first

  private SourceCredentials(List<Entry> entries) {
    this.entries =
        entries.stream()
            .sorted(Comparator.comparingInt((Entry e) -> e.prefix.getRawPath().length()).reversed())
            .toList();
  }

  /**
   * Reads a credentials file; refuses one that group or others may read, naming the file and line.
   */
  public static SourceCredentials load(Path file) {
    try {
      io.mooncake.dist.db.SecretFiles.requireOwnerOnly(file, "credentials file");
      return parse(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such file");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage());
    }
  }

  /** Parses credentials text; {@code origin} names it in errors (which never quote a value). */
  public static SourceCredentials parse(String origin, String text) {
    List<Entry> entries = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String where = origin + " line " + (i + 1) + ": ";
      int space = line.indexOf(' ');
      int colon = space < 0 ? -1 : line.indexOf(':', space);
      if (space < 0 || colon < 0) {
        throw new IllegalArgumentException(
            where + "expected '<url-prefix> <Header-Name>: <value>'");
      }
      URI prefix = prefix(line.substring(0, space), where);
      String header = line.substring(space + 1, colon).strip();
      String value = line.substring(colon + 1).strip();
      if (!header.matches("[A-Za-z0-9-]+")) {
        throw new IllegalArgumentException(where + "header name must be letters, digits and '-'");
      }
      if (value.isEmpty() || !value.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
        throw new IllegalArgumentException(
            where + "header value must be non-empty printable ASCII");
      }
      entries.add(new Entry(prefix, header, value));
    }
    return new SourceCredentials(entries);
  }

  /** The entry for {@code url}: same scheme, host and port, longest matching path prefix. */
  public Optional<Entry> forUrl(URI url) {
    if (url.getScheme() == null || url.getHost() == null) {
      return Optional.empty();
    }
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    for (Entry e : entries) {
      URI p = e.prefix;
      if (p.getScheme().equalsIgnoreCase(url.getScheme())
          && p.getHost().equalsIgnoreCase(url.getHost())
          && port(p) == port(url)
          && path.startsWith(p.getRawPath())) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }

  /** How many entries the file had. */
  public int size() {
    return entries.size();
  }

  @Override
  public String toString() {
    return entries.toString();
  }

  private static URI prefix(String text, String where) {
    URI uri;
    try {
      uri = new URI(text);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(where + "not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
      throw new IllegalArgumentException(
          where + "URL prefix must be http(s)://<host>[:<port>][/<path>]");
    }
    if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException(
          where + "URL prefix must not have user info, a query or a fragment");
    }
    String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    return URI.create(scheme + "://" + uri.getRawAuthority() + path);
  }

  private static int port(URI uri) {
    if (uri.getPort() >= 0) {
      return uri.getPort();
    }
    return uri.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }
}
