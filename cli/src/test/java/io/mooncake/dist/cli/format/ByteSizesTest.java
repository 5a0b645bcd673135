package io.mooncake.dist.cli.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ByteSizesTest {

  @Test
  void plainNumbersAreBytes() {
    assertEquals(1_048_576L, ByteSizes.parse("1048576"));
    assertEquals(0L, ByteSizes.parse("0"));
  }

  @Test
  void everyUnitSpellingIsBinary() {
    assertEquals(64L << 20, ByteSizes.parse("64MiB"));
    assertEquals(16L << 20, ByteSizes.parse("16M"));
    assertEquals(16L << 20, ByteSizes.parse("16MB"));
    assertEquals(512L << 10, ByteSizes.parse("512k"));
    assertEquals(2L << 30, ByteSizes.parse("2 GiB"));
    assertEquals(1L << 40, ByteSizes.parse("1T"));
    assertEquals(7L, ByteSizes.parse("7B"));
  }

  @Test
  void negativeSizesParseSoTheCallerCanSayWhyTheyAreWrong() {
    assertEquals(-1L, ByteSizes.parse("-1"));
  }

  @Test
  void garbageUnknownUnitsAndOverflowAreRejectedNamingTheText() {
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("lots"))
            .getMessage()
            .contains("'lots'"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("3X"))
            .getMessage()
            .contains("unknown unit"));
    assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("1.5M"));
    assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse("9999999999T"));
    assertThrows(IllegalArgumentException.class, () -> ByteSizes.parse(""));
  }

  @Test
  void formattingUsesBytesBelowOneKibAndOneDecimalAbove() {
    assertEquals("0 B", ByteSizes.format(0));
    assertEquals("1023 B", ByteSizes.format(1023));
    assertEquals("1.0 KiB", ByteSizes.format(1024));
    assertEquals("1.5 MiB", ByteSizes.format(3L << 19));
    assertEquals("64.0 GiB", ByteSizes.format(64L << 30));
  }

  @Test
  void formattingNeverShowsTenTwentyFourOfAUnit() {
    assertEquals("1.0 GiB", ByteSizes.format((1L << 30) - 1));
  }
}
