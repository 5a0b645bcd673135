package io.mooncake.dist.cli;

/**
 * A failure a subcommand reports as one line on stderr and an exit code, without a stack trace: the
 * master said no, or could not be reached. Usage errors are picocli's {@code ParameterException}
 * instead, so they get the same "try --help" treatment as a bad flag.
 */
public final class CliException extends RuntimeException {
  private final int exitCode;

  public CliException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public CliException(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
