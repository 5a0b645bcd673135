package io.mooncake.dist.master.validation;

import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which model sources the seeds may read: local directories ({@code file:///models/}) and HTTP
 * origins ({@code https://hub.example:443}). An empty policy allows every source (local use). A
 * request naming any other source is refused at validation, before anything is written.
 */
public final class SourcePolicy {
  public static final SourcePolicy ALLOW_ALL = new SourcePolicy(List.of(), List.of());

  private final List<Path> fileRoots;
  private final List<String> origins;

  private SourcePolicy(List<Path> fileRoots, List<String> origins) {
    this.fileRoots = List.copyOf(fileRoots);
    this.origins = List.copyOf(origins);
  }

  /**
   * Parses a comma-separated list of {@code file:///dir/} roots and {@code http(s)://host[:port]}
   * origins.
   *
   * @throws IllegalArgumentException naming the entry that is neither
   */
  public static SourcePolicy parse(String spec) {
    if (spec == null || spec.isBlank()) {
      return ALLOW_ALL;
    }
    List<Path> roots = new ArrayList<>();
    List<String> origins = new ArrayList<>();
    for (String raw : spec.split(",")) {
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
        roots.add(Path.of(uri.getPath()).normalize());
      } else if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
        origins.add(origin(uri));
      } else {
        throw new IllegalArgumentException(
            "allowed source '"
                + entry
                + "' must be file:///<directory> or http(s)://<host>[:<port>]");
      }
    }
    return new SourcePolicy(roots, origins);
  }

  public boolean allowsAll() {
    return fileRoots.isEmpty() && origins.isEmpty();
  }

  /** Refuses the first file whose source the policy does not allow, naming its field. */
  public void check(JobRequest request) {
    if (allowsAll()) {
      return;
    }
    List<ManifestFile> files = request.manifest().files();
    for (int i = 0; i < files.size(); i++) {
      String url = files.get(i).downloadUrl();
      if (!allows(url)) {
        throw new ValidationException(
            "manifest.files[" + i + "].download_url",
            "source " + url + " is not allowed by this master (allowed: " + describe() + ")");
      }
    }
  }

  boolean allows(String url) {
    if (url.startsWith("/")) {
      return underRoot(Path.of(url));
    }
    URI uri = URI.create(url);
    String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
    if (scheme.equals("file")) {
      return underRoot(Path.of(uri.getPath()));
    }
    return origins.contains(origin(uri));
  }

  private boolean underRoot(Path path) {
    Path p = path.normalize();
    return fileRoots.stream().anyMatch(p::startsWith);
  }

  private static String origin(URI uri) {
    String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
    int port = uri.getPort() != -1 ? uri.getPort() : scheme.equals("https") ? 443 : 80;
    return scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + ":" + port;
  }

  private String describe() {
    List<String> all = new ArrayList<>();
    fileRoots.forEach(r -> all.add("file://" + r + "/"));
    all.addAll(origins);
    return String.join(", ", all);
  }
}
