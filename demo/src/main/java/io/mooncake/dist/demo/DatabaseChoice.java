package io.mooncake.dist.demo;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.Set;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Which PostgreSQL the demo runs against, in this order: the URL the user gave ({@code --db-url} or
 * {@code MOONCAKE_DB_URL}) as-is; the local default server, in a database {@code mooncake_demo}; a
 * throwaway Testcontainers PostgreSQL when Docker is available. Otherwise the demo stops with one
 * line saying what to provide.
 *
 * <p>{@code mooncake_demo} is recreated empty at the start of every run. A previous run stopped
 * half way leaves its job active, and the new run's nodes, having the same node ids, would claim
 * that job's tasks and stage the same model into the same paths as the new job. It is only ever
 * dropped when nobody is connected to it (no {@code FORCE}), so a demo running concurrently is
 * never disturbed; the second one says so instead. After a run it stays, for inspection.
 */
final class DatabaseChoice implements AutoCloseable {
  static final String LOCAL_ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres";
  static final String DEMO_DATABASE = "mooncake_demo";
  static final String LOCAL_DEMO_URL =
      "jdbc:postgresql://127.0.0.1:5432/" + DEMO_DATABASE + "?user=postgres";
  static final String IMAGE = "postgres:15-alpine";
  private static final Set<String> IN_USE = Set.of("55006", "42P04", "23505");

  private final String url;
  private final String origin;
  private final PostgreSQLContainer container;

  private DatabaseChoice(String url, String origin, PostgreSQLContainer container) {
    this.url = url;
    this.origin = origin;
    this.container = container;
  }

  /** The JDBC URL the master and clients get. */
  String url() {
    return url;
  }

  /** Where the database came from, for the one line the demo prints about it. */
  String origin() {
    return origin;
  }

  static DatabaseChoice choose(String given, PrintStream out) throws DemoFailure {
    if (given != null && !given.isBlank()) {
      // Checked here so a typo ends in one line now, not in a master that exits with its log to
      // read.
      try (Connection ignored = connect(given)) {
        return new DatabaseChoice(given, "as given", null);
      } catch (SQLException e) {
        throw new DemoFailure(
            2, "cannot connect to the database " + redact(given) + ": " + oneLine(e));
      }
    }
    String localProblem;
    try (Connection admin = connect(LOCAL_ADMIN_URL)) {
      recreateDemoDatabase(admin);
      return new DatabaseChoice(
          LOCAL_DEMO_URL, "local PostgreSQL on 127.0.0.1:5432, recreated empty", null);
    } catch (SQLException e) {
      localProblem = oneLine(e);
    }
    if (dockerAvailable()) {
      out.println(
          "database  no usable PostgreSQL on 127.0.0.1:5432 ("
              + localProblem
              + "); starting a throwaway "
              + IMAGE
              + " with Testcontainers");
      return startContainer();
    }
    throw new DemoFailure(
        2,
        "no database: start PostgreSQL on 127.0.0.1:5432 with user postgres (trust auth), "
            + "or set MOONCAKE_DB_URL / --db-url to a PostgreSQL JDBC URL, or install Docker for a throwaway one "
            + "(127.0.0.1:5432: "
            + localProblem
            + ")");
  }

  /** Drops and creates {@code mooncake_demo}; a one-line failure when another session uses it. */
  private static void recreateDemoDatabase(Connection admin) throws DemoFailure {
    try (Statement st = admin.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + DEMO_DATABASE);
      st.execute("CREATE DATABASE " + DEMO_DATABASE);
    } catch (SQLException e) {
      // 55006: being accessed by other users; 42P04 / 23505: another run created it a moment ago.
      if (IN_USE.contains(e.getSQLState())) {
        throw new DemoFailure(
            2,
            "database "
                + DEMO_DATABASE
                + " on 127.0.0.1:5432 is in use, probably by another "
                + "mooncake_demo run; wait for it to finish, or pass --db-url <jdbc-url> to use another database");
      }
      throw new DemoFailure(
          2,
          "cannot recreate database "
              + DEMO_DATABASE
              + " on 127.0.0.1:5432: "
              + oneLine(e)
              + "; pass --db-url <jdbc-url> to use another database",
          e);
    }
  }

  private static DatabaseChoice startContainer() throws DemoFailure {
    PostgreSQLContainer container = new PostgreSQLContainer(IMAGE);
    try {
      container.start();
    } catch (RuntimeException | LinkageError e) {
      stopQuietly(container);
      throw new DemoFailure(
          2,
          "could not start a PostgreSQL container ("
              + oneLine(e)
              + "); start PostgreSQL on "
              + "127.0.0.1:5432 with user postgres, or set MOONCAKE_DB_URL / --db-url",
          e);
    }
    String jdbc = container.getJdbcUrl();
    String url =
        jdbc
            + (jdbc.contains("?") ? "&" : "?")
            + "user="
            + container.getUsername()
            + "&password="
            + container.getPassword();
    return new DatabaseChoice(url, "throwaway Testcontainers " + IMAGE, container);
  }

  private static boolean dockerAvailable() {
    DemoLogging.quiet();
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }

  private static Connection connect(String url) throws SQLException {
    Properties props = new Properties();
    // Short: a server that is there answers at once; the default 10 s would only delay the
    // fallback.
    props.setProperty("connectTimeout", "3");
    props.setProperty("ApplicationName", "mooncake_demo");
    return DriverManager.getConnection(url, props);
  }

  /** The URL without a password, for printing. */
  static String redact(String url) {
    return url.replaceAll("(?i)(password=)[^&]*", "$1***");
  }

  private static String oneLine(Throwable e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return message.replaceAll("\\s+", " ").trim();
  }

  private static void stopQuietly(PostgreSQLContainer container) {
    try {
      container.stop();
    } catch (RuntimeException | LinkageError ignored) {
      // Best effort; Testcontainers' reaper removes it when this JVM exits in any case.
    }
  }

  @Override
  public void close() {
    if (container != null) {
      stopQuietly(container);
    }
  }
}
