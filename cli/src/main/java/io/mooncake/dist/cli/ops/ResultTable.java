package io.mooncake.dist.cli.ops;

import io.mooncake.dist.cli.format.Table;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.types.Interval;
import org.jooq.types.YearToSecond;

/**
 * A report's rows as a {@link Table}: the column names as headers, numeric columns right-aligned,
 * NULL as an empty cell and intervals as psql shows them.
 */
final class ResultTable {
  private ResultTable() {}

  static Table of(Result<Record> result) {
    Field<?>[] fields = result.fields();
    List<String> headers = new ArrayList<>(fields.length);
    for (Field<?> f : fields) {
      headers.add(f.getName());
    }
    Table table = Table.withHeaders(headers);
    for (int i = 0; i < fields.length; i++) {
      // jOOQ's intervals are Numbers too, but psql (which operators compare with) left-aligns them.
      Class<?> type = fields[i].getType();
      if (Number.class.isAssignableFrom(type) && !Interval.class.isAssignableFrom(type)) {
        table.alignRight(i);
      }
    }
    for (Record r : result) {
      List<String> cells = new ArrayList<>(fields.length);
      for (int i = 0; i < fields.length; i++) {
        cells.add(cell(r.get(i)));
      }
      table.row(cells);
    }
    return table;
  }

  static String cell(Object value) {
    if (value == null) {
      return "";
    }
    // 12.50 stays 12.50 rather than 1.25E+1.
    if (value instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (value instanceof YearToSecond interval) {
      return IntervalText.format(interval);
    }
    return value.toString();
  }
}
