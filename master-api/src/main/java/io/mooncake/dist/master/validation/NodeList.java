package io.mooncake.dist.master.validation;

import java.util.ArrayList;
import java.util.List;

/** A comma-separated list of node ids in a query parameter ({@code nodes=h:p,h:p}). */
public final class NodeList {
  private NodeList() {}

  /**
   * @throws ValidationException naming {@code field} when empty, too long, invalid or repeated
   */
  public static List<String> parse(String value, String field) {
    if (value.isEmpty()) {
      throw new ValidationException(field, "query parameter " + field + " is required");
    }
    String[] parts = value.split(",", -1);
    if (parts.length > NodeIds.MAX_TARGETS) {
      throw new ValidationException(
          field, "must list at most " + NodeIds.MAX_TARGETS + " nodes, got " + parts.length);
    }
    List<String> nodes = new ArrayList<>();
    for (int i = 0; i < parts.length; i++) {
      String node = NodeIds.requireValid(parts[i], field + "[" + i + "]");
      if (nodes.contains(node)) {
        throw new ValidationException(field + "[" + i + "]", "duplicate node " + Texts.quote(node));
      }
      nodes.add(node);
    }
    return List.copyOf(nodes);
  }
}
