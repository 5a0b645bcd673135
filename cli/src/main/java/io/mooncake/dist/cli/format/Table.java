package io.mooncake.dist.cli.format;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table: a header row, columns two spaces apart, each as wide as its widest cell, text
 * left-aligned and numbers right-aligned. Control characters in cells (a multi-line error message)
 * become spaces so one row stays one line.
 */
public final class Table {
  /** Which side of its column a cell sticks to. */
  public enum Align {
    LEFT,
    RIGHT
  }

  private static final String GAP = "  ";

  private final List<String> headers;
  private final Align[] aligns;
  private final List<List<String>> rows = new ArrayList<>();

  private Table(List<String> headers) {
    this.headers = headers;
    this.aligns = new Align[headers.size()];
    Arrays.fill(aligns, Align.LEFT);
  }

  /**
   * A table with these column headers, every column left-aligned until {@link #alignRight} says
   * otherwise.
   */
  public static Table withHeaders(String... headers) {
    return withHeaders(List.of(headers));
  }

  /** As {@link #withHeaders(String...)}. */
  public static Table withHeaders(List<String> headers) {
    if (headers.isEmpty()) {
      throw new IllegalArgumentException("a table needs at least one column");
    }
    return new Table(List.copyOf(headers));
  }

  /** Right-aligns the given columns (0-based), header included. */
  public Table alignRight(int... columns) {
    for (int c : columns) {
      aligns[c] = Align.RIGHT;
    }
    return this;
  }

  /** Adds a row; {@code null} cells print as empty. */
  public Table row(Object... cells) {
    return row(Arrays.asList(cells));
  }

  /** As {@link #row(Object...)}. */
  public Table row(List<?> cells) {
    if (cells.size() != headers.size()) {
      throw new IllegalArgumentException(
          "row has " + cells.size() + " cells, table has " + headers.size() + " columns");
    }
    List<String> row = new ArrayList<>(cells.size());
    for (Object cell : cells) {
      row.add(clean(cell == null ? "" : cell.toString()));
    }
    rows.add(row);
    return this;
  }

  /** Number of data rows, header excluded. */
  public int size() {
    return rows.size();
  }

  /** The header line, then one line per row, without trailing spaces. */
  public List<String> lines() {
    int[] widths = new int[headers.size()];
    measure(headers, widths);
    for (List<String> row : rows) {
      measure(row, widths);
    }
    List<String> out = new ArrayList<>(rows.size() + 1);
    out.add(line(headers, widths));
    for (List<String> row : rows) {
      out.add(line(row, widths));
    }
    return out;
  }

  /** {@link #lines()} joined, each ending in a newline. */
  public String render() {
    StringBuilder sb = new StringBuilder();
    for (String line : lines()) {
      sb.append(line).append('\n');
    }
    return sb.toString();
  }

  private static void measure(List<String> cells, int[] widths) {
    for (int i = 0; i < cells.size(); i++) {
      widths[i] = Math.max(widths[i], width(cells.get(i)));
    }
  }

  private String line(List<String> cells, int[] widths) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      if (i > 0) {
        sb.append(GAP);
      }
      String cell = cells.get(i);
      String pad = " ".repeat(widths[i] - width(cell));
      sb.append(aligns[i] == Align.RIGHT ? pad + cell : cell + pad);
    }
    return sb.toString().stripTrailing();
  }

  // Code points, not chars: a model path with an emoji must not push later columns right.
  private static int width(String s) {
    return s.codePointCount(0, s.length());
  }

  private static String clean(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    s.codePoints().forEach(cp -> sb.appendCodePoint(Character.isISOControl(cp) ? ' ' : cp));
    return sb.toString();
  }
}
