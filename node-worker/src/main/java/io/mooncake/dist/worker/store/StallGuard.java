package io.mooncake.dist.worker.store;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A source stream that fails when no byte arrives for {@code limit}: the HTTP client has a connect
 * and a response timeout but none for the body, so a source that stalls mid-body would hold a
 * seed's task slot for good. A watchdog closes the stream, which wakes the blocked read with an
 * {@link IOException} (retryable, like any read failure).
 */
final class StallGuard extends FilterInputStream {
  private static final ScheduledExecutorService WATCHDOG =
      Executors.newSingleThreadScheduledExecutor(
          r -> Thread.ofPlatform().daemon().name("source-stall-watchdog").unstarted(r));

  private final long limitNanos;
  private final String what;
  private final ScheduledFuture<?> check;
  private volatile long lastProgress = System.nanoTime();
  private volatile boolean stalled;

  StallGuard(InputStream in, Duration limit, String what) {
    super(in);
    this.limitNanos = limit.toNanos();
    this.what = what;
    long period = Math.max(10, limit.toMillis() / 4);
    this.check =
        WATCHDOG.scheduleAtFixedRate(this::checkProgress, period, period, TimeUnit.MILLISECONDS);
  }

  private void checkProgress() {
    if (System.nanoTime() - lastProgress > limitNanos && !stalled) {
      stalled = true;
      check.cancel(false);
      try {
        in.close();
      } catch (IOException e) {
        // closing is all we wanted; the reader sees the failure
      }
    }
  }

  @Override
  public int read() throws IOException {
    try {
      int b = super.read();
      lastProgress = System.nanoTime();
      return b;
    } catch (IOException e) {
      throw stalled ? stallFailure(e) : e;
    }
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    try {
      int n = super.read(b, off, len);
      lastProgress = System.nanoTime();
      return n;
    } catch (IOException e) {
      throw stalled ? stallFailure(e) : e;
    }
  }

  private IOException stallFailure(IOException cause) {
    return new IOException(
        "no byte from " + what + " for " + limitNanos / 1_000_000_000 + " s; gave up", cause);
  }

  @Override
  public void close() throws IOException {
    check.cancel(false);
    super.close();
  }
}
