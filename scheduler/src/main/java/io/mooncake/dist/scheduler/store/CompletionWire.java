package io.mooncake.dist.scheduler.store;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.scheduler.store.TaskQueue.Completion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Task successes as a node sends them to a master over the node link ({@code POST
 * /api/v1/nodes/completions}), which records many nodes' successes in one statement: {@code
 * {"node_id", "completions": [{"task_id", "lease_owner", "bytes_done", "result", "publish":
 * [{"object_id", "size_bytes", "digest", "file_path", "file_offset"}]}]}}. A replica's node is the
 * sender: a node can only publish its own replicas and complete tasks under its own leases.
 */
public final class CompletionWire {
  private CompletionWire() {}

  /** The body's {@code completions} array. */
  public static List<Map<String, Object>> toWire(List<Completion> completions) {
    List<Map<String, Object>> out = new ArrayList<>(completions.size());
    for (Completion c : completions) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("task_id", c.taskId());
      m.put("lease_owner", c.leaseOwner());
      m.put("bytes_done", c.bytesDone());
      m.put("result", c.resultJson());
      List<Map<String, Object>> publish = new ArrayList<>(c.publish().size());
      for (Replica r : c.publish()) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("object_id", r.objectId());
        p.put("size_bytes", r.sizeBytes());
        p.put("digest", r.digest());
        p.put("file_path", r.filePath());
        p.put("file_offset", r.fileOffset());
        publish.add(p);
      }
      m.put("publish", publish);
      out.add(m);
    }
    return out;
  }

  /**
   * Reads {@link #toWire}'s array as sent by {@code nodeId}.
   *
   * @throws IllegalArgumentException naming the field that is missing or invalid, or a lease that
   *     is not the sender's
   */
  public static List<Completion> fromWire(String nodeId, JsonNode completions) {
    if (completions == null || !completions.isArray() || completions.isEmpty()) {
      throw new IllegalArgumentException("completions: a non-empty array is required");
    }
    List<Completion> out = new ArrayList<>(completions.size());
    for (int i = 0; i < completions.size(); i++) {
      JsonNode c = completions.get(i);
      String at = "completions[" + i + "]";
      String owner = c.path("lease_owner").asText("");
      if (!owner.startsWith(nodeId + "/")) {
        throw new IllegalArgumentException(
            at + ".lease_owner: must be one of the sender's leases '" + nodeId + "/...'");
      }
      List<Replica> publish = new ArrayList<>();
      JsonNode ps = c.path("publish");
      for (int j = 0; j < ps.size(); j++) {
        JsonNode p = ps.get(j);
        String pat = at + ".publish[" + j + "]";
        publish.add(
            new Replica(
                text(p, "object_id", pat),
                nodeId,
                whole(p, "size_bytes", pat),
                text(p, "digest", pat),
                text(p, "file_path", pat),
                whole(p, "file_offset", pat)));
      }
      JsonNode result = c.get("result");
      out.add(
          new Completion(
              whole(c, "task_id", at),
              owner,
              whole(c, "bytes_done", at),
              result == null || result.isNull() ? null : result.asText(),
              publish));
    }
    return out;
  }

  private static String text(JsonNode n, String field, String at) {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual() || v.asText().isEmpty()) {
      throw new IllegalArgumentException(at + "." + field + ": a non-empty string is required");
    }
    return v.asText();
  }

  private static long whole(JsonNode n, String field, String at) {
    JsonNode v = n.get(field);
    if (v == null || !v.canConvertToLong() || !v.isIntegralNumber()) {
      throw new IllegalArgumentException(at + "." + field + ": a whole number is required");
    }
    return v.asLong();
  }
}
