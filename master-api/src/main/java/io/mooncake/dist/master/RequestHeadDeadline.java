package io.mooncake.dist.master;

import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http1.Http1ConnectionListener;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a connection whose request head (the header block after the request line) has not arrived
 * within a deadline. Helidon 4.5's idle check closes a connection waiting for a request line, but
 * not one stopped inside its headers, and its socket read timeout is not applied to the channels it
 * accepts; without this, a client could hold a connection (and its thread) for good by sending a
 * request line and then nothing (security review, issue 18 item 9).
 *
 * <p>Armed when Helidon has read a request line, disarmed when it has read that request's headers;
 * a request whose head does not complete in time has its socket closed, which ends the blocked read
 * and the connection.
 */
public final class RequestHeadDeadline implements Http1ConnectionListener {
  private static final Logger log = LoggerFactory.getLogger(RequestHeadDeadline.class);

  private final Duration deadline;
  private final ScheduledExecutorService timer;
  private final Map<ConnectionContext, ScheduledFuture<?>> armed = new ConcurrentHashMap<>();
  private final AtomicLong closed = new AtomicLong();

  /** Closes connections whose request head takes longer than {@code deadline}. */
  public RequestHeadDeadline(Duration deadline) {
    this.deadline = deadline;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "request-head-deadline");
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
    ScheduledFuture<?> previous =
        armed.put(
            ctx, timer.schedule(() -> expire(ctx), deadline.toMillis(), TimeUnit.MILLISECONDS));
    if (previous != null) {
      previous.cancel(false);
    }
  }

  @Override
  public void headers(ConnectionContext ctx, Headers headers) {
    ScheduledFuture<?> pending = armed.remove(ctx);
    if (pending != null) {
      pending.cancel(false);
    }
  }

  /** Connections closed so far because their request head was late. */
  public long closedCount() {
    return closed.get();
  }

  private void expire(ConnectionContext ctx) {
    if (armed.remove(ctx) == null) {
      return;
    }
    closed.incrementAndGet();
    log.debug(
        "closing connection from {}: request head not complete within {} ms",
        ctx.remotePeer().address(),
        deadline.toMillis());
    try {
      ctx.serverSocket().close();
    } catch (RuntimeException e) {
      log.debug("closing a late connection failed", e);
    }
  }
}
