package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.SourceRules;
import io.mooncake.dist.scheduler.domain.SourceUrls;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a model source for sequential streaming reads: a local file ({@code file:///abs/path} or
 * {@code /abs/path}) or an HTTP(S) URL. Everything that can be checked before the first body byte
 * is checked here (existence, HTTP status, Content-Length against the manifest), so a doomed
 * download fails before it touches the disk. Thread-safe; one instance shares one {@link
 * HttpClient} across downloads.
 */
public final class SourceOpener {
  private static final Logger log = LoggerFactory.getLogger(SourceOpener.class);

  /** Redirects followed before giving up. */
  static final int MAX_REDIRECTS = 5;

  /** How long a source may take to answer a request with its status and headers. */
  static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(60);

  /** How long a source's body may go without a byte before the download fails (retryable). */
  static final Duration STALL_TIMEOUT = Duration.ofSeconds(60);

  private final Duration stallTimeout;

  private final HttpClient http;
  private final SourceCredentials credentials;

  /** An anonymous opener. */
  public SourceOpener() {
    this(SourceCredentials.NONE);
  }

  /**
   * An opener adding the configured credential header to each HTTP request whose URL it matches.
   * Redirects are followed here (at most {@value #MAX_REDIRECTS}, never from https to http), not by
   * the HTTP client, so a header is only ever sent to the origin it was configured for.
   */
  public SourceOpener(SourceCredentials credentials) {
    this(credentials, STALL_TIMEOUT);
  }

  /** As above, failing a body that sends no byte for {@code stallTimeout} (tests shorten it). */
  SourceOpener(SourceCredentials credentials, Duration stallTimeout) {
    this.stallTimeout = stallTimeout;
    this.http =
        HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    this.credentials = credentials;
  }

  /**
   * Opens {@code url} for reading from its first byte. The caller closes the stream.
   *
   * @param expectedSize the manifest's size_bytes, checked against an HTTP Content-Length
   * @throws StoreException when the source is missing, unreadable or refused; retryable only when a
   *     later attempt could succeed (HTTP 5xx or 429, a connection failure)
   */
  public InputStream open(String url, long expectedSize) throws StoreException {
    return open(url, expectedSize, SourceRules.ANY);
  }

  /**
   * As {@link #open(String, long)}, reading only what {@code rules} allow: the URL itself, every
   * redirect hop (each checked like the first, and with {@code --public-sources-only} each hop's
   * host resolved and refused unless every address is public), and for a file its real path, links
   * resolved, under an allowed root.
   *
   * @throws StoreException not retryable when the rules refuse the source or a hop
   */
  public InputStream open(String url, long expectedSize, SourceRules rules) throws StoreException {
    return open(url, expectedSize, rules, 0, null).in();
  }

  /**
   * A source opened for a download: the stream, the byte of the file it starts at, and the source's
   * validator (a strong HTTP ETag or else its Last-Modified; for a file its device, inode, size and
   * modification time), or null when it has none.
   */
  public record Opened(InputStream in, long startsAt, String validator) {}

  /**
   * As {@link #open(String, long, SourceRules)}, asking for the bytes from {@code from} on (a
   * download resuming after the objects it kept). HTTP sends {@code Range: bytes=<from>-} and, when
   * {@code ifRange} is given, {@code If-Range: <ifRange>}, so a source that changed since answers
   * with the whole new file. Only a 206 whose {@code Content-Range} is exactly {@code
   * <from>-<size-1>/<size>} starts at {@code from}; a 200 (the source ignores ranges, or it
   * changed) starts at 0, as does a 206 for another range or a 416, which are read again without a
   * range. A file starts at {@code from} only when its validator still equals {@code ifRange}.
   *
   * @param from 0 for the whole file
   * @param ifRange the validator the kept bytes were read under, or null
   */
  public Opened open(String url, long expectedSize, SourceRules rules, long from, String ifRange)
      throws StoreException {
    if (url == null || url.isBlank()) {
      throw new StoreException("no source URL given", false);
    }
    if (from < 0 || from >= Math.max(expectedSize, 1)) {
      throw new IllegalArgumentException("resume offset " + from + " outside 0.." + expectedSize);
    }
    refuseIf(rules.refusal(url));
    if (url.startsWith("http://") || url.startsWith("https://")) {
      return openHttp(url, expectedSize, rules, from, ifRange);
    }
    if (url.startsWith("file:")) {
      Path path;
      try {
        path = Path.of(new URI(url));
      } catch (URISyntaxException | IllegalArgumentException e) {
        throw new StoreException("malformed file URL " + SourceUrls.display(url), false, e);
      }
      return openFile(confined(path, rules), expectedSize, from, ifRange);
    }
    if (url.startsWith("/")) {
      return openFile(confined(Path.of(url), rules), expectedSize, from, ifRange);
    }
    throw new StoreException(
        "unsupported source URL "
            + SourceUrls.display(url)
            + " (expected file:///..., an absolute path, http:// or https://)",
        false);
  }

  private static void refuseIf(java.util.Optional<String> refusal) throws StoreException {
    if (refusal.isPresent()) {
      throw new StoreException(refusal.get(), false);
    }
  }

  /**
   * The file itself, links resolved, when the rules name roots: a link under an allowed root that
   * leads out of it is refused like a path outside it.
   */
  private static Path confined(Path path, SourceRules rules) throws StoreException {
    if (rules.anySource()) {
      return path;
    }
    Path real;
    try {
      real = path.toRealPath();
    } catch (IOException e) {
      return path; // missing or unreadable: openFile says which
    }
    for (String root : rules.fileRoots()) {
      Path r = Path.of(root);
      try {
        r = r.toRealPath();
      } catch (IOException e) {
        // a root that does not exist here holds nothing; compare lexically
      }
      if (real.startsWith(r)) {
        return real;
      }
    }
    throw new StoreException(
        "source " + path + " resolves to " + real + ", outside the allowed sources", false);
  }

  private static Opened openFile(Path path, long expectedSize, long from, String ifRange)
      throws StoreException {
    if (Files.isDirectory(path)) {
      throw new StoreException("source " + path + " is a directory, not a file", false);
    }
    try {
      InputStream in = Files.newInputStream(path);
      // A file's size is known before reading: refuse a mismatch before a byte is written or
      // published (the copy still checks the bytes actually read, in case the file changes).
      long size = Files.size(path);
      if (size != expectedSize) {
        in.close();
        throw new StoreException(
            "source " + path + " is " + size + " bytes, manifest size_bytes is " + expectedSize,
            false);
      }
      String validator = fileValidator(path);
      if (from > 0 && validator.equals(ifRange)) {
        try {
          in.skipNBytes(from);
        } catch (IOException e) {
          in.close();
          throw e;
        }
        return new Opened(in, from, validator);
      }
      if (from > 0) {
        log.info(
            "source {} changed since the kept bytes were read; reading it from the start", path);
      }
      return new Opened(in, 0, validator);
    } catch (NoSuchFileException e) {
      throw new StoreException("source file not found: " + path, false, e);
    } catch (AccessDeniedException e) {
      throw new StoreException(
          "source file " + path + " is not readable (permission denied)", false, e);
    } catch (IOException e) {
      throw new StoreException(
          "cannot open source file " + path + ": " + FileOps.describe(e), true, e);
    }
  }

  /** Device, inode, size and modification time: any rewrite or replacement changes it. */
  private static String fileValidator(Path path) throws IOException {
    java.util.Map<String, Object> a =
        Files.readAttributes(path, "unix:dev,ino,size,lastModifiedTime");
    return "file:"
        + a.get("dev")
        + ":"
        + a.get("ino")
        + ":"
        + a.get("size")
        + ":"
        + ((java.nio.file.attribute.FileTime) a.get("lastModifiedTime"))
            .to(java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  private Opened openHttp(
      String url, long expectedSize, SourceRules rules, long from, String ifRange)
      throws StoreException {
    URI current;
    try {
      current = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new StoreException("malformed URL " + SourceUrls.display(url), false, e);
    }
    for (int hop = 0; ; hop++) {
      if (hop > 0) {
        String hopUrl = current.toString();
        java.util.Optional<String> refusal = rules.refusal(hopUrl);
        if (refusal.isPresent()) {
          throw new StoreException(
              "redirect from " + SourceUrls.display(url) + " refused: " + refusal.get(), false);
        }
      }
      refuseIf(rules.refusalOfAddresses(current.getHost()));
      HttpResponse<InputStream> response = send(current, url, from, ifRange);
      int status = response.statusCode();
      if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
        closeQuietly(response.body(), url);
        current = redirect(current, response, url, hop);
        continue;
      }
      if (from > 0 && (status == 206 || status == 416)) {
        java.util.Optional<String> wrong =
            status == 416
                ? java.util.Optional.of("it answered 416 (range not satisfiable)")
                : RangeAnswer.problem(
                    response.headers().firstValue("Content-Range").orElse(null),
                    response.headers().firstValueAsLong("Content-Length"),
                    from,
                    expectedSize);
        if (wrong.isEmpty()) {
          return new Opened(
              new StallGuard(response.body(), stallTimeout, describe(url, current)),
              from,
              ifRange != null ? ifRange : validator(response));
        }
        closeQuietly(response.body(), url);
        log.warn(
            "source {} did not resume at byte {}: {}; reading it from the start",
            describe(url, current),
            from,
            wrong.get());
        return openHttp(url, expectedSize, rules, 0, null);
      }
      if (status != 200) {
        closeQuietly(response.body(), url);
        boolean retryable = status >= 500 || status == 429;
        boolean auth = status == 401 || status == 403;
        throw new StoreException(
            "HTTP "
                + status
                + " from "
                + describe(url, current)
                + (auth
                    ? (credentials.forUrl(current).isPresent()
                        ? " (the configured credential was refused)"
                        : " (no credential configured for it in --source-credentials)")
                    : ""),
            retryable);
      }
      OptionalLong contentLength = response.headers().firstValueAsLong("Content-Length");
      if (contentLength.isPresent() && contentLength.getAsLong() != expectedSize) {
        closeQuietly(response.body(), url);
        throw new StoreException(
            "source "
                + describe(url, current)
                + " has Content-Length "
                + contentLength.getAsLong()
                + ", manifest size_bytes "
                + expectedSize,
            false);
      }
      if (from > 0) {
        log.info(
            "source {} answered a range request for bytes {}- with the whole file (HTTP 200: it"
                + " ignores ranges, or it changed since the kept bytes were read); reading it from"
                + " the start",
            describe(url, current),
            from);
      }
      return new Opened(
          new StallGuard(response.body(), stallTimeout, describe(url, current)),
          0,
          validator(response));
    }
  }

  /**
   * What identifies this version of an HTTP source in an {@code If-Range}: its ETag when strong (a
   * weak one may not be used there), else its Last-Modified, else null.
   */
  private static String validator(HttpResponse<?> response) {
    java.util.Optional<String> etag = response.headers().firstValue("ETag");
    if (etag.isPresent() && !etag.get().startsWith("W/") && !etag.get().isBlank()) {
      return etag.get();
    }
    return response.headers().firstValue("Last-Modified").filter(v -> !v.isBlank()).orElse(null);
  }

  private HttpResponse<InputStream> send(URI target, String url, long from, String ifRange)
      throws StoreException {
    HttpRequest.Builder request;
    try {
      request =
          HttpRequest.newBuilder(target)
              .timeout(RESPONSE_TIMEOUT)
              .header("User-Agent", "mooncake-node-worker")
              .GET();
      if (from > 0) {
        request.header("Range", "bytes=" + from + "-");
        if (ifRange != null) {
          request.header("If-Range", ifRange);
        }
      }
      credentials.forUrl(target).ifPresent(e -> request.header(e.header(), e.value()));
    } catch (IllegalArgumentException e) {
      throw new StoreException("malformed URL " + SourceUrls.display(target), false, e);
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new StoreException(
          "cannot fetch " + describe(url, target) + ": " + FileOps.describe(e), true, e);
    } catch (InterruptedException e) {
      // Keep the interrupt visible to the task runner, which is what asked us to stop.
      Thread.currentThread().interrupt();
      throw new StoreException(
          "interrupted while connecting to " + SourceUrls.display(url), true, e);
    }
  }

  private static URI redirect(URI from, HttpResponse<?> response, String url, int hop)
      throws StoreException {
    String location = response.headers().firstValue("Location").orElse(null);
    if (location == null) {
      throw new StoreException(
          "HTTP " + response.statusCode() + " from " + describe(url, from) + " without a Location",
          false);
    }
    if (hop + 1 > MAX_REDIRECTS) {
      throw new StoreException(
          "more than " + MAX_REDIRECTS + " redirects fetching " + SourceUrls.display(url), false);
    }
    URI next;
    try {
      next = from.resolve(location);
    } catch (IllegalArgumentException e) {
      throw new StoreException("malformed redirect Location from " + describe(url, from), false, e);
    }
    String scheme =
        next.getScheme() == null ? "" : next.getScheme().toLowerCase(java.util.Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new StoreException(
          "redirect from " + describe(url, from) + " to a non-HTTP URL", false);
    }
    if (from.getScheme().equalsIgnoreCase("https") && scheme.equals("http")) {
      throw new StoreException(
          "redirect from https to plain http refused for " + SourceUrls.display(url), false);
    }
    return next;
  }

  /**
   * The URL the job named, plus where a redirect led (for errors), without query strings or user
   * info: a presigned redirect's signature must not reach {@code last_error} or the logs.
   */
  private static String describe(String url, URI current) {
    return current.toString().equals(url)
        ? SourceUrls.display(url)
        : SourceUrls.display(url) + " (redirected to " + SourceUrls.display(current) + ")";
  }

  private static void closeQuietly(InputStream in, String url) {
    try {
      in.close();
    } catch (IOException e) {
      log.debug(
          "closing the response body of {} failed: {}", SourceUrls.display(url), e.toString());
    }
  }
}
