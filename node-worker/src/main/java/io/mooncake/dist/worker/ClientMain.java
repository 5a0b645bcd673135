package io.mooncake.dist.worker;

import io.mooncake.dist.db.Database;
import io.mooncake.dist.db.DatabaseUnavailableException;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.transfer.ChunkSecurity;
import io.mooncake.dist.transfer.ChunkTls;
import io.mooncake.dist.transfer.ObjectDigest;
import io.mooncake.dist.worker.security.ClusterSecret;
import io.mooncake.dist.worker.store.SourceCredentials;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code bin/mooncake_client}: run one node's worker until stopped. */
@Command(
    name = "mooncake_client",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description =
        "Mooncake model distribution node worker: serves chunks on the node id's port and executes this node's tasks.")
public final class ClientMain implements Callable<Integer> {
  @Option(
      names = "--node-id",
      required = true,
      description = "This node's id, host:port; the chunk server listens on that port.")
  String nodeIdText;

  @Option(
      names = "--data-dir",
      required = true,
      description = "Directory for staged models (created if missing).")
  Path dataDir;

  @Option(
      names = "--db-url",
      defaultValue = "${env:MOONCAKE_DB_URL}",
      description = "PostgreSQL JDBC URL (default: $MOONCAKE_DB_URL).")
  String dbUrl;

  @Option(
      names = "--bind-host",
      defaultValue = "0.0.0.0",
      description = "Address the chunk server binds (default: ${DEFAULT-VALUE}).")
  String bindHost;

  @Option(
      names = "--concurrency",
      defaultValue = "8",
      description = "Tasks executed at once, e.g. chunks in flight (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(
      names = "--heartbeat-ms",
      defaultValue = "2000",
      description =
          "Heartbeat interval; running tasks' leases are renewed (and their progress written)"
              + " every few heartbeats: at least three times a lease, at most every 6 s"
              + " (default: ${DEFAULT-VALUE}).")
  long heartbeatMs;

  @Option(
      names = "--lease-seconds",
      defaultValue = "30",
      description = "Task lease; a task whose lease lapses is rescued (default: ${DEFAULT-VALUE}).")
  long leaseSeconds;

  @Option(
      names = "--poll-ms",
      defaultValue = "1000",
      description = "Claim poll interval when no NOTIFY arrives (default: ${DEFAULT-VALUE}).")
  long pollMs;

  @Option(
      names = "--idle-poll-ms",
      defaultValue = "5000",
      description =
          "Longest claim poll interval: polls that find no work back off from --poll-ms, doubling up to this; any work or "
              + "wake-up resets it (default: ${DEFAULT-VALUE}).")
  long idlePollMs;

  @Option(
      names = "--db-pool-size",
      description =
          "Database connections this client pools (default: --concurrency + 4). Through a transaction-mode pooler "
              + "these are the pooler's client connections, not Postgres backends; fewer than --concurrency makes tasks "
              + "wait for a connection under load.")
  Integer dbPoolSize;

  @Option(
      names = "--no-listen",
      description =
          "Do not hold a LISTEN session for wake-ups; poll instead (--poll-ms backing off to --idle-poll-ms). For a "
              + "--db-url through a transaction-mode pooler, which cannot keep a LISTEN.")
  boolean noListen;

  @Option(
      names = "--master-url",
      split = ",",
      description =
          "Masters to send heartbeats to and take wake-ups from (comma-separated http(s)://host:port, e.g. every "
              + "master replica), instead of writing heartbeats and polling for work in the database: an idle node "
              + "then issues no database statement. Requests are signed with the database's cluster secret. When no "
              + "master answers, the client falls back to the database by itself.")
  List<String> masterUrls = new java.util.ArrayList<>();

  @Option(
      names = "--no-migrate",
      description =
          "Never run the schema migrations: exit (code 3) when the database is not migrated to this client's version "
              + "(mooncake_master migrates at start). Without it a client migrates only a database that is behind. "
              + "Needed through a transaction-mode pooler (Flyway holds a session lock).")
  boolean noMigrate;

  @Option(
      names = "--upload-limit-mbit",
      defaultValue = "0",
      description =
          "Serve chunks to peers at most this fast, in Mbit/s over all peers; 0 = unlimited (default: ${DEFAULT-VALUE}).")
  long uploadMbit;

  @Option(
      names = "--download-limit-mbit",
      defaultValue = "0",
      description =
          "Copy chunks from peers at most this fast, in Mbit/s over all copies; 0 = unlimited (default: ${DEFAULT-VALUE}).")
  long downloadMbit;

