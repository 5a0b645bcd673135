package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.master.RouteTable.Route;
import io.mooncake.dist.scheduler.domain.Json;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code GET /openapi} against the real routes: every documented operation is served and answers
 * one of its documented statuses with the documented media type (and, for JSON, the schema's
 * required members), and every served route is documented. The route list comes from {@link
 * MasterRouting#routes}, recorded from the same table the server is built from.
 */
class OpenApiTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  static WebServer server;
  static final HttpClient http = HttpClient.newHttpClient();
  static JsonNode doc;

  @BeforeAll
  static void start() throws Exception {
    server =
        WebServer.builder()
            .host("127.0.0.1")
            .port(0)
            .routing(r -> MasterRouting.routing(r, pg.database(), () -> {}))
            .build()
            .start();
    HttpResponse<String> res = send("GET", "/openapi", null);
    assertEquals(200, res.statusCode());
    doc = Json.MAPPER.readTree(res.body());
  }

  @AfterAll
  static void stop() {
    server.stop();
  }

  private static HttpResponse<String> send(String method, String pathAndQuery, String jsonBody)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + pathAndQuery));
    if (jsonBody != null) {
      b.header("Content-Type", "application/json");
    }
    b.method(
        method,
        jsonBody == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(jsonBody));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Every (method, path) the document describes. */
  private static List<Route> documented() {
    List<Route> out = new ArrayList<>();
    doc.get("paths")
        .properties()
        .forEach(
            path ->
                path.getValue()
                    .properties()
                    .forEach(
                        op ->
                            out.add(
                                new Route(op.getKey().toUpperCase(Locale.ROOT), path.getKey()))));
    return out;
  }

  private static JsonNode operation(Route r) {
    return doc.get("paths").get(r.path()).get(r.method().toLowerCase(Locale.ROOT));
  }

  private static JsonNode resolve(JsonNode schema) {
    if (schema.has("$ref")) {
      String ref = schema.get("$ref").asText();
      assertTrue(ref.startsWith("#/components/schemas/"), ref);
      JsonNode target =
          doc.at("/components/schemas/" + ref.substring("#/components/schemas/".length()));
      assertFalse(target.isMissingNode(), "dangling " + ref);
      return target;
    }
    return schema;
  }

  /**
   * The request the test sends for an operation: required query parameters from their examples, the
   * body example.
   */
  private static String pathAndQuery(Route r, JsonNode op) {
    StringBuilder q = new StringBuilder();
    for (JsonNode p : op.path("parameters")) {
      if (p.path("required").asBoolean() && p.get("in").asText().equals("query")) {
        q.append(q.isEmpty() ? "?" : "&")
            .append(p.get("name").asText())
            .append('=')
            .append(URLEncoder.encode(p.get("example").asText(), StandardCharsets.UTF_8));
      }
    }
    return r.path() + q;
  }

  @Test
  void theDocumentIsOpenApi3JsonDescribingParametersBodiesAndErrors() throws Exception {
    HttpResponse<String> res = send("GET", "/openapi", null);
    assertTrue(res.headers().firstValue("content-type").orElse("").startsWith("application/json"));
    assertTrue(doc.get("openapi").asText().startsWith("3."), doc.get("openapi").toString());
    for (String schema :
        List.of(
            "CreateRequest",
            "JobSnapshot",
            "Placement",
            "JobList",
            "JobSummary",
            "NodeList",
            "Error")) {
      assertTrue(doc.at("/components/schemas/" + schema).isObject(), "missing schema " + schema);
    }
    JsonNode query = operation(new Route("GET", "/api/v1/model-distribution/jobs"));
    Set<String> params = new TreeSet<>();
    query.get("parameters").forEach(p -> params.add(p.get("name").asText()));
    assertEquals(Set.of("job_id", "state", "limit", "after"), params);
    assertEquals(
        "#/components/schemas/CreateRequest",
        operation(new Route("POST", "/api/v1/model-distribution/jobs"))
            .at("/requestBody/content/application~1json/schema/$ref")
            .asText());
  }

  @Test
  void everyServedRouteIsDocumentedAndEveryDocumentedOperationIsServed() {
    Set<Route> served = new HashSet<>(MasterRouting.routes(pg.database()));
    Set<Route> described = new HashSet<>(documented());
    assertEquals(documented().size(), described.size());
    Set<Route> undocumented = new HashSet<>(served);
    undocumented.removeAll(described);
    Set<Route> unserved = new HashSet<>(described);
    unserved.removeAll(served);
    assertTrue(undocumented.isEmpty(), "served but not in /openapi: " + undocumented);
    assertTrue(unserved.isEmpty(), "in /openapi but not served: " + unserved);
  }

  @Test
  void everyDocumentedOperationAnswersADocumentedStatusWithItsMediaTypeAndSchema()
      throws Exception {
    for (Route r : documented()) {
      JsonNode op = operation(r);
      JsonNode example = op.at("/requestBody/content/application~1json/example");
      HttpResponse<String> res =
          send(
              r.method(),
              pathAndQuery(r, op),
              example.isMissingNode() ? null : Json.write(example));
      String what =
          r.method() + " " + pathAndQuery(r, op) + " -> " + res.statusCode() + " " + res.body();
      assertFalse(res.body().contains(MasterRouting.NO_ROUTE), "not routed: " + what);
      JsonNode response = op.get("responses").get(Integer.toString(res.statusCode()));
      assertTrue(response != null, "undocumented status: " + what);
      String contentType = res.headers().firstValue("content-type").orElse("");
      List<String> mediaTypes = new ArrayList<>();
      response.path("content").fieldNames().forEachRemaining(mediaTypes::add);
      assertTrue(
          mediaTypes.stream().anyMatch(contentType::startsWith),
          what + ": content type " + contentType + " is not one of " + mediaTypes);
      JsonNode schema = response.at("/content/application~1json/schema");
      if (!schema.isMissingNode()) {
        assertConforms(schema, Json.MAPPER.readTree(res.body()), what);
      }
    }
  }

  /** The body has every member the schema requires (for oneOf, some alternative's). */
  private static void assertConforms(JsonNode schema, JsonNode body, String what) {
    JsonNode s = resolve(schema);
    if (s.has("oneOf")) {
      List<String> misses = new ArrayList<>();
      for (JsonNode alternative : s.get("oneOf")) {
        List<String> missing = missing(resolve(alternative), body);
        if (missing.isEmpty()) {
          return;
        }
        misses.add(missing.toString());
      }
      throw new AssertionError(what + ": matches no oneOf alternative, missing " + misses);
    }
    assertEquals(List.of(), missing(s, body), what);
  }

  private static List<String> missing(JsonNode schema, JsonNode body) {
    List<String> missing = new ArrayList<>();
    schema
        .path("required")
        .forEach(
            f -> {
              if (!body.has(f.asText())) {
                missing.add(f.asText());
              }
            });
    return missing;
  }

  @Test
  void everySchemaReferenceResolves() {
    List<String> refs = new ArrayList<>();
    collectRefs(doc, refs);
    assertFalse(refs.isEmpty());
    refs.forEach(ref -> resolve(Json.MAPPER.createObjectNode().put("$ref", ref)));
  }

  private static void collectRefs(JsonNode node, List<String> out) {
    if (node.isObject()) {
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        if (e.getKey().equals("$ref")) {
          out.add(e.getValue().asText());
        } else {
          collectRefs(e.getValue(), out);
        }
      }
    } else if (node.isArray()) {
      node.forEach(n -> collectRefs(n, out));
    }
  }

  @Test
  void anUnservedPathOrMethodIsTheJsonNoRoute404TheWalkAboveRulesOut() throws Exception {
    for (String[] req :
        List.of(new String[] {"GET", "/api/v1/nope"}, new String[] {"DELETE", "/api/v1/nodes"})) {
      HttpResponse<String> res = send(req[0], req[1], null);
      assertEquals(404, res.statusCode());
      JsonNode body = Json.MAPPER.readTree(res.body());
      assertFalse(body.get("success").asBoolean());
      assertEquals(404, body.get("error_code").asInt());
      assertTrue(body.get("error_message").asText().startsWith(MasterRouting.NO_ROUTE), res.body());
    }
  }
}
