package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.mooncake.dist.scheduler.domain.NodeId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Node ids ({@code host:port}): the seed and the target list. */
final class NodeIds {
  static final int MAX_TARGETS = 10_000;

  private NodeIds() {}

  static String requireValid(String value, String field) {
    NodeId parsed;
    try {
      parsed = NodeId.parse(value);
    } catch (IllegalArgumentException e) {
      throw new ValidationException(
          field, "must be a host:port node id: " + Texts.printable(String.valueOf(e.getMessage())));
    }
    // "h:080" and "h:80" name one node; insisting on the canonical spelling keeps string equality
    // (used for duplicate detection and seed membership) equal to node identity.
    String canonical = parsed.toString();
    if (!canonical.equals(value)) {
      throw new ValidationException(
          field,
          "must be written canonically as "
              + Texts.quote(canonical)
              + ", got "
              + Texts.quote(value));
    }
    return value;
  }

  /** A non-empty, duplicate-free list of valid node ids. */
  static List<String> targets(ArrayNode array, String field) {
    if (array.isEmpty()) {
      throw new ValidationException(field, "must not be empty");
    }
    if (array.size() > MAX_TARGETS) {
      throw new ValidationException(
          field, "must have at most " + MAX_TARGETS + " entries, got " + array.size());
    }
    List<String> targets = new ArrayList<>(array.size());
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < array.size(); i++) {
      String element = Fields.index(field, i);
      String node = requireValid(Fields.string(array.get(i), element), element);
      Integer first = seen.putIfAbsent(node, i);
      if (first != null) {
        throw new ValidationException(
            element,
            "duplicate node "
                + Texts.quote(node)
                + " (same as "
                + Fields.index(field, first)
                + ")");
      }
      targets.add(node);
    }
    return targets;
  }
}