  @Option(
      names = "--http-port",
      defaultValue = "-1",
      description =
          "Serve GET /health and GET /metrics on this port of --bind-host; -1 = off, 0 = an ephemeral port (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(
      names = "--source-credentials",
      paramLabel = "<file>",
      description =
          "Headers for HTTP(S) sources, one per line: '<url-prefix> <Header-Name>: <value>' (file mode 600). "
              + "Jobs never carry credentials; the seed adds the header whose prefix matches the URL.")
  Path sourceCredentials;

  @Option(
      names = "--data-group",
      paramLabel = "<group>",
      description =
          "Group that may read the staged models (the group a serving engine runs as): the data tree"
              + " is created without access for others (dirs 0750, files 0640); with this flag"
              + " <data-dir>/models and everything in it belong to this group.")
  String dataGroup;

  @Option(
      names = "--cluster-secret-file",
      paramLabel = "<file>",
      description =
          "Prove and demand this cluster secret on the chunk port instead of the one in the database; "
              + "at least 32 bytes, readable by its owner only, the same on every node (default: the database's).")
  Path clusterSecretFile;

  @Option(
      names = "--chunk-tls-cert",
      paramLabel = "<pem>",
      description =
          "TLS on the chunk port: this node's certificate, PEM; needs --chunk-tls-key and --chunk-tls-ca (default: no TLS).")
  Path tlsCert;

  @Option(
      names = "--chunk-tls-key",
      paramLabel = "<pem>",
      description =
          "The certificate's private key, unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY) (default: no TLS).")
  Path tlsKey;

  @Option(
      names = "--chunk-tls-ca",
      paramLabel = "<pem>",
      description =
          "CA certificate(s), PEM, that sign every member's certificate; peers without one are refused (default: no TLS).")
  Path tlsCa;

  @Option(
      names = "--full-reverify",
      description =
          "Seed reuse re-hashes every model file, even one unchanged (same inode, size, mtime, ctime) since this node "
              + "hashed it. Off by default: followers check every object's digest anyway.")
  boolean fullReverify;

  @Option(
      names = "--object-digest",
      paramLabel = "<crc32c-crc32|sha256>",
      defaultValue = "crc32c-crc32",
      converter = DigestConverter.class,
      description =
          "Digest this node publishes for the objects it downloads as a seed; followers verify every copy with it. "
              + "crc32c-crc32 (default): a 64-bit cyclic check, ~5 GiB/s per core, catches corruption; sha256: cryptographic, "
              + "~1 GiB/s per core, also catches chunks altered on purpose (for a chunk port in clear over an untrusted network).")
  ObjectDigest.Algorithm objectDigest;

  @Option(
      names = "--evict-high-watermark",
      defaultValue = "90",
      paramLabel = "<percent>",
      description =
          "Above this share of the data directory's file system used, whole staged models are evicted, least "
              + "recently used first, never a pinned one or one an active job uses (default: ${DEFAULT-VALUE}).")
  int evictHighPct;

  @Option(
      names = "--evict-low-watermark",
      defaultValue = "80",
      paramLabel = "<percent>",
      description = "Eviction stops at or below this share used (default: ${DEFAULT-VALUE}).")
  int evictLowPct;

  static final class DigestConverter implements CommandLine.ITypeConverter<ObjectDigest.Algorithm> {
    @Override
    public ObjectDigest.Algorithm convert(String value) {
      try {
        return ObjectDigest.Algorithm.ofLabel(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new ClientMain()).execute(args));
  }

