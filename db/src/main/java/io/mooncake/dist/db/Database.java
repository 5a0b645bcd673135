package io.mooncake.dist.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A pooled connection to the distribution database and the jOOQ context over it.
 *
 * <p>Opening checks the database answers before anything else starts, so a launcher fails fast
 * with {@link DatabaseUnavailableException} naming the URL instead of retrying in the background.
 */
public final class Database implements AutoCloseable {
  private final String jdbcUrl;
  private final HikariDataSource dataSource;
  private final DSLContext dsl;

  private Database(String jdbcUrl, HikariDataSource dataSource) {
    this.jdbcUrl = jdbcUrl;
    this.dataSource = dataSource;
    this.dsl = DSL.using(dataSource, SQLDialect.POSTGRES);
  }

  /**
   * Connects to {@code jdbcUrl} with a pool of at most {@code maxPoolSize} connections.
   *
   * @throws DatabaseUnavailableException when the URL is malformed or the server does not answer
   */
  public static Database open(String jdbcUrl, int maxPoolSize, String applicationName) {
    probe(jdbcUrl);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(maxPoolSize);
    config.setMinimumIdle(1);
    config.setPoolName(applicationName);
    config.addDataSourceProperty("ApplicationName", applicationName);
    // A lost database must not hang callers forever: fail the borrow, let the loop retry.
    config.setConnectionTimeout(5_000);
    config.setInitializationFailTimeout(-1);
    return new Database(jdbcUrl, new HikariDataSource(config));
  }

  /** One direct connection attempt, so a bad URL or a dead server is reported at once. */
  public static void probe(String jdbcUrl) {
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new DatabaseUnavailableException(
          "database URL must start with jdbc:postgresql: (got " + redact(jdbcUrl) + ")");
    }
    Properties props = new Properties();
    props.setProperty("connectTimeout", "5");
    props.setProperty("loginTimeout", "5");
    try (Connection c = DriverManager.getConnection(jdbcUrl, props)) {
      c.isValid(5);
    } catch (SQLException e) {
      throw new DatabaseUnavailableException(
          "cannot connect to database " + redact(jdbcUrl) + ": " + e.getMessage(), e);
    }
  }

  /**
   * Applies the migrations. Flyway holds a Postgres advisory lock while it migrates, so several
   * masters starting together apply each migration exactly once.
   */
  public void migrate() {
    Flyway.configure()
        .dataSource(dataSource)
        .locations("classpath:db/migration")
        .load()
        .migrate();
  }

  public DSLContext dsl() {
    return dsl;
  }

  public DataSource dataSource() {
    return dataSource;
  }

  public String jdbcUrl() {
    return jdbcUrl;
  }

  /** Opens a connection outside the pool, e.g. for LISTEN, which must keep its session. */
  public Connection openDedicatedConnection() throws SQLException {
    return DriverManager.getConnection(jdbcUrl);
  }

  /** The URL with any password parameter masked, fit for logs and error messages. */
  public static String redact(String jdbcUrl) {
    if (jdbcUrl == null) {
      return "(none)";
    }
    return jdbcUrl.replaceAll("(?i)(password=)[^&]*", "$1***");
  }

  @Override
  public void close() {
    dataSource.close();
  }
}
