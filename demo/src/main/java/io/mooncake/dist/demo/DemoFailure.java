package io.mooncake.dist.demo;

/**
 * A reason the demo cannot go on, worded for the person who ran it, with the process exit code to
 * end with (2: nothing to run against, e.g. no database; 1: the run itself failed).
 */
public final class DemoFailure extends Exception {
  private static final long serialVersionUID = 1L;

  private final int exitCode;

  public DemoFailure(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public DemoFailure(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
