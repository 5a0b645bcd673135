package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ModelRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses and validates the body of {@code POST /api/v1/model-distribution/jobs}.
 *
 * <p>Fields are checked in the order the RFC's example request lists them ({@code job_id}, {@code
 * model}, {@code manifest}, {@code seed_node_id}, {@code target_nodes}, {@code replica_policy},
 * then the extension {@code fallback_seeds}), each object's members likewise, and rules relating
 * several fields right after the last of them; the first problem is reported, so one body always
 * yields the same error. Unknown members are ignored so newer callers can talk to this server;
 * known ones must have exactly the documented JSON type.
 */
public final class JobRequestParser {
  /** Largest accepted body; a 100k-file manifest fits with room to spare. */
  public static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

  /** Deepest accepted nesting; the format needs 5, the rest is headroom for extensions. */
  public static final int MAX_NESTING_DEPTH = 32;

  private JobRequestParser() {}

  /**
   * Parses and validates {@code body}.
   *
   * @throws ValidationException on the first problem found; never any other exception, for any
   *     input
   */
  public static ParsedRequest parse(byte[] body) {
    JsonNode json = JsonBody.read(body);
    Fields root = Fields.object(json, "");

    String jobId = Identifiers.jobId(root.requiredString("job_id"), root.path("job_id"));
    ModelRef model = ModelRefParser.parse(root.requiredObject("model"));
    Manifest manifest = ManifestParser.parse(root.requiredObject("manifest"), model);

    String seedField = root.path("seed_node_id");
    String seed = NodeIds.requireValid(root.requiredString("seed_node_id"), seedField);
    List<String> targets =
        NodeIds.targets(root.requiredArray("target_nodes"), root.path("target_nodes"));
    // The seed downloads and then holds a copy, so it has to be one of the nodes being staged.
    if (!targets.contains(seed)) {
      throw new ValidationException(
          seedField, "must be one of target_nodes, got " + Texts.quote(seed));
    }
    Integer replicas = targetReplicaCount(root, targets.size());
    List<String> fallbacks = fallbackSeeds(root, seed, targets);

    JobRequest request = new JobRequest(jobId, model, manifest, seed, targets, replicas, fallbacks);
    return new ParsedRequest(request, CanonicalJson.sha256Hex(json), json);
  }

  /**
   * {@code fallback_seeds} (an extension beside the RFC's fields): targets that take over as seed,
   * in order, when the seed's placement fails. Absent, {@code null} or empty: none, and a seed
   * failure fails the job as the RFC says. Each must be one of {@code target_nodes}, not the seed,
   * and listed once.
   */
  private static List<String> fallbackSeeds(Fields root, String seed, List<String> targets) {
    ArrayNode array = root.optionalArray("fallback_seeds");
    if (array == null) {
      return List.of();
    }
    String field = root.path("fallback_seeds");
    if (array.size() > targets.size()) {
      throw new ValidationException(
          field,
          "must have at most "
              + targets.size()
              + " entries (the number of target_nodes), got "
              + array.size());
    }
    List<String> out = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      String element = Fields.index(field, i);
      String node = NodeIds.requireValid(Fields.string(array.get(i), element), element);
      if (!targets.contains(node)) {
        throw new ValidationException(
            element, "must be one of target_nodes, got " + Texts.quote(node));
      }
      if (node.equals(seed)) {
        throw new ValidationException(
            element, "must not be the seed_node_id " + Texts.quote(seed) + " itself");
      }
      int first = out.indexOf(node);
      if (first >= 0) {
        throw new ValidationException(
            element,
            "duplicate node "
                + Texts.quote(node)
                + " (same as "
                + Fields.index(field, first)
                + ")");
      }
      out.add(node);
    }
    return out;
  }

  /** {@code replica_policy.target_replica_count}, or {@code null} when not given. */
  private static Integer targetReplicaCount(Fields root, int targetCount) {
    Fields policy = root.optionalObject("replica_policy");
    if (policy == null) {
      return null;
    }
    Long count = policy.optionalLong("target_replica_count");
    if (count == null) {
      return null;
    }
    String field = policy.path("target_replica_count");
    if (count < 1 || count > targetCount) {
      throw new ValidationException(
          field,
          "must be between 1 and " + targetCount + " (the number of target_nodes), got " + count);
    }
    return count.intValue();
  }
}
