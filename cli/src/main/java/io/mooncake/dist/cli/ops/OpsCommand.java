package io.mooncake.dist.cli.ops;

import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.format.Table;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.DatabaseUnavailableException;
import io.mooncake.dist.ops.Reports;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.exception.DataAccessException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake ops}: runs one operator report against the database, or lists them. */
@Command(
    name = "ops",
    sortOptions = false,
    description = {
      "Run an ops-sql report against the database (--db-url or $MOONCAKE_DB_URL), read-only, and print "
          + "it as a table; or list the reports with --list.",
      "Variables are the report's psql variables, e.g. --var stuck_after='15 minutes'."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:report printed (possibly no rows), or listed",
      "1:the report failed in the database",
      "2:usage error: unknown report (the valid ones are listed), unknown variable or bad value, no --db-url",
      "4:database unreachable"
    })
public final class OpsCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Parameters(
      index = "0",
      arity = "0..1",
      paramLabel = "<report>",
      description = "Report name (see --list).")
  String report;

  @Option(names = "--list", description = "List the reports and what each answers.")
  boolean list;

  @Option(
      names = "--var",
      paramLabel = "<name=value>",
      description = "Set a report variable; repeatable.")
  Map<String, String> variables = new LinkedHashMap<>();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (list) {
      Table table = Table.withHeaders("REPORT", "ANSWERS");
      Reports.names().forEach(name -> table.row(name, Reports.describe(name)));
      table.lines().forEach(out::println);
      out.flush();
      return ExitCode.OK;
    }
    if (report == null) {
      throw usage("name a report or pass --list; reports: " + String.join(", ", Reports.names()));
    }
    if (!Reports.names().contains(report)) {
      throw usage(
          "unknown report '" + report + "'; valid reports: " + String.join(", ", Reports.names()));
    }
    Result<Record> rows = run(root.dbUrl(spec));
    ResultTable.of(rows).lines().forEach(out::println);
    out.println("(" + rows.size() + (rows.size() == 1 ? " row)" : " rows)"));
    out.flush();
    return ExitCode.OK;
  }

  private Result<Record> run(String url) {
    try (Database db = Database.open(url, 2, "mooncake-cli")) {
      return Reports.run(db.dsl(), report, variables);
    } catch (DatabaseUnavailableException e) {
      throw new CliException(ExitCode.UNREACHABLE, e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    } catch (DataAccessException e) {
      throw fromDatabase(e);
    }
  }

  /**
   * SQLSTATE class 22 (data exception) is a {@code --var} value the report cannot use, e.g. an
   * interval that does not parse; class 08 is a connection lost midway.
   */
  private RuntimeException fromDatabase(DataAccessException e) {
    String state = e.sqlState();
    String message =
        e.getCause(SQLException.class) != null
            ? e.getCause(SQLException.class).getMessage()
            : e.getMessage();
    if (state != null && state.startsWith("22")) {
      return usage("--var: report " + report + " cannot use the value given: " + message);
    }
    if (state != null && state.startsWith("08")) {
      return new CliException(
          ExitCode.UNREACHABLE, "lost the database while running " + report + ": " + message, e);
    }
    return new CliException(ExitCode.FAILED, "report " + report + " failed: " + message, e);
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
