package io.mooncake.dist.cli.manifest.hub;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.Optional;

/**
 * Turns a hub answer other than 200 or a redirect into a message that names the repo and revision
 * and says what to do. The hub tells its refusals apart with {@code X-Error-Code} ({@code
 * RepoNotFound}, {@code GatedRepo}, {@code RevisionNotFound}, {@code EntryNotFound}); a 401 without
 * one means a repo that does not exist or is private, which the hub does not tell apart on purpose.
 */
final class HubErrors {
  static final String TOKEN_HINT =
      "set HF_TOKEN, or HF_TOKEN_PATH to a file holding it, or put it in $HF_HOME/token "
          + "(default ~/.cache/huggingface/token)";

  private HubErrors() {}

  static HubException of(
      HttpResponse<?> response,
      URI url,
      HubRef ref,
      String what,
      URI endpoint,
      Optional<HubToken> token) {
    int status = response.statusCode();
    String code = response.headers().firstValue("X-Error-Code").orElse("");
    String hubSays =
        response
            .headers()
            .firstValue("X-Error-Message")
            .map(m -> " (the hub says: " + HubJson.shorten(m) + ")")
            .orElse("");
    String at = ref + ": ";
    String hub = "the hub at " + endpoint;
    if (status == 429) {
      return new HubException(
          HubException.Kind.UNAVAILABLE,
          at
              + hub
              + " is rate-limiting requests (HTTP 429) while asking for "
              + what
              + retryAfter(response)
              + hubSays);
    }
    if (code.equals("GatedRepo")) {
      return refused(
          at
              + ref.repoId()
              + " is a gated repo: "
              + token
                  .map(
                      t ->
                          "the token from "
                              + t.source()
                              + " has not been granted access; request access on the repo's "
                              + "page with that account")
                  .orElse(
                      "no Hugging Face token was found; "
                          + TOKEN_HINT
                          + " for an account that has been granted access")
              + hubSays);
    }
    if (code.equals("RevisionNotFound")) {
      return refused(
          at
              + "revision '"
              + ref.revision()
              + "' not found in "
              + ref.repoId()
              + " on "
              + endpoint
              + " (give a branch, tag or commit of the repo)"
              + hubSays);
    }
    if (code.equals("EntryNotFound")) {
      return refused(at + what + " not found in the repo at that revision" + hubSays);
    }
    if (code.equals("RepoNotFound") || status == 401) {
      return refused(
          at
              + "repo "
              + ref.repoId()
              + " not found on "
              + endpoint
              + ", or it is private and "
              + token
                  .map(t -> "the token from " + t.source() + " cannot read it")
                  .orElse("no Hugging Face token was found (" + TOKEN_HINT + ")")
              + hubSays);
    }
    if (status == 403) {
      return refused(
          at
              + hub
              + " refused "
              + what
              + " (HTTP 403)"
              + token
                  .map(t -> "; the token from " + t.source() + " may lack read access")
                  .orElse("; no Hugging Face token was found (" + TOKEN_HINT + ")")
              + hubSays);
    }
    if (status >= 500) {
      return new HubException(
          HubException.Kind.UNAVAILABLE,
          at
              + HubClient.display(url)
              + " answered HTTP "
              + status
              + " for "
              + what
              + "; try again later"
              + hubSays);
    }
    return refused(
        at + HubClient.display(url) + " answered HTTP " + status + " for " + what + hubSays);
  }

  private static HubException refused(String message) {
    return new HubException(HubException.Kind.NOT_FOUND_OR_REFUSED, message);
  }

  /** "; retry after 30 s", from {@code Retry-After} (seconds or an HTTP date), or a plain hint. */
  static String retryAfter(HttpResponse<?> response) {
    Optional<String> value = response.headers().firstValue("Retry-After").map(String::strip);
    if (value.isEmpty() || value.get().isEmpty()) {
      return "; try again later";
    }
    String v = value.get();
    if (v.matches("\\d{1,9}")) {
      return "; the hub asks to retry after " + Long.parseLong(v) + " s";
    }
    return "; the hub asks to retry after " + HubJson.shorten(v);
  }
}
