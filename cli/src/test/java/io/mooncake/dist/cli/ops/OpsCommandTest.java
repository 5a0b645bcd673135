package io.mooncake.dist.cli.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.cli.support.CliRun;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.ops.Reports;
import java.net.ServerSocket;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code mooncake ops} against a real, freshly migrated database on the server that {@code
 * MOONCAKE_TEST_DB_URL} names (an administrative JDBC URL); the database is dropped after.
 */
class OpsCommandTest {
  private static String adminUrl;
  private static String name;
  private static String url;

  @BeforeAll
  static void createDatabase() throws Exception {
    adminUrl = System.getenv("MOONCAKE_TEST_DB_URL");
    Assumptions.assumeTrue(
        adminUrl != null && !adminUrl.isBlank(),
        "MOONCAKE_TEST_DB_URL is not set: skipping mooncake ops against a real database "
            + "(set it to e.g. jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres)");
    name = "mc_cli_ops_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = DriverManager.getConnection(adminUrl);
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    }
    url = withDatabase(adminUrl, name);
    try (Database db = Database.open(url, 2, "t")) {
      db.migrate();
      db.dsl()
          .execute(
              """
          INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                            total_size_bytes, integrity, status)
          VALUES ('j1', repeat('0', 64), '{}', 'm', 'r1', 'bin', 'local', 'n1:1', 1024, 'object_digests', 'replicating')""");
      db.dsl()
          .execute(
              """
          INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state)
          SELECT 'j1', 'n2:1', 'REPLICA_COPY', 'm/r1/chunk-' || i, '{}', 'pending' FROM generate_series(1, 12) AS i""");
    }
  }

  @AfterAll
  static void dropDatabase() throws Exception {
    if (name == null) {
      return;
    }
    try (Connection c = DriverManager.getConnection(adminUrl);
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  private static String withDatabase(String jdbcUrl, String db) {
    URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
    String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
    return "jdbc:" + uri.getScheme() + "://" + uri.getRawAuthority() + "/" + db + query;
  }

  @Test
  void queueDepthPrintsTheReportsColumnsWithCountsRightAligned() {
    CliRun run = CliRun.of("--db-url", url, "ops", "queue_depth");

    assertEquals(0, run.exitCode(), run.transcript());
    List<String> lines = run.out().lines().toList();
    assertEquals(
        "node_id  task_type     state    tasks  oldest_pending_age",
        lines.get(0),
        run.transcript());
    assertTrue(
        lines.get(1).matches("n2:1     REPLICA_COPY  pending     12  00:00:\\d\\d"),
        run.transcript());
    assertEquals("(1 row)", lines.get(2), run.transcript());
  }

  @Test
  void everyReportRunsAndPrintsAHeader() {
    for (String report : Reports.names()) {
      CliRun run = CliRun.of("--db-url", url, "ops", report);
      assertEquals(0, run.exitCode(), report + "\n" + run.transcript());
      assertTrue(
          run.out().lines().findFirst().orElse("").matches("[a-z_]+(  +[a-z_0-9]+)*"),
          run.transcript());
    }
  }

  @Test
  void listNamesEveryReportWithWhatItAnswers() {
    CliRun run = CliRun.of("--db-url", url, "ops", "--list");

    assertEquals(0, run.exitCode(), run.transcript());
    List<String> lines = run.out().lines().toList();
    assertTrue(
        lines.get(0).startsWith("REPORT") && lines.get(0).contains("ANSWERS"), run.transcript());
    assertEquals(Reports.names().size() + 1, lines.size(), run.transcript());
    assertTrue(
        lines.get(1).startsWith("queue_depth")
            && lines.get(1).contains(Reports.describe("queue_depth")),
        run.transcript());
  }

  @Test
  void variablesAreBoundAndAnUnknownOneIsAUsageError() {
    CliRun ok = CliRun.of("--db-url", url, "ops", "stuck_tasks", "--var", "stuck_after=1 second");
    assertEquals(0, ok.exitCode(), ok.transcript());

    CliRun unknown = CliRun.of("--db-url", url, "ops", "stuck_tasks", "--var", "nope=1");
    assertEquals(2, unknown.exitCode(), unknown.transcript());
    assertTrue(unknown.err().contains("no variable 'nope'"), unknown.transcript());

    CliRun badValue = CliRun.of("--db-url", url, "ops", "stuck_tasks", "--var", "stuck_after=soon");
    assertEquals(2, badValue.exitCode(), badValue.transcript());
    assertTrue(badValue.err().contains("--var"), badValue.transcript());
  }

  @Test
  void anUnknownReportIsAUsageErrorListingTheValidOnes() {
    CliRun run = CliRun.of("--db-url", url, "ops", "queue_deep");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("unknown report 'queue_deep'"), run.transcript());
    assertTrue(run.err().contains(String.join(", ", Reports.names())), run.transcript());
  }

  @Test
  void anUnreachableDatabaseExitsFour() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    CliRun run =
        CliRun.of(
            "--db-url",
            "jdbc:postgresql://127.0.0.1:" + closedPort + "/x?user=postgres",
            "ops",
            "queue_depth");
    assertEquals(4, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("cannot connect to database"), run.transcript());
  }

  @Test
  void withoutADatabaseUrlTheMessageSaysHowToGiveOne() {
    // An empty --db-url stands for "not given", whatever MOONCAKE_DB_URL holds in this environment.
    CliRun run = CliRun.of("--db-url", "", "ops", "queue_depth");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("--db-url") && run.err().contains("MOONCAKE_DB_URL"), run.transcript());
  }
}