  @Override
  public Integer call() throws InterruptedException {
    NodeId nodeId;
    try {
      nodeId = NodeId.parse(nodeIdText);
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_client: --node-id: " + e.getMessage());
      return 2;
    }
    if (dbUrl == null || dbUrl.isBlank()) {
      System.err.println(
          "mooncake_client: no database given: pass --db-url <jdbc-url> or set MOONCAKE_DB_URL");
      return 2;
    }
    if (uploadMbit < 0 || downloadMbit < 0) {
      System.err.println(
          "mooncake_client: --upload-limit-mbit and --download-limit-mbit must be >= 0 (0 = unlimited)");
      return 2;
    }
    if (httpPort < -1 || httpPort > 65535) {
      System.err.println(
          "mooncake_client: --http-port must be -1 (off), 0 (ephemeral) or a port up to 65535");
      return 2;
    }
    if (concurrency < 1
        || heartbeatMs < 100
        || leaseSeconds * 1000 <= 2 * heartbeatMs
        || pollMs < 10
        || idlePollMs < pollMs
        || (dbPoolSize != null && dbPoolSize < 1)) {
      System.err.println(
          "mooncake_client: need --concurrency >= 1, --heartbeat-ms >= 100, --poll-ms >= 10, "
              + "--idle-poll-ms >= --poll-ms, --db-pool-size >= 1 and "
              + "--lease-seconds longer than two heartbeats");
      return 2;
    }
    io.mooncake.dist.worker.disk.DiskKeeper.Watermarks watermarks;
    try {
      watermarks =
          new io.mooncake.dist.worker.disk.DiskKeeper.Watermarks(evictHighPct, evictLowPct);
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_client: " + e.getMessage());
      return 2;
    }
    List<java.net.URI> masters;
    try {
      masters = masterUris(masterUrls);
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_client: --master-url: " + e.getMessage());
      return 2;
    }
    byte[] fileSecret = null;
    if (clusterSecretFile != null) {
      try {
        fileSecret = ClusterSecret.fromFile(clusterSecretFile);
      } catch (ClusterSecret.InvalidSecretException e) {
        System.err.println("mooncake_client: --cluster-secret-file: " + e.getMessage());
        return 2;
      }
    }
    ChunkTls tls;
    try {
      tls = chunkTls();
    } catch (IllegalArgumentException e) {
      System.err.println("mooncake_client: " + e.getMessage());
      return 2;
    }
    Path dir;
    try {
      dir =
          Files.createDirectories(
                  dataDir,
                  java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                      java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-x---")))
              .toRealPath();
      if (!Files.isWritable(dir)) {
        throw new IOException("not writable");
      }
    } catch (IOException e) {
      System.err.println(
          "mooncake_client: --data-dir " + dataDir + ": cannot use it: " + e.getMessage());
      return 2;
    }
    SourceCredentials credentials = SourceCredentials.NONE;
    if (sourceCredentials != null) {
      try {
        credentials = SourceCredentials.load(sourceCredentials);
      } catch (IllegalArgumentException e) {
        System.err.println("mooncake_client: --source-credentials: " + e.getMessage());
        return 2;
      }
    }
    Database db;
    try {
      db =
          openDatabase(
              dbUrl, dbPoolSize != null ? dbPoolSize : concurrency + 4, !noMigrate, nodeId);
    } catch (DatabaseUnavailableException e) {
      System.err.println("mooncake_client: " + e.getMessage());
      return 3;
    }
    ChunkSecurity security;
    try {
      security = ChunkSecurity.of(fileSecret != null ? fileSecret : ClusterSecret.fromDatabase(db));
    } catch (ClusterSecret.InvalidSecretException e) {
      System.err.println("mooncake_client: " + e.getMessage());
      db.close();
      return 2;
    } catch (RuntimeException e) {
      System.err.println(
          "mooncake_client: cannot read the cluster secret from the database: " + e.getMessage());
      db.close();
      return 3;
    }
    if (tls != null) {
      security = security.withTls(tls);
    }
    NodeWorker worker =
        new NodeWorker(
                new NodeWorker.Settings(
                    nodeId,
                    dir,
                    bindHost,
                    concurrency,
                    Duration.ofMillis(heartbeatMs),
                    Duration.ofSeconds(leaseSeconds),
                    Duration.ofMillis(pollMs),
                    uploadMbit * 1_000_000 / 8,
                    downloadMbit * 1_000_000 / 8),
                db,
                security)
            .httpPort(httpPort)
            .listen(!noListen)
            .idlePoll(Duration.ofMillis(idlePollMs))
            .masters(masters)
            .sourceCredentials(credentials)
            .fullReverify(fullReverify)
            .objectDigest(objectDigest)
            .watermarks(watermarks);
    if (dataGroup != null) {
      try {
        worker.dataGroup(dataGroup);
      } catch (IllegalArgumentException e) {
        System.err.println("mooncake_client: --data-group: " + e.getMessage());
        db.close();
        return 2;
      }
    }
    try {
      worker.start();
    } catch (java.io.UncheckedIOException e) {
      System.err.println("mooncake_client: " + e.getMessage());
      db.close();
      return 4;
    } catch (RuntimeException e) {
      System.err.println(
          "mooncake_client: cannot start chunk server on "
              + bindHost
              + ":"
              + nodeId.port()
              + ": "
              + e.getMessage());
      db.close();
      return 4;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  worker.close();
                  db.close();
                  stopped.countDown();
                }));
    while (worker.running() && !stopped.await(1, java.util.concurrent.TimeUnit.SECONDS)) {
      // wait: a worker displaced by another instance with the same node id stops on its own
    }
    return worker.running() ? 0 : 5;
  }

  /**
   * The database sessions a client holds, opened as {@code mooncake_client} opens them (the fleet
   * benchmark's simulated nodes open theirs here too, so they hold what a real client would).
   */
  /**
   * How long a task waits for a database connection before it counts the database as unreachable:
   * long enough to ride out a pooler queueing behind a saturated Postgres (see {@link
   * Database#open( String, int, String, Duration)}), short enough that a dead database still fails
   * a task.
   */
  static final Duration BORROW_TIMEOUT = Duration.ofSeconds(30);

