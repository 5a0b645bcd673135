package io.mooncake.dist.master;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.DatabaseUnavailableException;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.scheduler.loop.SchedulerLoop;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code bin/mooncake_master}: migrate the database, start the scheduler loop, serve HTTP. */
@Command(name = "mooncake_master", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Mooncake model distribution master: HTTP API and scheduler. Several may run against one database.")
public final class MasterMain implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(MasterMain.class);

  @Option(names = "--http-port", defaultValue = "8080", description = "HTTP port (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--bind-host", defaultValue = "0.0.0.0", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String bindHost;

  @Option(names = "--db-url", defaultValue = "${env:MOONCAKE_DB_URL}",
      description = "PostgreSQL JDBC URL, e.g. jdbc:postgresql://127.0.0.1:5432/mooncake?user=postgres (default: $MOONCAKE_DB_URL).")
  String dbUrl;

  @Option(names = "--db-pool-size", defaultValue = "8", description = "Connection pool size (default: ${DEFAULT-VALUE}).")
  int poolSize;

  @Option(names = "--scheduler-tick-ms", defaultValue = "500",
      description = "Scheduler poll interval; task completions also wake it through NOTIFY (default: ${DEFAULT-VALUE}).")
  long tickMs;

  @Option(names = "--allowed-sources", defaultValue = "",
      description = "Comma-separated sources seeds may read: file:///<dir>/ roots and http(s)://<host>[:<port>] origins; "
          + "empty (the default, for local use) allows any source.")
  String allowedSources;

  @Option(names = "--node-grace-seconds", defaultValue = "300",
      description = "A placement whose node has not heartbeated for this long gets its open tasks failed (default: ${DEFAULT-VALUE}).")
  long nodeGraceSeconds;

  @Option(names = "--retention-hours", defaultValue = "168",
      description = "Task rows of jobs finished longer ago than this are pruned (default: ${DEFAULT-VALUE}).")
  long retentionHours;

  public static void main(String[] args) {
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    System.exit(new CommandLine(new MasterMain()).execute(args));
  }

  @Override
  public Integer call() throws InterruptedException {
    if (dbUrl == null || dbUrl.isBlank()) {
      System.err.println("mooncake_master: no database given: pass --db-url <jdbc-url> or set MOONCAKE_DB_URL");
      return 2;
    }
    if (httpPort < 0 || httpPort > 65535) {
      System.err.println("mooncake_master: --http-port must be 0-65535, got " + httpPort);
      return 2;
    }
    if (nodeGraceSeconds < 1 || retentionHours < 0) {
      System.err.println("mooncake_master: --node-grace-seconds must be at least 1 and --retention-hours at least 0");
      return 2;
    }
    SourcePolicy sources;
    try {
      sources = SourcePolicy.parse(allowedSources);
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_master: --allowed-sources: " + e.getMessage());
      return 2;
    }
    Database db;
    try {
      db = Database.open(dbUrl, poolSize, "mooncake_master");
      db.migrate();
    } catch (DatabaseUnavailableException e) {
      System.err.println("mooncake_master: " + e.getMessage());
      return 3;
    }
    SchedulerLoop scheduler = new SchedulerLoop(db, new SchedulerLoop.Settings(Duration.ofMillis(tickMs),
        Duration.ofSeconds(nodeGraceSeconds), Duration.ofHours(retentionHours), SchedulerLoop.Settings.DEFAULT_PRUNE_EVERY)).start();
    WebServer server = WebServer.builder()
        .host(bindHost)
        .port(httpPort)
        .maxPayloadSize(64L * 1024 * 1024)
        .routing(r -> MasterRouting.routing(r, db, scheduler::wake, sources))
        .build()
        .start();
    log.info("mooncake_master serving http://{}:{} (database {})", bindHost, server.port(), Database.redact(dbUrl));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.stop();
      scheduler.close();
      db.close();
      stopped.countDown();
    }));
    stopped.await();
    return 0;
  }
}
