package io.mooncake.dist.db;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.BiConsumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * LISTENs on channels over a dedicated connection and hands each notification to a callback.
 *
 * <p>Notifications are only a wake-up: they can be lost (e.g. across a database restart), so every
 * consumer also polls. After a reconnect the callback receives {@code (null, null)} so the consumer
 * runs at once rather than waiting for its next poll.
 */
public final class PgListener implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PgListener.class);

  private final Database database;
  private final List<String> channels;
  private final BiConsumer<String, String> callback;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile Connection connection;

  public PgListener(Database database, List<String> channels, BiConsumer<String, String> callback) {
    this.database = database;
    this.channels = List.copyOf(channels);
    this.callback = callback;
    this.thread =
        Thread.ofPlatform()
            .daemon()
            .name("pg-listen-" + String.join(",", channels))
            .unstarted(this::run);
  }

  public PgListener start() {
    thread.start();
    return this;
  }

  private void run() {
    long backoffMs = 200;
    while (running) {
      try (Connection c = database.openDedicatedConnection()) {
        connection = c;
        try (Statement st = c.createStatement()) {
          for (String ch : channels) {
            st.execute("LISTEN " + ch);
          }
        }
        backoffMs = 200;
        callback.accept(null, null);
        PGConnection pg = c.unwrap(PGConnection.class);
        while (running) {
          PGNotification[] batch = pg.getNotifications(1_000);
          if (batch != null) {
            for (PGNotification n : batch) {
              callback.accept(n.getName(), n.getParameter());
            }
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          return;
        }
        log.warn(
            "notification listener lost its connection ({}); reconnecting in {} ms",
            e.getMessage(),
            backoffMs);
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
        backoffMs = Math.min(5_000, backoffMs * 2);
      }
    }
  }

  @Override
  public void close() {
    running = false;
    Connection c = connection;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // closing is best effort: the thread exits on its next check either way
      }
    }
    thread.interrupt();
  }
}