  /**
   * The {@code application_name} of every node's connections: one name for all nodes, not one per
   * node. A transaction-mode PgBouncer keeps each client's {@code application_name} and sends
   * {@code SET application_name} whenever it gives the client a server connection last used by a
   * client with another value; with a name per node that was nearly every transaction: 149,000 of
   * the 277,600 statements of a 100-node job (bench/fleet.sh, PgBouncer 1.24.1, issue 19), 5.9
   * statements a copy. Which node a backend serves shows in the rows it writes ({@code
   * lease_owner}), not in a name a pooler would have made wrong anyway.
   */
  static final String APPLICATION_NAME = "mooncake_client";

  public static Database openDatabase(
      String dbUrl, int poolSize, boolean mayMigrate, NodeId nodeId) {
    return openDatabase(dbUrl, poolSize, mayMigrate, nodeId, null);
  }

  /**
   * As above, the connection pool's helper threads made by {@code poolThreads} (null: the pool's
   * own); the fleet benchmark makes them virtual, as it does the worker's ({@link
   * NodeWorker#virtualThreads}).
   */
  public static Database openDatabase(
      String dbUrl,
      int poolSize,
      boolean mayMigrate,
      NodeId nodeId,
      java.util.concurrent.ThreadFactory poolThreads) {
    Database db = Database.open(dbUrl, poolSize, APPLICATION_NAME, BORROW_TIMEOUT, poolThreads);
    try {
      // One query instead of Flyway (its session lock and dozens of statements) on every start.
      int at = db.schemaVersion();
      if (at < Database.SCHEMA_VERSION) {
        if (!mayMigrate) {
          throw new DatabaseUnavailableException(
              "database "
                  + Database.redact(dbUrl)
                  + " is "
                  + (at == 0 ? "not migrated" : "at schema version " + at)
                  + "; this client needs version "
                  + Database.SCHEMA_VERSION
                  + ": start mooncake_master on it first (it migrates), or run this client once"
                  + " without --no-migrate over a direct connection");
        }
        db.migrate();
      }
    } catch (RuntimeException e) {
      db.close();
      throw e;
    }
    return db;
  }

  /**
   * The masters' base URLs, each {@code http(s)://host[:port]} with no path, query or user info.
   */
  static List<java.net.URI> masterUris(List<String> urls) {
    List<java.net.URI> out = new java.util.ArrayList<>();
    for (String raw : urls) {
      String url = raw.strip();
      if (url.isEmpty()) {
        continue;
      }
      java.net.URI uri;
      try {
        uri = new java.net.URI(url);
      } catch (java.net.URISyntaxException e) {
        throw new IllegalArgumentException("'" + url + "' is not a URL: " + e.getReason());
      }
      String scheme =
          uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        throw new IllegalArgumentException("'" + url + "' must start with http:// or https://");
      }
      if (uri.getHost() == null
          || uri.getUserInfo() != null
          || uri.getQuery() != null
          || uri.getFragment() != null
          || !(uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/"))) {
        throw new IllegalArgumentException(
            "'" + url + "' must be scheme://host[:port] only (no path, query or user info)");
      }
      out.add(uri);
    }
    return out;
  }

  /** TLS from the three flags: all or none; each file named by its flag when it cannot be used. */
  private ChunkTls chunkTls() {
    if (tlsCert == null && tlsKey == null && tlsCa == null) {
      return null;
    }
    if (tlsCert == null || tlsKey == null || tlsCa == null) {
      java.util.List<String> missing = new java.util.ArrayList<>();
      if (tlsCert == null) {
        missing.add("--chunk-tls-cert");
      }
      if (tlsKey == null) {
        missing.add("--chunk-tls-key");
      }
      if (tlsCa == null) {
        missing.add("--chunk-tls-ca");
      }
      throw new IllegalArgumentException(
          "TLS on the chunk port needs --chunk-tls-cert, --chunk-tls-key and "
              + "--chunk-tls-ca together; missing "
              + String.join(", ", missing));
    }
    try {
      io.mooncake.dist.db.SecretFiles.requireOwnerOnly(tlsKey, "private key");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--chunk-tls-key: " + e.getMessage(), e);
    }
    try {
      return ChunkTls.fromPem(tlsCert, tlsKey, tlsCa);
    } catch (ChunkTls.InvalidFileException e) {
      String flag =
          switch (e.part()) {
            case CERTIFICATE -> "--chunk-tls-cert";
            case PRIVATE_KEY -> "--chunk-tls-key";
            case TRUSTED_CA -> "--chunk-tls-ca";
          };
      throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
    }
  }
}
