package io.mooncake.dist.cli.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class TableTest {

  @Test
  void columnsAreAsWideAsTheirWidestCellAndTwoSpacesApart() {
    Table t =
        Table.withHeaders("NODE", "STATE").row("127.0.0.1:25001", "staged").row("n2", "acquiring");
    assertEquals(
        List.of("NODE             STATE", "127.0.0.1:25001  staged", "n2               acquiring"),
        t.lines());
  }

  @Test
  void rightAlignedColumnsPadOnTheLeftHeaderIncluded() {
    Table t =
        Table.withHeaders("node", "tasks", "state")
            .alignRight(1)
            .row("a", 7, "pending")
            .row("b", 1234, "failed");
    assertEquals(
        List.of("node  tasks  state", "a         7  pending", "b      1234  failed"), t.lines());
  }

  @Test
  void linesCarryNoTrailingSpaces() {
    Table t = Table.withHeaders("A", "B").row("long value", "");
    assertEquals("A           B", t.lines().get(0));
    assertEquals("long value", t.lines().get(1));
  }

  @Test
  void nullCellsAreEmptyAndControlCharactersBecomeSpaces() {
    Table t = Table.withHeaders("X", "ERR").row(null, "line one\nline two\ttabbed");
    assertEquals("   line one line two tabbed", t.lines().get(1));
  }

  @Test
  void widthCountsCodePointsNotChars() {
    Table t = Table.withHeaders("P", "Q").row("\uD83D\uDE00", "x").row("ab", "y");
    assertEquals("\uD83D\uDE00   x", t.lines().get(1));
  }

  @Test
  void aRowOfTheWrongWidthIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Table.withHeaders("A", "B").row("only one"));
  }

  @Test
  void renderEndsEveryLineWithANewline() {
    assertEquals("A\n1\n", Table.withHeaders("A").row(1).render());
  }
}
