package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The jOOQ context answers a connection's isolation level without asking the server (a round trip
 * per transaction otherwise), so what it answers must be what the server runs: the pool pins READ
 * COMMITTED on every connection even where the database's default says otherwise, a level a
 * borrower sets is reported and applied, and the next borrower gets READ COMMITTED again.
 */
class TransactionIsolationTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @Test
  void answeredLevelIsTheServersEvenWhenTheDatabaseDefaultDiffers() throws Exception {
    try (Connection c = DriverManager.getConnection(pg.url());
        Statement st = c.createStatement()) {
      // A database-wide default other than READ COMMITTED applies to connections opened from now
      // on.
      st.execute(
          "ALTER DATABASE "
              + c.getCatalog()
              + " SET default_transaction_isolation = 'serializable'");
    }
    try (Database db = Database.open(pg.url(), 2, "isolation-test")) {
      for (int i = 0; i < 3; i++) {
        String[] seen = new String[1];
        int[] answered = new int[1];
        db.dsl()
            .transaction(
                cfg -> {
                  answered[0] = cfg.dsl().connectionResult(Connection::getTransactionIsolation);
                  seen[0] = String.valueOf(cfg.dsl().fetchValue("SHOW transaction_isolation"));
                });
        assertEquals(Connection.TRANSACTION_READ_COMMITTED, answered[0]);
        assertEquals("read committed", seen[0]);
      }
      // A borrower that changes the level sees its own setting, on the server too ...
      db.dsl()
          .connection(
              c -> {
                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                assertEquals(Connection.TRANSACTION_REPEATABLE_READ, c.getTransactionIsolation());
                try (Statement st = c.createStatement();
                    var rs = st.executeQuery("SHOW transaction_isolation")) {
                  rs.next();
                  assertEquals("repeatable read", rs.getString(1));
                }
              });
      // ... and the pool restores READ COMMITTED before the next one borrows the connection.
      for (int i = 0; i < 3; i++) {
        String seen =
            db.dsl()
                .transactionResult(
                    cfg -> String.valueOf(cfg.dsl().fetchValue("SHOW transaction_isolation")));
        int answered = db.dsl().connectionResult(Connection::getTransactionIsolation);
        assertEquals("read committed", seen);
        assertEquals(Connection.TRANSACTION_READ_COMMITTED, answered);
      }
    }
  }
}
