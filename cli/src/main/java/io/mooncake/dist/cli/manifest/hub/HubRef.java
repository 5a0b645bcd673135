package io.mooncake.dist.cli.manifest.hub;

import java.util.regex.Pattern;

/**
 * A Hugging Face model named on the command line: {@code hf://<org>/<name>[@<revision>]}. The
 * revision is a branch, tag or commit as the user wrote it ({@code main} when absent); {@link
 * HubClient#revision} pins it to a commit.
 */
public record HubRef(String repoId, String revision) {
  public static final String SCHEME = "hf://";
  public static final String DEFAULT_REVISION = "main";

  // The hub's repo names: letters, digits, '-', '_', '.'; not starting with '.' or '-'; an
  // optional owner the same way. "org/name" is the form the hub uses today.
  private static final Pattern REPO_ID =
      Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]{0,95}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,95}");

  // Branches and tags are git ref names; refuse what git refuses and what would leave a path
  // segment (the revision is percent-encoded into the URL, but '..' and control bytes never make
  // a real ref).
  private static final Pattern REVISION = Pattern.compile("[A-Za-z0-9._/-]{1,255}");

  /** Whether {@code text} names a hub model rather than a local folder. */
  public static boolean isHub(String text) {
    return text.regionMatches(true, 0, SCHEME, 0, SCHEME.length());
  }

  /**
   * Parses {@code hf://<org>/<name>[@<revision>]}.
   *
   * @throws IllegalArgumentException naming what is wrong, for a usage error
   */
  public static HubRef parse(String text) {
    if (!isHub(text)) {
      throw new IllegalArgumentException("'" + text + "' does not start with " + SCHEME);
    }
    String rest = text.substring(SCHEME.length());
    int at = rest.indexOf('@');
    String repo = at < 0 ? rest : rest.substring(0, at);
    String revision = at < 0 ? DEFAULT_REVISION : rest.substring(at + 1);
    if (!REPO_ID.matcher(repo).matches() || repo.contains("..")) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "': expected hf://<org>/<name>[@<revision>], where org and name are letters, digits, "
              + "'-', '_' and '.'");
    }
    if (!REVISION.matcher(revision).matches()
        || revision.contains("..")
        || revision.startsWith("/")
        || revision.endsWith("/")) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "': the revision after '@' must be a branch, tag or commit (letters, digits, "
              + "'-', '_', '.', '/'), got '"
              + revision
              + "'");
    }
    return new HubRef(repo, revision);
  }

  @Override
  public String toString() {
    return SCHEME + repoId + "@" + revision;
  }
}
