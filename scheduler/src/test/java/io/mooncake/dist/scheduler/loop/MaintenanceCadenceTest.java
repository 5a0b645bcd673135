package io.mooncake.dist.scheduler.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How often the lease rescue and the node grace pass run ({@link SchedulerLoop#maintainEvery}). */
class MaintenanceCadenceTest {
  @Test
  void everyTenthTickWhileThatIsWithinFiveSeconds() {
    assertEquals(Duration.ofMillis(1_000), SchedulerLoop.maintainEvery(Duration.ofMillis(100)));
    assertEquals(Duration.ofMillis(5_000), SchedulerLoop.maintainEvery(Duration.ofMillis(500)));
  }

  @Test
  void atMostFiveSecondsApartWithASlowerTick() {
    assertEquals(Duration.ofSeconds(5), SchedulerLoop.maintainEvery(Duration.ofMillis(600)));
    assertEquals(Duration.ofSeconds(5), SchedulerLoop.maintainEvery(Duration.ofSeconds(5)));
  }

  @Test
  void neverMoreOftenThanEveryTick() {
    assertEquals(Duration.ofSeconds(8), SchedulerLoop.maintainEvery(Duration.ofSeconds(8)));
  }
}
