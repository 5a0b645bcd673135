package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A master with a source allowlist refuses other sources at validation and writes nothing. */
class SourcePolicyApiTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @Test
  void aSourceOutsideTheAllowlistIsRefusedWith400NamingTheFieldAndNothingIsWritten() {
    WebServer server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(
                r ->
                    MasterRouting.routing(
                        r, pg.database(), () -> {}, SourcePolicy.parse("file:///models/")))
            .build()
            .start();
    try {
      Api api = new Api("http://127.0.0.1:" + server.port());
      Api.Reply r = api.post("/api/v1/model-distribution/jobs", Requests.rfcExample());
      assertEquals(400, r.status(), String.valueOf(r.json()));
      assertEquals("manifest.files[0].download_url", r.json().get("field").asText());
      assertTrue(
          r.json().get("error_message").asText().contains("not allowed"), r.json().toString());
      assertEquals(0, pg.database().dsl().fetchCount(JOBS));
    } finally {
      server.stop();
    }
  }

  @Test
  void theMasterRefusesAMalformedAllowlistAtStart() {
    Processes.Run run =
        Processes.run("mooncake_master", "--allowed-sources", "ftp://x/", "--db-url", pg.url());
    assertEquals(2, run.exitCode(), run.output());
    assertTrue(run.output().contains("--allowed-sources"), run.output());
  }
}
