package io.mooncake.dist.cli.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ProgressBarTest {

  @Test
  void theBarFillsInProportionBetweenBrackets() {
    assertEquals("[..........]", ProgressBar.render(0, 100, 10));
    assertEquals("[###.......]", ProgressBar.render(37, 100, 10));
    assertEquals("[##########]", ProgressBar.render(100, 100, 10));
  }

  @Test
  void aCellFillsOnlyOnceItsWholeShareIsDone() {
    assertEquals("[#########.]", ProgressBar.render(99, 100, 10));
  }

  @Test
  void overshootAndNothingToDoShowAFullBar() {
    assertEquals("[#####]", ProgressBar.render(150, 100, 5));
    assertEquals("[#####]", ProgressBar.render(0, 0, 5));
  }

  @Test
  void percentHasOneDecimal() {
    assertEquals("0.0%", ProgressBar.percent(0, 1 << 20));
    assertEquals("37.5%", ProgressBar.percent(384, 1024));
    assertEquals("100.0%", ProgressBar.percent(1024, 1024));
  }

  @Test
  void percentReadsOneHundredOnlyWhenEveryByteIsThere() {
    assertEquals("99.9%", ProgressBar.percent(99_999, 100_000));
  }
}
