package io.mooncake.dist.cli.master;

import com.fasterxml.jackson.databind.JsonNode;

/** Small readers shared by the snapshot views and listings. */
public final class Texts {
  private Texts() {}

  /** The node's text, or {@code null} for JSON null, a missing field or an empty string. */
  public static String orNull(JsonNode node) {
    if (node == null || node.isNull() || node.isMissingNode()) {
      return null;
    }
    String s = node.asText();
    return s.isEmpty() ? null : s;
  }

  /**
   * A model reference as one label, {@code demo-model r1 (bin, local)}; the text itself when a
   * master sends a plain string; {@code null} when absent.
   */
  public static String model(JsonNode model) {
    if (!model.isObject()) {
      return orNull(model);
    }
    String id = model.path("model_id").asText("?");
    String revision = model.path("revision").asText("?");
    return id
        + " "
        + revision
        + " ("
        + model.path("format").asText("?")
        + ", "
        + model.path("provider").asText("?")
        + ")";
  }
}
