package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class JobRequestParserTest {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  @Test
  void the_rfc_example_request_parses_verbatim_into_the_domain_records() {
    ParsedRequest parsed = JobRequestParser.parse(TestRequests.rfcBytes());
    JobRequest request = parsed.request();

    ModelRef model = new ModelRef("demo-model", "r1", "bin", "local");
    assertEquals("019d3ca8-c2e7-7d73-ab73-445f9143d1eb", request.jobId());
    assertEquals(model, request.model());
    assertEquals(model, request.manifest().model());
    assertEquals(1048576L, request.manifest().totalSizeBytes());
    assertEquals("v1", request.manifest().fileManifestVersion());
    assertEquals("127.0.0.1:25001", request.seedNodeId());
    assertEquals(List.of("127.0.0.1:25001", "127.0.0.1:25002"), request.targetNodes());
    assertEquals(2, request.targetReplicaCount());

    ManifestFile file = request.manifest().files().getFirst();
    assertEquals("model.bin", file.path());
    assertEquals(1048576L, file.sizeBytes());
    assertEquals("dummy", file.checksum());
    assertEquals("file:///tmp/mooncake-dist-test/model.bin", file.downloadUrl());
    assertEquals("artifact-demo-model-r1", file.artifactKey());
    assertEquals(
        List.of(
            "demo-model/r1/chunk-000",
            "demo-model/r1/chunk-001",
            "demo-model/r1/chunk-002",
            "demo-model/r1/chunk-003"),
        file.objectIds());
    assertEquals(new ChunkLayout(262144L, 4, "demo-model/r1"), file.chunkLayout());

    assertEquals(64, parsed.canonicalSha256().length());
    assertTrue(parsed.canonicalSha256().matches("[0-9a-f]{64}"));
    assertEquals("demo-model", parsed.json().path("model").path("model_id").asText());
  }

  @Test
  void the_digest_ignores_key_order_and_whitespace() throws Exception {
    ObjectNode original = TestRequests.rfc();
    JsonNode reversed = reverseKeys(original);
    byte[] pretty =
        TestRequests.json(reversed.toString())
            .toPrettyString()
            .replace("\n", "\r\n\t ")
            .getBytes(StandardCharsets.UTF_8);

    String digest = JobRequestParser.parse(TestRequests.rfcBytes()).canonicalSha256();
    assertNotEquals(original.toString(), reversed.toString());
    assertEquals(digest, JobRequestParser.parse(TestRequests.bytes(reversed)).canonicalSha256());
    assertEquals(digest, JobRequestParser.parse(pretty).canonicalSha256());
  }

  @Test
  void the_digest_treats_escaped_and_literal_unicode_as_the_same_string() {
    ObjectNode literal = TestRequests.set(TestRequests.rfc(), "label", NODES.textNode("caf\u00e9"));
    String escaped = literal.toString().replace("caf\u00e9", "caf\\u00e9");
    assertEquals(
        JobRequestParser.parse(TestRequests.bytes(literal)).canonicalSha256(),
        JobRequestParser.parse(escaped.getBytes(StandardCharsets.UTF_8)).canonicalSha256());
  }

  @Test
  void the_digest_changes_when_any_value_changes() {
    String digest = JobRequestParser.parse(TestRequests.rfcBytes()).canonicalSha256();
    ObjectNode otherTarget =
        TestRequests.set(TestRequests.rfc(), "target_nodes[1]", NODES.textNode("127.0.0.1:25003"));
    ObjectNode otherJob = TestRequests.set(TestRequests.rfc(), "job_id", NODES.textNode("job-2"));
    ObjectNode swappedTargets = TestRequests.rfc();
    ArrayNode targets = (ArrayNode) swappedTargets.get("target_nodes");
    JsonNode first = targets.remove(0);
    targets.add(first);

    assertNotEquals(
        digest, JobRequestParser.parse(TestRequests.bytes(otherTarget)).canonicalSha256());
    assertNotEquals(digest, JobRequestParser.parse(TestRequests.bytes(otherJob)).canonicalSha256());
    assertNotEquals(
        digest, JobRequestParser.parse(TestRequests.bytes(swappedTargets)).canonicalSha256());
  }

  @Test
  void unknown_fields_are_ignored_but_still_count_towards_the_digest() {
    ObjectNode extended =
        TestRequests.set(TestRequests.rfc(), "priority", NODES.objectNode().put("level", 1.5));
    TestRequests.set(extended, "manifest.files[0].mode", NODES.textNode("0644"));
    ParsedRequest parsed = JobRequestParser.parse(TestRequests.bytes(extended));
    assertEquals(JobRequestParser.parse(TestRequests.rfcBytes()).request(), parsed.request());
    assertNotEquals(
        JobRequestParser.parse(TestRequests.rfcBytes()).canonicalSha256(),
        parsed.canonicalSha256());
  }

  @Test
  void fallback_seeds_are_parsed_in_order_and_count_towards_the_digest() {
    ObjectNode withFallback =
        TestRequests.set(
            TestRequests.rfc(), "fallback_seeds", NODES.arrayNode().add("127.0.0.1:25002"));
    ParsedRequest parsed = JobRequestParser.parse(TestRequests.bytes(withFallback));
    assertEquals(List.of("127.0.0.1:25002"), parsed.request().fallbackSeeds());
    assertNotEquals(
        JobRequestParser.parse(TestRequests.bytes(TestRequests.rfc())).canonicalSha256(),
        parsed.canonicalSha256(),
        "a re-POST with other fallback seeds is another request (409)");
    for (JsonNode none : List.of(NODES.nullNode(), NODES.arrayNode())) {
      ObjectNode request = TestRequests.set(TestRequests.rfc(), "fallback_seeds", none);
      assertEquals(
          List.of(), JobRequestParser.parse(TestRequests.bytes(request)).request().fallbackSeeds());
    }
    assertEquals(
        List.of(), JobRequestParser.parse(TestRequests.rfcBytes()).request().fallbackSeeds());
  }

  @Test
  void an_absent_or_null_replica_policy_leaves_the_replica_count_unset() {
    ObjectNode absent = TestRequests.set(TestRequests.rfc(), "replica_policy", null);
    ObjectNode nullPolicy =
        TestRequests.set(TestRequests.rfc(), "replica_policy", NODES.nullNode());
    ObjectNode emptyPolicy =
        TestRequests.set(TestRequests.rfc(), "replica_policy", NODES.objectNode());
    assertNull(JobRequestParser.parse(TestRequests.bytes(absent)).request().targetReplicaCount());
    assertNull(
        JobRequestParser.parse(TestRequests.bytes(nullPolicy)).request().targetReplicaCount());
    assertNull(
        JobRequestParser.parse(TestRequests.bytes(emptyPolicy)).request().targetReplicaCount());
  }

  @Test
  void every_supported_download_source_is_accepted() {
    for (String url :
        List.of(
            "/srv/models/model.bin",
            "file://localhost/srv/model.bin",
            "https://hub.example.com/demo/model.bin?sig=abc",
            "http://10.0.0.1:8080/model.bin")) {
      ObjectNode request =
          TestRequests.set(
              TestRequests.rfc(), "manifest.files[0].download_url", NODES.textNode(url));
      assertEquals(
          url,
          JobRequestParser.parse(TestRequests.bytes(request))
              .request()
              .manifest()
              .files()
              .getFirst()
              .downloadUrl());
    }
  }

  @Test
  void nested_model_ids_sha256_checksums_and_empty_files_are_accepted() {
    ObjectNode request = TestRequests.rfc();
    for (String path : List.of("model.model_id", "manifest.model_id")) {
      TestRequests.set(request, path, NODES.textNode("meta-llama/Llama-3.1_8B"));
    }
    TestRequests.set(
        request, "manifest.files[0].checksum", NODES.textNode("sha256:" + "ab".repeat(32)));
    ObjectNode empty = TestRequests.twoFiles();
    ObjectNode second = (ObjectNode) empty.at("/manifest/files/1");
    second.put("size_bytes", 0).put("path", "config/empty.json");
    ((ObjectNode) second.get("chunk_layout")).put("chunk_count", 0).put("object_prefix", "");
    ((ObjectNode) second.get("artifact")).putArray("object_ids");
    ((ObjectNode) empty.get("manifest")).put("total_size_bytes", 1048576);

    assertEquals(
        "meta-llama/Llama-3.1_8B",
        JobRequestParser.parse(TestRequests.bytes(request)).request().model().modelId());
    ManifestFile parsedEmpty =
        JobRequestParser.parse(TestRequests.bytes(empty)).request().manifest().files().get(1);
    assertEquals(0, parsedEmpty.chunkLayout().chunkCount());
    assertTrue(parsedEmpty.objectIds().isEmpty());
  }

  @Test
  void a_nesting_depth_at_the_limit_is_accepted() {
    ObjectNode request = TestRequests.rfc();
    // The root object is level 1, so "deep" itself plus 30 nested arrays reach exactly 32.
    String deep =
        "[".repeat(JobRequestParser.MAX_NESTING_DEPTH - 1)
            + "]".repeat(JobRequestParser.MAX_NESTING_DEPTH - 1);
    String body = request.toString().replaceFirst("\\{", "{\"deep\":" + deep + ",");
    JobRequestParser.parse(body.getBytes(StandardCharsets.UTF_8));
  }

  /** The same tree with every object's members in reverse order. */
  private static JsonNode reverseKeys(JsonNode node) {
    if (node.isObject()) {
      List<Map.Entry<String, JsonNode>> entries = new ArrayList<>(node.properties());
      ObjectNode out = NODES.objectNode();
      for (Map.Entry<String, JsonNode> e : entries.reversed()) {
        out.set(e.getKey(), reverseKeys(e.getValue()));
      }
      return out;
    }
    if (node.isArray()) {
      ArrayNode out = NODES.arrayNode();
      node.forEach(element -> out.add(reverseKeys(element)));
      return out;
    }
    return node;
  }
}
