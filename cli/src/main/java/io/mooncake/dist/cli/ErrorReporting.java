package io.mooncake.dist.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Turns failures into one line on stderr and an exit code. Usage errors name the flag and point at
 * the command's {@code --help} instead of printing the whole usage, which would bury the one line
 * that matters.
 */
final class ErrorReporting implements IParameterExceptionHandler, IExecutionExceptionHandler {

  @Override
  public int handleParseException(ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println("mooncake: " + ex.getMessage());
    UnmatchedArgumentException.printSuggestions(ex, err);
    err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
    err.flush();
    return ExitCode.USAGE;
  }

  @Override
  public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult) {
    PrintWriter err = cmd.getErr();
    if (ex instanceof CliException cli) {
      err.println("mooncake: " + cli.getMessage());
      err.flush();
      return cli.exitCode();
    }
    // Not one of ours: the chain of causes is the only clue to what went wrong.
    StringBuilder message = new StringBuilder("mooncake: unexpected error: ").append(ex);
    for (Throwable cause = ex.getCause();
        cause != null && cause != cause.getCause();
        cause = cause.getCause()) {
      message.append("\n  caused by: ").append(cause);
    }
    err.println(message);
    err.flush();
    return ExitCode.FAILED;
  }
}
