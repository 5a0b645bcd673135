package io.mooncake.dist.cli.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The RFC's create request from a manifest, a seed and targets. The master validates everything
 * else; only what the request is made from is checked here, so a broken manifest file is reported
 * as that file, not as a field of a request the operator never wrote.
 */
public final class CreateRequest {
  private static final List<String> MODEL_FIELDS =
      List.of("model_id", "revision", "format", "provider");

  private CreateRequest() {}

  /**
   * The request body. The seed joins the targets (first) when they do not name it, because the
   * master requires the seed to be a target; repeated targets are dropped.
   *
   * @throws IllegalArgumentException when the manifest lacks the model identity
   */
  public static ObjectNode build(
      String jobId, JsonNode manifest, String seed, List<String> targets) {
    if (!manifest.isObject()) {
      throw new IllegalArgumentException("is not a JSON object");
    }
    ObjectNode model = JsonNodeFactory.instance.objectNode();
    for (String field : MODEL_FIELDS) {
      JsonNode value = manifest.get(field);
      if (value == null || !value.isTextual() || value.asText().isEmpty()) {
        throw new IllegalArgumentException(
            "has no \"" + field + "\" (a string); is it a manifest?");
      }
      model.set(field, value);
    }
    List<String> nodes = nodes(seed, targets);
    ObjectNode req = JsonNodeFactory.instance.objectNode();
    req.put("job_id", jobId);
    req.set("model", model);
    req.set("manifest", manifest);
    req.put("seed_node_id", seed);
    nodes.forEach(req.putArray("target_nodes")::add);
    req.putObject("replica_policy").put("target_replica_count", nodes.size());
    return req;
  }

  static List<String> nodes(String seed, List<String> targets) {
    Set<String> nodes = new LinkedHashSet<>();
    List<String> given = new ArrayList<>();
    for (String t : targets) {
      if (!t.isBlank()) {
        given.add(t.strip());
      }
    }
    if (!given.contains(seed)) {
      nodes.add(seed);
    }
    nodes.addAll(given);
    return List.copyOf(nodes);
  }
}
