package io.mooncake.dist.scheduler.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {
  @Test
  void aFamilyIsHelpThenTypeThenItsSamples() {
    String text =
        new PrometheusText()
            .family("x_total", "counter", "Things\\done\nso far.")
            .sample("x_total", List.of("a", "1", "b", "2"), 3)
            .sample("x_total", List.of(), 0.25)
            .text();
    assertEquals(
        """
        # HELP x_total Things\\\\done\\nso far.
        # TYPE x_total counter
        x_total{a="1",b="2"} 3
        x_total 0.25
        """,
        text);
  }

  @Test
  void labelValuesEscapeBackslashQuoteAndLineFeedOnly() {
    assertEquals("a\\\\b\\\"c\\nd\te", PrometheusText.escapeLabel("a\\b\"c\nd\te"));
  }

  @Test
  void integralValuesHaveNoFractionAndOthersKeepIt() {
    assertEquals("42", PrometheusText.number(42));
    assertEquals("0", PrometheusText.number(0));
    assertEquals("1.5", PrometheusText.number(1.5));
    assertEquals("1.0E20", PrometheusText.number(1e20));
  }
}
