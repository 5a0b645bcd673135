package io.mooncake.dist.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * How much of an object has landed in its file while it is still being received: the watermark a
 * node relays from before it holds the whole object (cut-through relaying). Bytes below {@link
 * #landed()} are in the file and never rewritten by this arrival; they are not verified yet, so
 * whoever reads them checks the whole object's digest, as for any fetch.
 *
 * <p>An arrival ends exactly once: {@link #complete()} (every byte landed and the receiver verified
 * them) or {@link #fail()} (the receive broke off or the bytes were wrong; readers must drop what
 * they took). Thread-safe: the receiving event loop advances it, the serving event loops wait on
 * it; waiters run on the thread that advances, so they only hand off to their own executor.
 */
public final class Arrival {
  private final long length;
  private long landed;
  private boolean complete;
  private boolean failed;

  private record Waiter(long have, Runnable run) {}

  private List<Waiter> waiters = new ArrayList<>();

  /**
   * @param length the object's length
   * @param landed bytes from the object's start already in the file (a resumed fetch)
   */
  public Arrival(long length, long landed) {
    if (length < 0 || landed < 0 || landed > length) {
      throw new IllegalArgumentException("arrival of " + landed + " of " + length + " bytes");
    }
    this.length = length;
    this.landed = landed;
  }

  /** The object's length. */
  public long length() {
    return length;
  }

  /** Bytes from the object's start that are in the file. */
  public synchronized long landed() {
    return landed;
  }

  /** Whether the receive broke off or was rejected; what was read from it must be dropped. */
  public synchronized boolean failed() {
    return failed;
  }

  /** Whether every byte landed and the receiver verified the object. */
  public synchronized boolean complete() {
    return complete;
  }

  /** Raises the watermark to {@code bytes} (never lowers it) and wakes the waiters. */
  public void advance(long bytes) {
    List<Runnable> wake;
    synchronized (this) {
      if (failed || bytes <= landed) {
        return;
      }
      landed = Math.min(bytes, length);
      wake = takeWaitersBelow(landed);
    }
    wake.forEach(Runnable::run);
  }

  /** Every byte landed and was verified: waiters finish from the file. Ignored after a failure. */
  public void finish() {
    end(true);
  }

  /** The receive ended without a verified object. Ignored once complete. */
  public void fail() {
    end(false);
  }

  private void end(boolean verified) {
    List<Runnable> wake;
    synchronized (this) {
      if (failed || complete) {
        return;
      }
      if (verified) {
        complete = true;
        landed = length;
      } else {
        failed = true;
      }
      wake = takeWaiters();
    }
    wake.forEach(Runnable::run);
  }

  /**
   * Runs {@code waiter} once more than {@code have} bytes have landed or the arrival has ended: at
   * once, on this thread, if that is already so.
   */
  public void whenBeyond(long have, Runnable waiter) {
    synchronized (this) {
      if (!failed && !complete && landed <= have) {
        waiters.add(new Waiter(have, waiter));
        return;
      }
    }
    waiter.run();
  }

  private List<Runnable> takeWaiters() {
    return takeWaitersBelow(Long.MAX_VALUE);
  }

  /** The waiters whose wait ends with {@code landed} bytes there; the others keep waiting. */
  private List<Runnable> takeWaitersBelow(long landed) {
    List<Runnable> wake = new ArrayList<>();
    List<Waiter> keep = new ArrayList<>();
    for (Waiter w : waiters) {
      if (w.have() < landed) {
        wake.add(w.run());
      } else {
        keep.add(w);
      }
    }
    waiters = keep;
    return wake;
  }

  /**
   * A sink that advances this arrival as {@code sink} hands bytes to the file; the sink writes the
   * object's range from object byte {@code base} on.
   */
  public ByteSink tracking(ByteSink sink, long base) {
    return new ByteSink() {
      @Override
      public void write(ByteBuffer bytes) throws IOException {
        sink.write(bytes);
        advance(base + sink.stored());
      }

      @Override
      public void finish() throws IOException {
        sink.finish();
        advance(base + sink.stored());
      }

      @Override
      public void abort() {
        sink.abort();
      }

      @Override
      public long stored() {
        return sink.stored();
      }
    };
  }
}
