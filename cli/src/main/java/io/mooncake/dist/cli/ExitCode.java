package io.mooncake.dist.cli;

/**
 * The exit codes of every subcommand, so scripts can branch on them. Each command's {@code --help}
 * lists the ones it uses (annotations cannot share an array constant, so the texts are repeated
 * there) and the README lists them all.
 */
public final class ExitCode {
  /** Done; for {@code watch}: the job completed. */
  public static final int OK = 0;

  /**
   * {@code watch}: the job failed or was canceled. Elsewhere: the work itself failed, e.g. a model
   * file could not be read or a report failed in the database.
   */
  public static final int FAILED = 1;

  /** Bad flag, argument or input file; the message names it. */
  public static final int USAGE = 2;

  /** The job is unknown (404) or the master rejected the request (4xx). */
  public static final int NOT_FOUND_OR_REJECTED = 3;

  /** The master or the database cannot be reached (or the master answers 5xx). */
  public static final int UNREACHABLE = 4;

  /** The request conflicts with the job's state (409), e.g. canceling a finished job. */
  public static final int CONFLICT = 5;

  private ExitCode() {}
}
