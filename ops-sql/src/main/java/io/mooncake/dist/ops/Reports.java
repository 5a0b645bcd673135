package io.mooncake.dist.ops;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;

/**
 * The operator reports, by name: their SQL text, their one-line description, and a way to run them.
 *
 * <p>A report file is what psql runs, so it may hold psql meta-commands. Only one form is
 * understood here, the optional variable with a default:
 *
 * <pre>
 * \if :{?stuck_after}
 * \else
 *     \set stuck_after '5 minutes'
 * \endif
 * ... WHERE x &lt; now() - :'stuck_after'::interval
 * </pre>
 *
 * <p>{@link #run} drops every meta-command line, takes each {@code \set} as the variable's default,
 * and binds {@code :'name'} as a JDBC parameter (never pasted into the text), so a caller's value
 * cannot change the statement.
 */
public final class Reports {
  private static final String RESOURCE_DIR = "/ops-sql/reports/";
  private static final List<String> NAMES =
      List.of(
          "queue_depth",
          "stuck_tasks",
          "node_throughput",
          "failure_reasons",
          "job_durations",
          "seed_reuse",
          "inflight_jobs",
          "node_disks",
          "evictions");

  private static final Pattern DESCRIPTION = Pattern.compile("(?m)^--\\s*Answers:\\s*(.+?)\\s*$");
  private static final Pattern DEFAULT =
      Pattern.compile("^\\\\set\\s+([A-Za-z_][A-Za-z0-9_]*)\\s+'((?:[^']|'')*)'\\s*$");
  // :'name' is psql's quoted interpolation; the look-behind keeps '::' casts out of it.
  private static final Pattern REFERENCE = Pattern.compile("(?<!:):'([A-Za-z_][A-Za-z0-9_]*)'");

  private static final Map<String, String> TEXTS = load();

  private Reports() {}

  /** The report names, in the order operators usually read them: queue first, history last. */
  public static List<String> names() {
    return NAMES;
  }

  /**
   * The report's file as psql runs it, header and meta-commands included.
   *
   * @throws IllegalArgumentException naming the report and the valid names when there is no such
   *     report
   */
  public static String sql(String name) {
    String text = TEXTS.get(name);
    if (text == null) {
      throw new IllegalArgumentException(
          "unknown report '" + name + "'; valid reports: " + String.join(", ", NAMES));
    }
    return text;
  }

  /** The one-line description from the report's {@code -- Answers:} header line. */
  public static String describe(String name) {
    Matcher m = DESCRIPTION.matcher(sql(name));
    if (!m.find()) {
      throw new IllegalStateException("report " + name + " has no '-- Answers:' header line");
    }
    return m.group(1);
  }

  /** Runs the report with its variables at their defaults. */
  public static Result<Record> run(DSLContext dsl, String name) {
    return run(dsl, name, Map.of());
  }

  /**
   * Runs the report with some variables set, as {@code psql -v name=value} would.
   *
   * @throws IllegalArgumentException for an unknown report or a variable the report does not have
   */
  public static Result<Record> run(DSLContext dsl, String name, Map<String, String> variables) {
    Prepared statement = prepare(name, variables);
    // A read-only transaction makes "reports never write" a property the server enforces.
    return dsl.transactionResult(
        cfg ->
            cfg.dsl()
                .connectionResult(
                    c -> {
                      try (Statement st = c.createStatement()) {
                        st.execute("SET TRANSACTION READ ONLY");
                      }
                      try (PreparedStatement ps = c.prepareStatement(statement.sql())) {
                        for (int i = 0; i < statement.values().size(); i++) {
                          ps.setString(i + 1, statement.values().get(i));
                        }
                        try (ResultSet rs = ps.executeQuery()) {
                          return cfg.dsl().fetch(rs);
                        }
                      }
                    }));
  }

  /**
   * The SQL without meta-commands, {@code :'var'} turned into {@code ?}, and the values to bind in
   * order.
   */
  static Prepared prepare(String name, Map<String, String> variables) {
    Map<String, String> values = new LinkedHashMap<>();
    StringBuilder sql = new StringBuilder();
    for (String line : sql(name).split("\n", -1)) {
      String trimmed = line.strip();
      if (trimmed.startsWith("\\")) {
        Matcher d = DEFAULT.matcher(trimmed);
        if (d.matches()) {
          values.put(d.group(1), d.group(2).replace("''", "'"));
        }
        continue;
      }
      sql.append(line).append('\n');
    }
    for (String key : variables.keySet()) {
      if (!values.containsKey(key)) {
        throw new IllegalArgumentException(
            "report "
                + name
                + " has no variable '"
                + key
                + "'"
                + (values.isEmpty() ? "" : "; it has: " + String.join(", ", values.keySet())));
      }
    }
    values.putAll(variables);

    List<String> bound = new ArrayList<>();
    Matcher ref = REFERENCE.matcher(sql);
    StringBuilder out = new StringBuilder();
    while (ref.find()) {
      String var = ref.group(1);
      if (!values.containsKey(var)) {
        throw new IllegalStateException(
            "report " + name + " uses :'" + var + "' without a \\set default");
      }
      bound.add(values.get(var));
      ref.appendReplacement(out, "?");
    }
    ref.appendTail(out);
    return new Prepared(out.toString(), List.copyOf(bound));
  }

  record Prepared(String sql, List<String> values) {}

  private static Map<String, String> load() {
    Map<String, String> texts = new LinkedHashMap<>();
    for (String name : NAMES) {
      String path = RESOURCE_DIR + name + ".sql";
      try (InputStream in = Reports.class.getResourceAsStream(path)) {
        if (in == null) {
          throw new IllegalStateException(
              "report resource " + path + " is missing from the classpath");
        }
        texts.put(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read report resource " + path, e);
      }
    }
    return Map.copyOf(texts);
  }
}
