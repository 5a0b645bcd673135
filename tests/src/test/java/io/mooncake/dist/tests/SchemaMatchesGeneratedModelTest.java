package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.db.jooq.DefaultSchema;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.util.Map;
import java.util.TreeMap;
import org.jooq.Field;
import org.jooq.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The jOOQ model is generated from the migrations without a database; check it against a real one.
 */
class SchemaMatchesGeneratedModelTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @Test
  void everyGeneratedTableAndColumnExistsInTheMigratedDatabase() {
    Map<String, String> generated = new TreeMap<>();
    for (Table<?> t : DefaultSchema.DEFAULT_SCHEMA.getTables()) {
      for (Field<?> f : t.fields()) {
        generated.put(
            t.getName() + "." + f.getName(), f.getDataType().getSQLDataType().getTypeName());
      }
    }
    Map<String, String> real = new TreeMap<>();
    pg.database()
        .dsl()
        .resultQuery(
            """
        SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name <> 'flyway_schema_history'""")
        .fetch()
        .forEach(r -> real.put(r.get(0, String.class) + "." + r.get(1, String.class), ""));
    assertEquals(real.keySet(), generated.keySet());
  }
}
