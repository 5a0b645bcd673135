package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class SeedSlotTest {
  @Test
  void oneSeedPullAtATime() {
    SeedSlot slot = new SeedSlot(1);
    assertFalse(slot.busy());
    assertTrue(slot.tryTake());
    assertTrue(slot.busy());
    assertFalse(slot.tryTake(), "the node already pulls from the seed");
    assertEquals(1, slot.inUse());
    slot.release();
    assertFalse(slot.busy());
    assertTrue(slot.tryTake());
  }

  @Test
  void releasingAFreeSlotIsABug() {
    SeedSlot slot = new SeedSlot(1);
    assertThrows(IllegalStateException.class, slot::release);
    assertThrows(IllegalArgumentException.class, () -> new SeedSlot(0));
  }

  @Test
  void oneCopyOfTheNodeWaitsInPlaceTheOthersGoBackToTheQueue() {
    SeedSlot slot = new SeedSlot(1);
    assertTrue(slot.becomeWaiter());
    assertFalse(slot.becomeWaiter(), "a second copy is deferred as before");
    slot.endWait();
    assertTrue(slot.becomeWaiter(), "once the first runs, the next may wait");
  }

  @Test
  void theWaiterWakesWhenTheSeedPullEnds() throws Exception {
    SeedSlot slot = new SeedSlot(1);
    assertTrue(slot.tryTake());
    CompletableFuture<Boolean> waited =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return slot.awaitFree(Duration.ofSeconds(30));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    assertThrows(
        TimeoutException.class,
        () -> waited.get(50, TimeUnit.MILLISECONDS),
        "no wake-up while the node still pulls");
    long released = System.nanoTime();
    slot.release();
    assertTrue(waited.get(5, TimeUnit.SECONDS));
    assertTrue(
        System.nanoTime() - released < TimeUnit.SECONDS.toNanos(5),
        "woken by the release, not by the 30 s timeout");
  }

  @Test
  void aWaitEndsAfterItsStepWhileTheSlotStaysTaken() throws Exception {
    SeedSlot slot = new SeedSlot(1);
    assertTrue(slot.awaitFree(Duration.ofMillis(10)), "free at once");
    assertTrue(slot.tryTake());
    long t0 = System.nanoTime();
    assertFalse(slot.awaitFree(Duration.ofMillis(30)));
    assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(30));
  }

  @Test
  void aCopyWaitsInPlaceForAtMostMaxWait() {
    long max = SeedSlot.MAX_WAIT.toNanos();
    assertTrue(SeedSlot.keepsWaiting(0));
    assertTrue(SeedSlot.keepsWaiting(max - 1));
    assertFalse(SeedSlot.keepsWaiting(max), "then deferred like any other copy");
  }
}
