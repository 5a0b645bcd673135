package io.mooncake.dist.cli.manifest.hub;

/**
 * The hub could not give what the manifest needs; the message names the repo and revision and what
 * to do.
 */
public final class HubException extends Exception {
  /** What kind of failure, so the command can pick its exit code. */
  public enum Kind {
    /** No such repo, revision or file, or no access to it (gated, private). */
    NOT_FOUND_OR_REFUSED,
    /** The hub is unreachable, rate-limiting (429) or failing (5xx): a later try may work. */
    UNAVAILABLE,
    /** The hub's answers contradict themselves (a size or digest that does not match). */
    INCONSISTENT
  }

  private final Kind kind;

  public HubException(Kind kind, String message) {
    super(message);
    this.kind = kind;
  }

  public HubException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public Kind kind() {
    return kind;
  }
}
