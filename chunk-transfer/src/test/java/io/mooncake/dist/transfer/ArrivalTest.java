package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The watermark of an object being received: every transition and who gets woken. */
class ArrivalTest {

  @Test
  void aWaiterRunsOnceWhenTheWatermarkPassesWhatItHas() {
    Arrival a = new Arrival(100, 0);
    AtomicInteger woken = new AtomicInteger();
    a.whenBeyond(10, woken::incrementAndGet);
    a.advance(10);
    assertEquals(0, woken.get(), "10 landed is not beyond 10");
    a.advance(11);
    assertEquals(1, woken.get());
    a.advance(50);
    assertEquals(1, woken.get(), "a waiter is woken once, then it must wait again");
    assertEquals(50, a.landed());
  }

  @Test
  void theWatermarkNeverMovesBackNorPastTheLength() {
    Arrival a = new Arrival(100, 40);
    a.advance(20);
    assertEquals(40, a.landed());
    a.advance(500);
    assertEquals(100, a.landed());
  }

  @Test
  void aWaiterForBytesAlreadyThereRunsAtOnce() {
    Arrival a = new Arrival(100, 30);
    AtomicInteger woken = new AtomicInteger();
    a.whenBeyond(29, woken::incrementAndGet);
    assertEquals(1, woken.get());
  }

  @Test
  void finishingWakesEveryWaiterAndLandsTheWholeObject() {
    Arrival a = new Arrival(100, 0);
    List<String> woken = new ArrayList<>();
    a.whenBeyond(0, () -> woken.add("a"));
    a.whenBeyond(99, () -> woken.add("b"));
    a.finish();
    assertEquals(List.of("a", "b"), woken);
    assertTrue(a.complete());
    assertFalse(a.failed());
    assertEquals(100, a.landed());
    a.fail();
    assertFalse(a.failed(), "a verified object cannot fail afterwards");
    AtomicInteger late = new AtomicInteger();
    a.whenBeyond(100, late::incrementAndGet);
    assertEquals(1, late.get(), "after the end nobody waits");
  }

  @Test
  void failingWakesEveryWaiterAndFreezesTheWatermark() {
    Arrival a = new Arrival(100, 0);
    a.advance(30);
    AtomicInteger woken = new AtomicInteger();
    a.whenBeyond(30, woken::incrementAndGet);
    a.fail();
    assertEquals(1, woken.get());
    assertTrue(a.failed());
    a.advance(80);
    assertEquals(30, a.landed(), "bytes of a failed receive are not offered any more");
    a.finish();
    assertFalse(a.complete(), "a failed arrival cannot complete");
    AtomicInteger late = new AtomicInteger();
    a.whenBeyond(0, late::incrementAndGet);
    assertEquals(1, late.get());
  }

  @Test
  void impossibleArrivalsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Arrival(-1, 0));
    assertThrows(IllegalArgumentException.class, () -> new Arrival(10, 11));
    assertThrows(IllegalArgumentException.class, () -> new Arrival(10, -1));
    Arrival a = new Arrival(10, 0);
    java.nio.file.Path p = java.nio.file.Path.of("x");
    assertThrows(
        IllegalArgumentException.class,
        () -> new FileRange(p, 0, 11, a),
        "arrival and range disagree");
  }

  @Test
  void aTrackingSinkAdvancesByWhatItsSinkStored() throws Exception {
    Arrival a = new Arrival(1000, 200);
    List<Long> storedAfterWrites = new ArrayList<>();
    ByteSink inner =
        new ByteSink() {
          long stored;
          int writes;

          @Override
          public void write(ByteBuffer bytes) {
            int n = bytes.remaining();
            bytes.position(bytes.limit());
            // Like a direct sink: only every second write reaches the file.
            if (++writes % 2 == 0) {
              stored += 2L * n;
            }
            storedAfterWrites.add(stored);
          }

          @Override
          public void finish() {
            stored = 800;
          }

          @Override
          public long stored() {
            return stored;
          }
        };
    ByteSink tracked = a.tracking(inner, 200);
    tracked.write(ByteBuffer.allocate(100));
    assertEquals(200, a.landed(), "staged bytes are not offered");
    tracked.write(ByteBuffer.allocate(100));
    assertEquals(400, a.landed());
    tracked.finish();
    assertEquals(1000, a.landed());
    assertEquals(800, tracked.stored());
    assertFalse(a.complete(), "landing is not verifying: only the receiver finishes an arrival");
  }
}
