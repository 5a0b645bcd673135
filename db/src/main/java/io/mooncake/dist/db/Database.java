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
 * <p>Opening checks the database answers before anything else starts, so a launcher fails fast with
 * {@link DatabaseUnavailableException} naming the URL instead of retrying in the background.
 */
public final class Database implements AutoCloseable {
  private final String jdbcUrl;
  private final HikariDataSource dataSource;
  private final DSLContext dsl;

  private Database(String jdbcUrl, HikariDataSource dataSource) {
    this.jdbcUrl = jdbcUrl;
    this.dataSource = dataSource;
    this.dsl = DSL.using(new KnownIsolation(dataSource), SQLDialect.POSTGRES);
  }

  /**
   * Connects to {@code jdbcUrl} with a pool of at most {@code maxPoolSize} connections.
   *
   * @throws DatabaseUnavailableException when the URL is malformed or the server does not answer
   */
  public static Database open(String jdbcUrl, int maxPoolSize, String applicationName) {
    return open(jdbcUrl, maxPoolSize, applicationName, java.time.Duration.ofSeconds(5));
  }

  /**
   * As above, a borrower waiting at most {@code borrowTimeout} for a connection. A node through a
   * transaction-mode pooler uses a long one: when Postgres is saturated the pooler queues
   * transactions, and a borrow (with its liveness check) waits in that queue; failing it after 5 s
   * called a slow database "unreachable", failed the task and added its retry to the load.
   */
  public static Database open(
      String jdbcUrl, int maxPoolSize, String applicationName, java.time.Duration borrowTimeout) {
    return open(jdbcUrl, maxPoolSize, applicationName, borrowTimeout, null);
  }

  /**
   * As above, the pool's helper threads (its housekeeper, the threads that open and close
   * connections) made by {@code threads}, or by HikariCP's own factory when null.
   */
  public static Database open(
      String jdbcUrl,
      int maxPoolSize,
      String applicationName,
      java.time.Duration borrowTimeout,
      java.util.concurrent.ThreadFactory threads) {
    probe(jdbcUrl);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(maxPoolSize);
    config.setMinimumIdle(1);
    config.setPoolName(applicationName);
    config.addDataSourceProperty("ApplicationName", applicationName);
    // A lost database must not hang callers forever: fail the borrow, let the loop retry.
    config.setConnectionTimeout(borrowTimeout.toMillis());
    config.setValidationTimeout(Math.min(5_000, borrowTimeout.toMillis()));
    // Every pooled connection starts at this level (Hikari sets it on each new connection and
    // restores it when a borrower changed it), so KnownIsolation can answer for it.
    config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    config.setInitializationFailTimeout(-1);
    if (threads != null) {
      config.setThreadFactory(threads);
    }
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
   * The newest migration this build carries ({@code migrations/V<n>__*.sql}); {@code
   * SchemaVersionTest} keeps it equal to the folder.
   */
  public static final int SCHEMA_VERSION = 27;

  /**
   * The version of the newest migration applied to the database, 0 when none is (no Flyway history
   * table). One query, no lock: what a client checks at start instead of running Flyway, which
   * takes a session-level advisory lock (impossible through a transaction-mode pooler) and issues
   * dozens of statements.
   */
  public int schemaVersion() {
    try (Connection c = dataSource.getConnection();
        java.sql.Statement st = c.createStatement()) {
      try (java.sql.ResultSet rs =
          st.executeQuery("SELECT to_regclass('flyway_schema_history') IS NOT NULL")) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return 0;
        }
      }
      try (java.sql.ResultSet rs =
          st.executeQuery(
              "SELECT coalesce(max(version::numeric), 0) FROM flyway_schema_history WHERE success")) {
        rs.next();
        return rs.getBigDecimal(1).intValue();
      }
    } catch (SQLException e) {
      throw new DatabaseUnavailableException(
          "cannot read the schema version of " + redact(jdbcUrl) + ": " + e.getMessage(), e);
    }
  }

  /**
   * Applies the migrations. Flyway holds a Postgres advisory lock while it migrates, so several
   * masters starting together apply each migration exactly once.
   */
  public void migrate() {
    Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
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

  /**
   * The pool as jOOQ sees it: connections that know their isolation level instead of asking the
   * server. jOOQ 3.21 reads {@link Connection#getTransactionIsolation} at the start of every
   * transaction (jOOQ issue 20135), and the PostgreSQL driver answers it with a {@code SHOW
   * TRANSACTION ISOLATION LEVEL} round trip: about 1,500 per fan-out job, each one a statement the
   * database parses and a wait for the caller. The pool pins the level of every connection it hands
   * out ({@code setTransactionIsolation} above), so it is known: READ COMMITTED, or what a borrower
   * set since (tracked here; the pool restores it on return).
   */
  static final class KnownIsolation implements DataSource {
    private final DataSource pool;

    KnownIsolation(DataSource pool) {
      this.pool = pool;
    }

    @Override
    public Connection getConnection() throws SQLException {
      return new Tracked(pool.getConnection());
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return new Tracked(pool.getConnection(user, password));
    }

    @Override
    public java.io.PrintWriter getLogWriter() throws SQLException {
      return pool.getLogWriter();
    }

    @Override
    public void setLogWriter(java.io.PrintWriter out) throws SQLException {
      pool.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      pool.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return pool.getLoginTimeout();
    }

    @Override
    public java.util.logging.Logger getParentLogger()
        throws java.sql.SQLFeatureNotSupportedException {
      return pool.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return iface.isInstance(this) ? iface.cast(this) : pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return iface.isInstance(this) || pool.isWrapperFor(iface);
    }

    /** A borrowed connection that answers its isolation level from what it was set to. */
    static final class Tracked extends org.jooq.tools.jdbc.DefaultConnection {
      private int level = Connection.TRANSACTION_READ_COMMITTED;

      Tracked(Connection delegate) {
        super(delegate);
      }

      @Override
      public int getTransactionIsolation() {
        return level;
      }

      @Override
      public void setTransactionIsolation(int level) throws SQLException {
        super.setTransactionIsolation(level);
        this.level = level;
      }
    }
  }
}
