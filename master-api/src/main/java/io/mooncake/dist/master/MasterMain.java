package io.mooncake.dist.master;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.WebServerConfig;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.DatabaseUnavailableException;
import io.mooncake.dist.master.auth.ApiTokens;
import io.mooncake.dist.master.auth.PemFiles;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.scheduler.loop.SchedulerLoop;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code bin/mooncake_master}: migrate the database, start the scheduler loop, serve HTTP. */
@Command(
    name = "mooncake_master",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Mooncake model distribution master: HTTP API and scheduler. Several may run against one database.")
public final class MasterMain implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(MasterMain.class);

  @Option(
      names = "--http-port",
      defaultValue = "8080",
      description = "HTTP port (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(
      names = "--bind-host",
      defaultValue = "0.0.0.0",
      description = "Address to listen on (default: ${DEFAULT-VALUE}).")
  String bindHost;

  @Option(
      names = "--db-url",
      defaultValue = "${env:MOONCAKE_DB_URL}",
      description =
          "PostgreSQL JDBC URL, e.g. jdbc:postgresql://127.0.0.1:5432/mooncake?user=postgres (default: $MOONCAKE_DB_URL).")
  String dbUrl;

  @Option(
      names = "--db-pool-size",
      defaultValue = "8",
      description = "Connection pool size (default: ${DEFAULT-VALUE}).")
  int poolSize;

  @Option(
      names = "--scheduler-tick-ms",
      defaultValue = "500",
      description =
          "Scheduler poll interval: every active job is evaluated this often. A finished task (but a copy's "
              + "success), a seed's new object and a release's first follower replica also wake it through "
              + "NOTIFY; a placement whose last copy succeeded moves on at the next tick (default: ${DEFAULT-VALUE}).")
  long tickMs;

  @Option(
      names = "--allowed-sources",
      defaultValue = "",
      description =
          "Comma-separated sources seeds may read: file:///<dir>/ roots and http(s)://<host>[:<port>] origins; "
              + "checked when a job is created and by the seed on every redirect hop. Without it (or "
              + "--allow-any-source) every job is refused.")
  String allowedSources;

  @Option(
      names = "--allow-any-source",
      description =
          "Let seeds read any file or HTTP(S) source (local use, demos). Contradicts --allowed-sources.")
  boolean allowAnySource;

  @Option(
      names = "--public-sources-only",
      description =
          "HTTP(S) sources, and every redirect hop, must resolve to public addresses only: no "
              + "loopback, link-local (cloud metadata), private or shared ranges.")
  boolean publicSourcesOnly;

  @Option(
      names = "--node-grace-seconds",
      defaultValue = "300",
      description =
          "A placement whose node has not heartbeated for this long gets its open tasks failed (default: ${DEFAULT-VALUE}).")
  long nodeGraceSeconds;

  @Option(
      names = "--release-window",
      defaultValue = "8",
      description =
          "Released objects that may wait for their first follower replica at once; the next object's "
              + "copies are created when one is held. 0 releases every published object at once "
              + "(default: ${DEFAULT-VALUE}).")
  int releaseWindow;

  @Option(
      names = "--retention-hours",
      defaultValue = "168",
      description =
          "Task rows of jobs finished longer ago than this are pruned (default: ${DEFAULT-VALUE}).")
  long retentionHours;

  @Option(
      names = "--api-tokens-file",
      paramLabel = "<file>",
      description =
          "Bearer tokens the API accepts, one per line: '<read|write> <token> [<name>]' (file mode 600). "
              + "Required unless --no-auth.")
  Path apiTokensFile;

  @Option(
      names = "--no-auth",
      description =
          "Serve the API without authentication. For local use only: anyone who reaches the port may create and cancel jobs.")
  boolean noAuth;

  @Option(
      names = "--tls-cert",
      paramLabel = "<pem>",
      description = "Serve HTTPS with this PEM certificate chain (leaf first); needs --tls-key.")
  Path tlsCert;

  @Option(
      names = "--tls-key",
      paramLabel = "<pem>",
      description = "The unencrypted PKCS#8 PEM private key of --tls-cert.")
  Path tlsKey;

  public static void main(String[] args) {
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    System.exit(new CommandLine(new MasterMain()).execute(args));
  }

  @Override
  public Integer call() throws InterruptedException {
    if (dbUrl == null || dbUrl.isBlank()) {
      System.err.println(
          "mooncake_master: no database given: pass --db-url <jdbc-url> or set MOONCAKE_DB_URL");
      return 2;
    }
    if (httpPort < 0 || httpPort > 65535) {
      System.err.println("mooncake_master: --http-port must be 0-65535, got " + httpPort);
      return 2;
    }
    if (releaseWindow < 0) {
      System.err.println(
          "mooncake_master: --release-window must be 0 (no window) or positive, got "
              + releaseWindow);
      return 2;
    }
    if (nodeGraceSeconds < 1 || retentionHours < 0) {
      System.err.println(
          "mooncake_master: --node-grace-seconds must be at least 1 and --retention-hours at least 0");
      return 2;
    }
    SourcePolicy sources;
    try {
      sources =
          SourcePolicy.of(
              io.mooncake.dist.scheduler.domain.SourceRules.parse(
                  allowedSources, allowAnySource, publicSourcesOnly));
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_master: --allowed-sources: " + e.getMessage());
      return 2;
    }
    if (allowAnySource && !allowedSources.isBlank()) {
      System.err.println(
          "mooncake_master: --allow-any-source and --allowed-sources contradict each other; pass one");
      return 2;
    }
    ApiAccess access;
    if (noAuth && apiTokensFile != null) {
      System.err.println(
          "mooncake_master: --no-auth and --api-tokens-file contradict each other; pass one");
      return 2;
    } else if (noAuth) {
      access = ApiAccess.open();
    } else if (apiTokensFile != null) {
      try {
        access = ApiAccess.tokens(ApiTokens.load(apiTokensFile));
      } catch (IllegalArgumentException e) {
        System.err.println("mooncake_master: --api-tokens-file: " + e.getMessage());
        return 2;
      }
    } else {
      System.err.println(
          "mooncake_master: the API needs authentication: pass --api-tokens-file <file> "
              + "(lines '<read|write> <token> [<name>]', mode 600), or --no-auth for local use only");
      return 2;
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      System.err.println(
          "mooncake_master: --tls-cert and --tls-key go together; pass both or neither");
      return 2;
    }
    PrivateKey key = null;
    List<X509Certificate> chain = List.of();
    if (tlsCert != null) {
      try {
        chain = PemFiles.certificates(tlsCert);
      } catch (IllegalArgumentException e) {
        System.err.println("mooncake_master: --tls-cert: " + e.getMessage());
        return 2;
      }
      try {
        io.mooncake.dist.db.SecretFiles.requireOwnerOnly(tlsKey, "private key");
        key = PemFiles.privateKey(tlsKey);
      } catch (IllegalArgumentException e) {
        System.err.println("mooncake_master: --tls-key: " + e.getMessage());
        return 2;
      }
    }
    Database db;
    try {
      db = Database.open(dbUrl, poolSize, "mooncake_master");
      db.migrate();
    } catch (DatabaseUnavailableException e) {
      System.err.println("mooncake_master: " + e.getMessage());
      return 3;
    }
    SchedulerLoop scheduler =
        new SchedulerLoop(
                db,
                new SchedulerLoop.Settings(
                    Duration.ofMillis(tickMs),
                    Duration.ofSeconds(nodeGraceSeconds),
                    Duration.ofHours(retentionHours),
                    SchedulerLoop.Settings.DEFAULT_PRUNE_EVERY,
                    releaseWindow))
            .start();
    NodeLink nodeLink = NodeLink.start(db);
    WebServerConfig.Builder web =
        ServerLimits.apply(
            WebServer.builder()
                .host(bindHost)
                .port(httpPort)
                .maxPayloadSize(64L * 1024 * 1024)
                .routing(
                    r -> MasterRouting.routing(r, db, scheduler::wake, sources, access, nodeLink)));
    if (key != null) {
      PrivateKey tlsPrivateKey = key;
      List<X509Certificate> tlsChain = chain;
      web.tls(t -> t.privateKey(tlsPrivateKey).privateKeyCertChain(tlsChain));
    }
    WebServer started;
    try {
      started = web.build().start();
    } catch (RuntimeException e) {
      started = null;
      log.debug("the HTTP server did not start", e);
    }
    if (started == null || !started.isRunning() || started.port() <= 0) {
      // Helidon logs a bind failure and returns a server without a listener; a master that cannot
      // serve must not keep running as if it did.
      System.err.println(
          "mooncake_master: cannot listen on "
              + bindHost
              + ":"
              + httpPort
              + " (port in use, or the address is not this host's)");
      if (started != null) {
        started.stop();
      }
      nodeLink.close();
      scheduler.close();
      db.close();
      return 4;
    }
    WebServer server = started;
    log.info(
        "mooncake_master serving {}://{}:{} (database {}, {})",
        key != null ? "https" : "http",
        bindHost,
        server.port(),
        Database.redact(dbUrl),
        access.enabled() ? "bearer tokens required" : "NO AUTHENTICATION (--no-auth)");
    if (sources.rules().allowsNothing()) {
      log.warn(
          "no model source is allowed: every job will be refused until the master runs with "
              + "--allowed-sources <roots and origins> (or --allow-any-source for local use)");
    } else {
      log.info("model sources allowed: {}", sources.rules().describe());
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.stop();
                  nodeLink.close();
                  scheduler.close();
                  db.close();
                  stopped.countDown();
                }));
    stopped.await();
    return 0;
  }
}
