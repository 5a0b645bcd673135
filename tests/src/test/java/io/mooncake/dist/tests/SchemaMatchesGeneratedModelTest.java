package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.db.jooq.DefaultSchema;
import io.mooncake.dist.scheduler.domain.JobStatus;
import io.mooncake.dist.scheduler.domain.PlacementState;
import io.mooncake.dist.scheduler.domain.TaskState;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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

  /**
   * The Java enums name the states; the SQL in the stores spells them as literals. The schema's
   * CHECK constraints are where SQL says which ones exist, so the two sets must be the same.
   */
  @Test
  void theSchemaAllowsExactlyTheStatesTheEnumsName() {
    assertEquals(
        wires(Arrays.stream(TaskState.values()).map(TaskState::wire)),
        allowed("tasks_state_check"));
    assertEquals(
        wires(Arrays.stream(PlacementState.values()).map(PlacementState::wire)),
        allowed("placements_state_check"));
    assertEquals(
        wires(Arrays.stream(JobStatus.values()).map(JobStatus::wire)),
        allowed("jobs_status_check"));
  }

  private static Set<String> wires(Stream<String> values) {
    return values.collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> allowed(String constraint) {
    String definition =
        pg.database()
            .dsl()
            .fetchValue(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = ?", constraint)
            .toString();
    Set<String> values = new TreeSet<>();
    Matcher m = Pattern.compile("'([a-z_]+)'").matcher(definition);
    while (m.find()) {
      values.add(m.group(1));
    }
    return values;
  }
}
