package io.mooncake.dist.cli;

import io.mooncake.dist.cli.jobs.CancelCommand;
import io.mooncake.dist.cli.jobs.JobsCommand;
import io.mooncake.dist.cli.jobs.StatusCommand;
import io.mooncake.dist.cli.jobs.SubmitCommand;
import io.mooncake.dist.cli.jobs.WatchCommand;
import io.mooncake.dist.cli.manifest.ManifestCommand;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.TrustedCertificates;
import io.mooncake.dist.cli.nodes.NodesCommand;
import io.mooncake.dist.cli.nodes.PinCommand;
import io.mooncake.dist.cli.ops.OpsCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code bin/mooncake}: the root command. It holds the global options (inherited, so they may also
 * follow the subcommand) and hands the subcommands what those options select: the master's HTTP
 * client and the database URL.
 */
@Command(
    name = "mooncake",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    version = "mooncake 0.1.0-SNAPSHOT",
    description =
        "Operate Mooncake model distribution: build manifests, submit, watch and cancel jobs, "
            + "list jobs and nodes, run the operators' SQL reports.",
    subcommands = {
      ManifestCommand.class,
      SubmitCommand.class,
      StatusCommand.class,
      WatchCommand.class,
      CancelCommand.class,
      JobsCommand.class,
      NodesCommand.class,
      PinCommand.Pin.class,
      PinCommand.Unpin.class,
      PinCommand.Pins.class,
      OpsCommand.class,
      HelpCommand.class
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success; watch: the job completed",
      "1:watch: the job failed or was canceled; elsewhere the work failed (unreadable file, report error)",
      "2:usage error: bad flag, argument or input file (the message names it)",
      "3:not found (404) or rejected by the master (4xx)",
      "4:master or database unreachable, or the master answered 5xx",
      "5:conflict (409), e.g. canceling a job that already finished"
    })
public final class MooncakeCli implements Runnable {
  @Spec CommandSpec spec;

  @Option(
      names = "--master",
      scope = ScopeType.INHERIT,
      paramLabel = "<url>",
      defaultValue = "${env:MOONCAKE_MASTER:-http://127.0.0.1:8080}",
      description =
          "The master's base URL (default: $MOONCAKE_MASTER, else http://127.0.0.1:8080).")
  String master;

  @Option(
      names = "--token-file",
      scope = ScopeType.INHERIT,
      paramLabel = "<file>",
      defaultValue = "${env:MOONCAKE_API_TOKEN_FILE}",
      description =
          "A file holding the master's API bearer token (default: $MOONCAKE_API_TOKEN_FILE; "
              + "else the token in $MOONCAKE_API_TOKEN, if set).")
  String tokenFile;

  @Option(
      names = "--ca-cert",
      scope = ScopeType.INHERIT,
      paramLabel = "<pem>",
      defaultValue = "${env:MOONCAKE_CA_CERT}",
      description =
          "PEM certificates to trust for an https:// master, e.g. its self-signed certificate "
              + "(default: $MOONCAKE_CA_CERT, else the JDK's trust store).")
  String caCert;

  @Option(
      names = "--db-url",
      scope = ScopeType.INHERIT,
      paramLabel = "<jdbc-url>",
      defaultValue = "${env:MOONCAKE_DB_URL}",
      description = "PostgreSQL JDBC URL, for ops only (default: $MOONCAKE_DB_URL).")
  String dbUrl;

  /** Runs the command line and exits with its code. */
  public static void main(String[] args) {
    CommandLine cmd = commandLine();
    // Autoflush, so watch's redraws and status lines appear as they are printed.
    cmd.setOut(new PrintWriter(System.out, true, StandardCharsets.UTF_8));
    cmd.setErr(new PrintWriter(System.err, true, StandardCharsets.UTF_8));
    System.exit(cmd.execute(args));
  }

  /**
   * The command line with mooncake's error reporting, for {@code main} and for tests to run
   * in-process.
   */
  public static CommandLine commandLine() {
    ErrorReporting errors = new ErrorReporting();
    return new CommandLine(new MooncakeCli())
        .setParameterExceptionHandler(errors)
        .setExecutionExceptionHandler(errors);
  }

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "missing subcommand; one of: " + String.join(", ", spec.subcommands().keySet()));
  }

  /** A client for {@code --master}; a URL that is not http(s) is a usage error naming the flag. */
  public MasterClient masterClient(CommandSpec caller) {
    URI uri;
    try {
      uri = URI.create(master.strip());
    } catch (IllegalArgumentException e) {
      throw new ParameterException(
          caller.commandLine(), "--master: '" + master + "' is not a URL: " + e.getMessage());
    }
    if (uri.getScheme() == null
        || !uri.getScheme().matches("(?i)https?")
        || uri.getHost() == null) {
      throw new ParameterException(
          caller.commandLine(),
          "--master must be an http:// or https:// URL with a host, got '" + master + "'");
    }
    String token;
    if (tokenFile != null && !tokenFile.isBlank()) {
      try {
        token = Files.readString(Path.of(tokenFile.strip()), StandardCharsets.UTF_8).strip();
      } catch (IOException | RuntimeException e) {
        throw new ParameterException(
            caller.commandLine(), "--token-file: cannot read " + tokenFile + ": " + e);
      }
      if (token.isEmpty() || token.contains("\n")) {
        throw new ParameterException(
            caller.commandLine(), "--token-file: " + tokenFile + " must hold exactly one token");
      }
    } else {
      String env = System.getenv("MOONCAKE_API_TOKEN");
      token = env == null || env.isBlank() ? null : env.strip();
    }
    SSLContext ssl = null;
    if (caCert != null && !caCert.isBlank()) {
      try {
        ssl = TrustedCertificates.sslContext(Path.of(caCert.strip()));
      } catch (IllegalArgumentException e) {
        throw new ParameterException(caller.commandLine(), "--ca-cert: " + e.getMessage());
      }
    }
    return new MasterClient(uri, token, ssl);
  }

  /** {@code --db-url}; absent is a usage error saying both ways to give it. */
  public String dbUrl(CommandSpec caller) {
    if (dbUrl == null || dbUrl.isBlank()) {
      throw new ParameterException(
          caller.commandLine(),
          "no database given: pass --db-url <jdbc-url> or set MOONCAKE_DB_URL");
    }
    return dbUrl.strip();
  }
}
