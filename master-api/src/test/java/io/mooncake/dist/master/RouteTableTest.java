package io.mooncake.dist.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.mooncake.dist.master.RouteTable.Route;
import java.util.List;
import org.junit.jupiter.api.Test;

class RouteTableTest {
  private static final HttpService NESTED =
      rules ->
          rules.get("/", (req, res) -> res.send()).post("/things/cancel", (req, res) -> res.send());

  @Test
  void routesAreRecordedWithTheirPrefixesInTableOrder() {
    List<Route> routes =
        RouteTable.record(
            rules ->
                rules
                    .get("/health", (req, res) -> res.send())
                    .register("/api/v1/widgets", NESTED)
                    .register(r -> r.get("/", (req, res) -> res.send())));
    assertEquals(
        List.of(
            new Route("GET", "/health"),
            new Route("GET", "/api/v1/widgets"),
            new Route("POST", "/api/v1/widgets/things/cancel"),
            new Route("GET", "/")),
        routes);
  }

  @Test
  void aRuleTheTableCannotListFailsTheRecordingInsteadOfBeingMissed() {
    assertThrows(
        UnsupportedOperationException.class,
        () -> RouteTable.record(rules -> rules.put("/x", (req, res) -> res.send())));
    assertThrows(
        UnsupportedOperationException.class,
        () -> RouteTable.record(rules -> rules.get("/items/{id}", (req, res) -> res.send())));
    assertThrows(
        UnsupportedOperationException.class,
        () -> RouteTable.record((HttpRules rules) -> rules.any((req, res) -> res.send())));
  }
}
