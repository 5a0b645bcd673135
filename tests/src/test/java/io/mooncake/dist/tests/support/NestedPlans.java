package io.mooncake.dist.tests.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.domain.Json;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;

/**
 * The plan a statement nested in a function (PL/pgSQL's own queries) runs with, as {@code
 * auto_explain} reports it: the plan Postgres really uses, a generic one where the function forces
 * it, which an EXPLAIN of the calling statement never shows.
 */
public final class NestedPlans {
  private NestedPlans() {}

  /**
   * Runs {@code sql} in a transaction that is rolled back, on a connection whose cached plans are
   * discarded first, and answers the JSON plan of the first statement whose text contains {@code
   * marker}.
   */
  public static JsonNode planOf(DSLContext dsl, String sql, String marker) {
    return dsl.connectionResult(
        c -> {
          c.setAutoCommit(false);
          try (Statement st = c.createStatement()) {
            st.execute("DISCARD PLANS");
            st.execute("LOAD 'auto_explain'");
            st.execute("SET LOCAL auto_explain.log_min_duration = 0");
            st.execute("SET LOCAL auto_explain.log_nested_statements = on");
            st.execute("SET LOCAL auto_explain.log_format = 'json'");
            st.execute("SET LOCAL auto_explain.log_level = 'notice'");
            st.execute("SET LOCAL client_min_messages = 'notice'");
            st.executeQuery(sql).close();
            List<String> messages = new ArrayList<>();
            for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
              messages.add(w.getMessage());
            }
            for (String message : messages) {
              int at = message.indexOf('{');
              if (at >= 0) {
                JsonNode logged = Json.read(message.substring(at), JsonNode.class);
                if (logged.path("Query Text").asText().contains(marker)) {
                  return logged.get("Plan");
                }
              }
            }
            throw new AssertionError(
                "auto_explain reported no plan of a statement with '" + marker + "': " + messages);
          } finally {
            c.rollback();
            c.setAutoCommit(true);
          }
        });
  }
}
