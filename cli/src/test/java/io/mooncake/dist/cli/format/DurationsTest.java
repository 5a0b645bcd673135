package io.mooncake.dist.cli.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void unitsAndBareSecondsParse() {
    assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
    assertEquals(Duration.ofSeconds(1), Durations.parse("1s"));
    assertEquals(Duration.ofMillis(1500), Durations.parse("1.5s"));
    assertEquals(Duration.ofMinutes(2), Durations.parse("2m"));
    assertEquals(Duration.ofHours(1), Durations.parse("1h"));
    assertEquals(Duration.ofSeconds(3), Durations.parse("3"));
  }

  @Test
  void negativeAndUnknownDurationsAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("-1s"));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("1 fortnight"));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("PT1S"));
  }

  @Test
  void formattingShowsTheTwoLargestUnits() {
    assertEquals("0s", Durations.format(Duration.ZERO));
    assertEquals("7s", Durations.format(Duration.ofSeconds(7)));
    assertEquals("5m03s", Durations.format(Duration.ofSeconds(303)));
    assertEquals("1h02m", Durations.format(Duration.ofSeconds(3720 + 59)));
    assertEquals("3d04h", Durations.format(Duration.ofHours(76)));
  }

  @Test
  void aFractionOfASecondLeftRoundsUpSoItNeverReadsZero() {
    assertEquals("1s", Durations.format(Duration.ofMillis(200)));
  }
}
