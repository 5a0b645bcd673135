package io.mooncake.dist.cli.manifest.hub;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The hub's HTTP API, as the manifest builder needs it: pin a revision to its commit ({@code GET
 * /api/models/<repo>/revision/<rev>}), list a commit's files ({@code GET
 * /api/models/<repo>/tree/<commit>?recursive=true}, paged by {@code Link: <...>; rel="next"}) and
 * read a small file ({@code GET /<repo>/resolve/<commit>/<path>}). Redirects are followed here, at
 * most {@value #MAX_REDIRECTS}, never from https to http, and the token is sent only to the
 * endpoint's own origin, as the seed does with its {@code --source-credentials}. Every failure
 * becomes a {@link HubException} naming the repo, the revision and what to do.
 */
public final class HubClient {
  /** The public hub, when {@code HF_ENDPOINT} is not set. */
  public static final String DEFAULT_ENDPOINT = "https://huggingface.co";

  static final int MAX_REDIRECTS = 5;

  /** Pages of a tree listing followed before the listing is called endless. */
  static final int MAX_PAGES = 100_000;

  /** An API answer larger than this is not one the hub sends (a page is ~1000 entries). */
  static final int MAX_API_BODY = 32 << 20;

  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private final URI endpoint;
  private final Optional<HubToken> token;
  private final HttpClient http;

  /**
   * A client of the hub at {@code endpoint} (see {@link #endpoint(String)}), sending {@code token}
   * when there is one.
   */
  public HubClient(URI endpoint, Optional<HubToken> token) {
    this.endpoint = endpoint;
    this.token = token;
    this.http =
        HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
  }

  /**
   * The hub endpoint {@code text} names: an http(s) URL with a host and no query, user info or
   * trailing '/'.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static URI endpoint(String text) {
    String trimmed = text.strip().replaceAll("/+$", "");
    URI uri;
    try {
      uri = new URI(trimmed);
    } catch (Exception e) {
      throw new IllegalArgumentException("'" + text + "' is not a URL: " + e.getMessage(), e);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https"))
        || uri.getHost() == null
        || uri.getRawUserInfo() != null
        || uri.getRawQuery() != null
        || uri.getRawFragment() != null) {
      throw new IllegalArgumentException(
          "must be an http(s)://host[:port][/path] URL without user info or query, got '"
              + text
              + "'");
    }
    return uri;
  }

  public URI endpoint() {
    return endpoint;
  }

  public Optional<HubToken> token() {
    return token;
  }

  /** Pins {@code ref}'s revision to its commit and says whether downloads need a token. */
  public HubRevision revision(HubRef ref) throws HubException {
    URI uri = api(ref, "/revision/" + encode(ref.revision()));
    String what = "the revision API (" + display(uri) + ")";
    return HubJson.revision(text(get(uri, ref, "revision '" + ref.revision() + "'"), what), what);
  }

  /** Every file of {@code commit}, all pages of the tree listing, in the hub's order. */
  public List<HubEntry> files(HubRef ref, String commit) throws HubException {
    URI next = api(ref, "/tree/" + commit + "?recursive=true");
    List<HubEntry> files = new ArrayList<>();
    Set<URI> seen = new HashSet<>();
    Set<String> paths = new HashSet<>();
    for (int page = 1; next != null; page++) {
      if (!seen.add(next) || page > MAX_PAGES) {
        throw new HubException(
            HubException.Kind.INCONSISTENT,
            ref + ": the file list of commit " + commit + " pages without end (page " + page + ")");
      }
      HttpResponse<InputStream> response = get(next, ref, "the file list of commit " + commit);
      List<String> links = response.headers().allValues("Link");
      String what = "the file list of commit " + commit + ", page " + page;
      for (HubEntry e : HubJson.treePage(text(response, what), ref + ": " + what)) {
        if (!paths.add(e.path())) {
          throw new HubException(
              HubException.Kind.INCONSISTENT,
              ref + ": " + what + " lists " + HubJson.shorten(e.path()) + " twice");
        }
        files.add(e);
      }
      URI current = next;
      next = LinkHeader.next(links).map(current::resolve).orElse(null);
    }
    return files;
  }

  /** {@code <endpoint>/<repo>/resolve/<commit>/}: where the files of a commit are downloaded. */
  public String resolveBase(HubRef ref, String commit) {
    return endpoint + "/" + ref.repoId() + "/resolve/" + commit + "/";
  }

  /**
   * Downloads {@code entry} from {@code url} and returns its SHA-256, after checking its size and
   * git blob id against the tree's: the hash in the manifest is of the bytes the commit holds.
   */
  public String sha256(HubRef ref, String commit, HubEntry entry, String url) throws HubException {
    String what = "file " + HubJson.shorten(entry.path());
    HttpResponse<InputStream> response = get(URI.create(url), ref, what);
    String where = ref + " (commit " + commit + "): " + what;
    Optional<String> servedCommit = response.headers().firstValue("X-Repo-Commit");
    if (servedCommit.isPresent() && !servedCommit.get().equalsIgnoreCase(commit)) {
      close(response);
      throw new HubException(
          HubException.Kind.INCONSISTENT,
          where + " was served from commit " + HubJson.shorten(servedCommit.get()));
    }
    BlobDigest.Result digest;
    try (InputStream in = response.body()) {
      digest = BlobDigest.of(in, entry.sizeBytes());
    } catch (IOException e) {
      throw new HubException(
          HubException.Kind.UNAVAILABLE,
          where + ": download from " + display(URI.create(url)) + " broke off: " + e,
          e);
    }
    if (digest.sizeBytes() != entry.sizeBytes()) {
      throw new HubException(
          HubException.Kind.INCONSISTENT,
          where
              + ": the hub listed "
              + entry.sizeBytes()
              + " bytes but served "
              + (digest.sizeBytes() > entry.sizeBytes() ? "more" : digest.sizeBytes()));
    }
    if (entry.gitOid() != null && !entry.gitOid().equalsIgnoreCase(digest.gitOid())) {
      throw new HubException(
          HubException.Kind.INCONSISTENT,
          where
              + ": the bytes served have git blob id "
              + digest.gitOid()
              + ", the commit lists "
              + HubJson.shorten(entry.gitOid()));
    }
    return digest.sha256Hex();
  }

  private URI api(HubRef ref, String tail) {
    return URI.create(endpoint + "/api/models/" + ref.repoId() + tail);
  }

  /**
   * GETs {@code uri} following redirects; returns only a 200, whose body the caller reads and
   * closes.
   */
  private HttpResponse<InputStream> get(URI uri, HubRef ref, String what) throws HubException {
    URI current = uri;
    for (int hop = 0; ; hop++) {
      HttpResponse<InputStream> response = send(current, ref, what);
      int status = response.statusCode();
      if (status == 200) {
        return response;
      }
      close(response);
      if (status == 301 || status == 302 || status == 303 || status == 307 || status == 308) {
        current = redirect(current, response, ref, what, hop);
        continue;
      }
      throw HubErrors.of(response, current, ref, what, endpoint, token);
    }
  }

  private HttpResponse<InputStream> send(URI target, HubRef ref, String what) throws HubException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(target).timeout(TIMEOUT).header("User-Agent", "mooncake-cli").GET();
    if (token.isPresent() && sameOrigin(target, endpoint)) {
      request.header("Authorization", token.get().authorization());
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new HubException(
          HubException.Kind.UNAVAILABLE,
          ref + ": cannot reach " + display(target) + " for " + what + ": " + e,
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HubException(
          HubException.Kind.UNAVAILABLE, ref + ": interrupted while asking for " + what, e);
    }
  }

  private static URI redirect(URI from, HttpResponse<?> response, HubRef ref, String what, int hop)
      throws HubException {
    String location = response.headers().firstValue("Location").orElse(null);
    String at = ref + ": " + what + ": ";
    if (location == null) {
      throw new HubException(
          HubException.Kind.INCONSISTENT,
          at + "HTTP " + response.statusCode() + " from " + display(from) + " without a Location");
    }
    if (hop + 1 > MAX_REDIRECTS) {
      throw new HubException(
          HubException.Kind.INCONSISTENT, at + "more than " + MAX_REDIRECTS + " redirects");
    }
    URI next;
    try {
      next = from.resolve(location);
    } catch (IllegalArgumentException e) {
      throw new HubException(
          HubException.Kind.INCONSISTENT, at + "malformed redirect from " + display(from), e);
    }
    String scheme = next.getScheme() == null ? "" : next.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new HubException(
          HubException.Kind.INCONSISTENT, at + "redirect to a non-HTTP URL from " + display(from));
    }
    if (from.getScheme().equalsIgnoreCase("https") && scheme.equals("http")) {
      throw new HubException(
          HubException.Kind.INCONSISTENT,
          at + "redirect from https to plain http refused (" + display(from) + ")");
    }
    return next;
  }

  private static String text(HttpResponse<InputStream> response, String what) throws HubException {
    try (InputStream in = response.body()) {
      byte[] bytes = in.readNBytes(MAX_API_BODY + 1);
      if (bytes.length > MAX_API_BODY) {
        throw new HubException(
            HubException.Kind.INCONSISTENT,
            what + ": answer larger than " + MAX_API_BODY + " bytes");
      }
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new HubException(HubException.Kind.UNAVAILABLE, what + ": answer broke off: " + e, e);
    }
  }

  static boolean sameOrigin(URI a, URI b) {
    return a.getScheme().equalsIgnoreCase(b.getScheme())
        && a.getHost() != null
        && a.getHost().equalsIgnoreCase(b.getHost())
        && port(a) == port(b);
  }

  private static int port(URI uri) {
    if (uri.getPort() >= 0) {
      return uri.getPort();
    }
    return uri.getScheme().equalsIgnoreCase("https") ? 443 : 80;
  }

  /** A URL for messages: without its query, which for a CDN redirect holds a signature. */
  static String display(URI uri) {
    return uri.getScheme() + "://" + uri.getRawAuthority() + uri.getRawPath();
  }

  // A revision may hold '/' (refs/pr/1); it is one path segment for the API, so '/' is encoded too.
  static String encode(String segment) {
    StringBuilder out = new StringBuilder();
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
        out.append(String.format(Locale.ROOT, "%%%02X", c));
      }
    }
    return out.toString();
  }

  private static void close(HttpResponse<InputStream> response) {
    try {
      response.body().close();
    } catch (IOException e) {
      // nothing more to read from it either way
    }
  }
}
