package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PerKeyLimitTest {
  @Test
  void aKeyCountsUpToTheLimitAndAReleaseMakesRoomAgain() {
    PerKeyLimit<String> limit = new PerKeyLimit<>(2);
    assertTrue(limit.tryAcquire("a"));
    assertTrue(limit.tryAcquire("a"));
    assertFalse(limit.tryAcquire("a"));
    assertTrue(limit.tryAcquire("b"));
    limit.release("a");
    assertEquals(1, limit.count("a"));
    assertTrue(limit.tryAcquire("a"));
    assertThrows(IllegalArgumentException.class, () -> new PerKeyLimit<String>(0));
  }

  @Test
  void concurrentAcquiresNeverPassTheLimit() throws Exception {
    PerKeyLimit<String> limit = new PerKeyLimit<>(8);
    AtomicInteger taken = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      for (int i = 0; i < 1000; i++) {
        pool.execute(
            () -> {
              if (limit.tryAcquire("x")) {
                taken.incrementAndGet();
              }
            });
      }
    } finally {
      pool.shutdown();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
    assertEquals(8, taken.get());
    assertEquals(8, limit.count("x"));
  }
}
