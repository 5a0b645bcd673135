package io.mooncake.dist.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.db.Database;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Clients compare the database with {@link Database#SCHEMA_VERSION} instead of running Flyway. */
class SchemaVersionTest {
  @Test
  void schemaVersionIsTheNewestMigration() throws IOException {
    Pattern name = Pattern.compile("V(\\d+)__.*\\.sql");
    int newest = 0;
    try (Stream<Path> files = Files.list(Path.of("..", "db", "migrations"))) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Matcher m = name.matcher(f.getFileName().toString());
        if (m.matches()) {
          newest = Math.max(newest, Integer.parseInt(m.group(1)));
        }
      }
    }
    assertEquals(
        newest, Database.SCHEMA_VERSION, "Database.SCHEMA_VERSION must name the newest migration");
  }
}
