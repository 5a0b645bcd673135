package io.mooncake.dist.worker.store;

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

  private final HttpClient http;

  /** An opener whose HTTP client follows normal redirects and gives up connecting after 10 s. */
  public SourceOpener() {
    this.http = HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NORMAL)
        .connectTimeout(Duration.ofSeconds(10))
        .build();
  }

  /**
   * Opens {@code url} for reading from its first byte. The caller closes the stream.
   *
   * @param expectedSize the manifest's size_bytes, checked against an HTTP Content-Length
   * @throws StoreException when the source is missing, unreadable or refused; retryable only when
   *     a later attempt could succeed (HTTP 5xx or 429, a connection failure)
   */
  public InputStream open(String url, long expectedSize) throws StoreException {
    if (url == null || url.isBlank()) {
      throw new StoreException("no source URL given", false);
    }
    if (url.startsWith("http://") || url.startsWith("https://")) {
      return openHttp(url, expectedSize);
    }
    if (url.startsWith("file:")) {
      Path path;
      try {
        path = Path.of(new URI(url));
      } catch (URISyntaxException | IllegalArgumentException e) {
        throw new StoreException("malformed file URL " + url + ": " + e.getMessage(), false, e);
      }
      return openFile(path, expectedSize);
    }
    if (url.startsWith("/")) {
      return openFile(Path.of(url), expectedSize);
    }
    throw new StoreException("unsupported source URL " + url
        + " (expected file:///..., an absolute path, http:// or https://)", false);
  }

  private static InputStream openFile(Path path, long expectedSize) throws StoreException {
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
        throw new StoreException("source " + path + " is " + size + " bytes, manifest size_bytes is " + expectedSize,
            false);
      }
      return in;
    } catch (NoSuchFileException e) {
      throw new StoreException("source file not found: " + path, false, e);
    } catch (AccessDeniedException e) {
      throw new StoreException("source file " + path + " is not readable (permission denied)", false, e);
    } catch (IOException e) {
      throw new StoreException("cannot open source file " + path + ": " + FileOps.describe(e), true, e);
    }
  }

  private InputStream openHttp(String url, long expectedSize) throws StoreException {
    HttpRequest request;
    try {
      request = HttpRequest.newBuilder(URI.create(url))
          .header("User-Agent", "mooncake-node-worker")
          .GET()
          .build();
    } catch (IllegalArgumentException e) {
      throw new StoreException("malformed URL " + url + ": " + e.getMessage(), false, e);
    }
    HttpResponse<InputStream> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new StoreException("cannot fetch " + url + ": " + FileOps.describe(e), true, e);
    } catch (InterruptedException e) {
      // Keep the interrupt visible to the task runner, which is what asked us to stop.
      Thread.currentThread().interrupt();
      throw new StoreException("interrupted while connecting to " + url, true, e);
    }
    int status = response.statusCode();
    if (status != 200) {
      closeQuietly(response.body(), url);
      boolean retryable = status >= 500 || status == 429;
      throw new StoreException("HTTP " + status + " from " + url, retryable);
    }
    OptionalLong contentLength = response.headers().firstValueAsLong("Content-Length");
    if (contentLength.isPresent() && contentLength.getAsLong() != expectedSize) {
      closeQuietly(response.body(), url);
      throw new StoreException("source " + url + " has Content-Length " + contentLength.getAsLong()
          + ", manifest size_bytes " + expectedSize, false);
    }
    return response.body();
  }

  private static void closeQuietly(InputStream in, String url) {
    try {
      in.close();
    } catch (IOException e) {
      log.debug("closing the response body of {} failed: {}", url, e.toString());
    }
  }
}
