package io.mooncake.dist.cli.support;

import io.mooncake.dist.cli.MooncakeCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** One in-process run of {@code mooncake} through its picocli entry point, output captured. */
public record CliRun(int exitCode, String out, String err) {

  public static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = MooncakeCli.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute(args);
    return new CliRun(code, out.toString(), err.toString());
  }

  /** For assertion messages: everything the run printed. */
  public String transcript() {
    return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
  }
}
