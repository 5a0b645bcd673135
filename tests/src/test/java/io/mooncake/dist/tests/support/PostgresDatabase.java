package io.mooncake.dist.tests.support;

import io.mooncake.dist.db.Database;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * A fresh, migrated database per test class. The server is the one named by {@code
 * MOONCAKE_TEST_DB_URL} (a JDBC URL to an administrative database such as {@code
 * jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}); without it, a Testcontainers
 * PostgreSQL when Docker is available; otherwise the test fails saying what to provide.
 *
 * <p>The database's time zone is set to a non-UTC zone so timestamp handling that silently assumes
 * UTC shows up in tests (as db-scheduler's fixture does).
 */
public final class PostgresDatabase implements BeforeAllCallback, AfterAllCallback {
  private static PostgreSQLContainer container;

  private String adminUrl;
  private String name;
  private String url;
  private Database database;

  @Override
  public void beforeAll(ExtensionContext context) throws SQLException {
    adminUrl = adminUrl();
    name =
        "mc_"
            + context
                .getRequiredTestClass()
                .getSimpleName()
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9]", "")
            + "_"
            + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = DriverManager.getConnection(adminUrl);
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
      st.execute("ALTER DATABASE " + name + " SET timezone TO 'Asia/Kolkata'");
    }
    url = withDatabase(adminUrl, name);
    database = Database.open(url, 10, "tests");
    database.migrate();
  }

  @Override
  public void afterAll(ExtensionContext context) throws SQLException {
    if (database != null) {
      database.close();
    }
    try (Connection c = DriverManager.getConnection(adminUrl);
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  public Database database() {
    return database;
  }

  /** JDBC URL of this class's database, for processes started by the test. */
  public String url() {
    return url;
  }

  private static synchronized String adminUrl() {
    String env = System.getenv("MOONCAKE_TEST_DB_URL");
    if (env != null && !env.isBlank()) {
      return env;
    }
    if (container == null) {
      if (!dockerAvailable()) {
        throw new IllegalStateException(
            "No test database: set MOONCAKE_TEST_DB_URL to a PostgreSQL admin JDBC URL "
                + "(e.g. jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres) or make Docker available for Testcontainers");
      }
      container = new PostgreSQLContainer("postgres:15-alpine");
      container.start();
    }
    return container.getJdbcUrl()
        + (container.getJdbcUrl().contains("?") ? "&" : "?")
        + "user="
        + container.getUsername()
        + "&password="
        + container.getPassword();
  }

  private static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }

  /** The same server and parameters with another database name in the path. */
  static String withDatabase(String jdbcUrl, String db) {
    URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    String authority = uri.getRawAuthority();
    return "jdbc:" + uri.getScheme() + "://" + authority + "/" + db + query;
  }
}
