package io.mooncake.dist.cli.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class CreateRequestTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theSeedJoinsTheTargetsFirstWhenTheyDoNotNameIt() {
    assertEquals(List.of("s:1", "a:1", "b:1"), CreateRequest.nodes("s:1", List.of("a:1", "b:1")));
  }

  @Test
  void targetsKeepTheirOrderWithoutRepeatsWhenTheyNameTheSeed() {
    assertEquals(
        List.of("a:1", "s:1"), CreateRequest.nodes("s:1", List.of("a:1", "s:1", "a:1", " ")));
  }

  @Test
  void theRequestCarriesTheModelFromTheManifestAndOneReplicaPerTarget() throws Exception {
    JsonNode manifest =
        JSON.readTree(
            """
        {"model_id": "m", "revision": "r1", "format": "bin", "provider": "local", "files": []}""");
    JsonNode req = CreateRequest.build("job-1", manifest, "s:1", List.of("a:1"));
    assertEquals("job-1", req.get("job_id").asText());
    assertEquals(
        JSON.readTree(
            """
        {"model_id": "m", "revision": "r1", "format": "bin", "provider": "local"}"""),
        req.get("model"));
    assertEquals(manifest, req.get("manifest"));
    assertEquals("s:1", req.get("seed_node_id").asText());
    assertEquals(JSON.readTree("[\"s:1\", \"a:1\"]"), req.get("target_nodes"));
    assertEquals(2, req.get("replica_policy").get("target_replica_count").asInt());
  }

  @Test
  void aFileWithoutTheModelIdentityIsNotAManifest() throws Exception {
    assertThrows(
        IllegalArgumentException.class,
        () -> CreateRequest.build("j", JSON.readTree("{\"model_id\": \"m\"}"), "s:1", List.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> CreateRequest.build("j", JSON.readTree("[1, 2]"), "s:1", List.of()));
  }
}
