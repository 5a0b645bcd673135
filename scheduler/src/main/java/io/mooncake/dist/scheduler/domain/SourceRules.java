package io.mooncake.dist.scheduler.domain;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which model sources a seed may read: the master's {@code --allowed-sources} (local directories
 * {@code file:///models/} and HTTP origins {@code https://hub.example:443}), {@code
 * --allow-any-source}, and {@code --public-sources-only} (HTTP hosts must resolve to public
 * addresses only). The master checks a job's URLs against it when the job is created and stores it
 * with the job; the seed gets it in its download task and checks every redirect hop against it too.
 * The default, no roots, no origins and not {@code anySource}, allows nothing.
 *
 * @param anySource every file and HTTP(S) source is allowed (still subject to {@code publicOnly})
 * @param fileRoots normalized absolute directories whose files may be read
 * @param origins {@code scheme://host:port}, lower case, with the default port filled in
 * @param publicOnly HTTP(S) hosts must resolve to public unicast addresses only: no loopback,
 *     link-local (cloud metadata), private (RFC 1918, fc00::/7), shared (100.64/10), unspecified or
 *     multicast address
 */
public record SourceRules(
    boolean anySource, List<String> fileRoots, List<String> origins, boolean publicOnly) {

  /** Allows nothing: the default of a master started without a source option. */
  public static final SourceRules NONE = new SourceRules(false, List.of(), List.of(), false);

  /** Allows every source: {@code --allow-any-source}, and jobs created before rules were stored. */
  public static final SourceRules ANY = new SourceRules(true, List.of(), List.of(), false);

  public SourceRules {
    fileRoots = List.copyOf(fileRoots == null ? List.of() : fileRoots);
    origins = List.copyOf(origins == null ? List.of() : origins);
  }

  /**
   * Parses a comma-separated list of {@code file:///dir/} roots and {@code http(s)://host[:port]}
   * origins.
   *
   * @throws IllegalArgumentException naming the entry that is neither
   */
  public static SourceRules parse(String spec, boolean anySource, boolean publicOnly) {
    List<String> roots = new ArrayList<>();
    List<String> origins = new ArrayList<>();
    for (String raw : spec == null ? new String[0] : spec.split(",")) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      URI uri;
      try {
        uri = URI.create(entry);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("allowed source '" + entry + "' is not a URL");
      }
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if (scheme.equals("file") && uri.getPath() != null && uri.getPath().startsWith("/")) {
        roots.add(Path.of(uri.getPath()).normalize().toString());
      } else if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
        origins.add(origin(uri));
      } else {
        throw new IllegalArgumentException(
            "allowed source '"
                + entry
                + "' must be file:///<directory> or http(s)://<host>[:<port>]");
      }
    }
    return new SourceRules(anySource, roots, origins, publicOnly);
  }

  /** Whether no source at all would pass. */
  public boolean allowsNothing() {
    return !anySource && fileRoots.isEmpty() && origins.isEmpty();
  }

  /**
   * Why {@code url} may not be read, judged on its text alone (the host's addresses are checked by
   * {@link #refusalOfAddresses}); empty when it may.
   */
  public Optional<String> refusal(String url) {
    if (anySource) {
      return Optional.empty();
    }
    if (allowsNothing()) {
      return Optional.of(
          "source "
              + SourceUrls.display(url)
              + " is not allowed: no source is (the master needs --allowed-sources or"
              + " --allow-any-source)");
    }
    boolean allowed;
    try {
      if (url.startsWith("/")) {
        allowed = underRoot(Path.of(url));
      } else {
        URI uri = URI.create(url);
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        allowed =
            scheme.equals("file")
                ? uri.getPath() != null && underRoot(Path.of(uri.getPath()))
                : (scheme.equals("http") || scheme.equals("https"))
                    && uri.getHost() != null
                    && origins.contains(origin(uri));
      }
    } catch (IllegalArgumentException e) {
      allowed = false;
    }
    return allowed
        ? Optional.empty()
        : Optional.of(
            "source " + SourceUrls.display(url) + " is not allowed (allowed: " + describe() + ")");
  }

  /**
   * With {@code publicOnly}: why {@code host} may not be fetched, resolving it; empty when every
   * address it resolves to is public, or when the rules do not ask.
   */
  public Optional<String> refusalOfAddresses(String host) {
    if (!publicOnly) {
      return Optional.empty();
    }
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(host);
    } catch (UnknownHostException e) {
      return Optional.of("host " + host + " does not resolve");
    }
    for (InetAddress a : addresses) {
      if (!isPublic(a)) {
        return Optional.of(
            "host "
                + host
                + " resolves to "
                + a.getHostAddress()
                + ", a loopback, link-local, private or otherwise non-public address"
                + " (--public-sources-only)");
      }
    }
    return Optional.empty();
  }

  /** Public unicast: what {@code --public-sources-only} admits. */
  public static boolean isPublic(InetAddress a) {
    if (a.isLoopbackAddress()
        || a.isLinkLocalAddress()
        || a.isSiteLocalAddress()
        || a.isAnyLocalAddress()
        || a.isMulticastAddress()) {
      return false;
    }
    byte[] b = a.getAddress();
    if (b.length == 4) {
      int first = b[0] & 0xff;
      int second = b[1] & 0xff;
      return first != 0 // "this network"
          && !(first == 100 && second >= 64 && second < 128) // shared address space, RFC 6598
          && !(first == 192 && second == 0 && (b[2] & 0xff) == 0) // IETF protocol assignments
          && !(first == 198 && (second == 18 || second == 19)) // benchmarking
          && first < 240; // reserved, broadcast
    }
    int first = b[0] & 0xff;
    // fc00::/7 unique local; IPv4-mapped and other embeddings are judged by Java as v4 already.
    return (first & 0xfe) != 0xfc;
  }

  /** The allowed sources, for messages. */
  public String describe() {
    if (anySource) {
      return "any source" + (publicOnly ? " on a public address" : "");
    }
    List<String> all = new ArrayList<>();
    fileRoots.forEach(r -> all.add("file://" + (r.endsWith("/") ? r : r + "/")));
    all.addAll(origins);
    return all.isEmpty() ? "none" : String.join(", ", all);
  }

  private boolean underRoot(Path path) {
    Path p = path.normalize();
    return fileRoots.stream().map(Path::of).anyMatch(p::startsWith);
  }

  private static String origin(URI uri) {
    String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
    int port = uri.getPort() != -1 ? uri.getPort() : scheme.equals("https") ? 443 : 80;
    return scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + ":" + port;
  }
}
