package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.scheduler.domain.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Request bodies for tests: the RFC example, and path-addressed edits of it. */
final class TestRequests {
  private static final Pattern STEP = Pattern.compile("([^.\\[\\]]+)((?:\\[\\d+])*)");
  private static final Pattern INDEX = Pattern.compile("\\[(\\d+)]");

  private TestRequests() {}

  /** The RFC's "Example Create Request", byte for byte. */
  static byte[] rfcBytes() {
    try (InputStream in = TestRequests.class.getResourceAsStream("/rfc-create-request.json")) {
      if (in == null) {
        throw new IllegalStateException("rfc-create-request.json is missing from test resources");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A fresh, mutable tree of the RFC example. */
  static ObjectNode rfc() {
    return (ObjectNode) json(new String(rfcBytes(), StandardCharsets.UTF_8));
  }

  /**
   * The RFC example with a second 1 MiB file "b.bin" whose objects live under "demo-model/r1/b",
   * for rules that span files.
   */
  static ObjectNode twoFiles() {
    ObjectNode root = rfc();
    ObjectNode manifest = (ObjectNode) root.get("manifest");
    ArrayNode files = (ArrayNode) manifest.get("files");
    ObjectNode second = files.get(0).deepCopy();
    second.put("path", "b.bin");
    ((ObjectNode) second.get("chunk_layout")).put("object_prefix", "demo-model/r1/b");
    ArrayNode ids = ((ObjectNode) second.get("artifact")).putArray("object_ids");
    for (int i = 0; i < 4; i++) {
      ids.add("demo-model/r1/b/chunk-00" + i);
    }
    files.add(second);
    manifest.put("total_size_bytes", 2 * 1048576L);
    return root;
  }

  static JsonNode json(String text) {
    try {
      return Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(text, e);
    }
  }

  static byte[] bytes(JsonNode node) {
    return node.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Sets the value at {@code path} (e.g. {@code manifest.files[0].size_bytes}); a {@code null}
   * value removes the member instead.
   */
  static ObjectNode set(ObjectNode root, String path, JsonNode value) {
    String[] steps = path.split("\\.");
    JsonNode parent = root;
    for (int s = 0; s < steps.length; s++) {
      Matcher step = STEP.matcher(steps[s]);
      if (!step.matches()) {
        throw new IllegalArgumentException("bad path step " + steps[s]);
      }
      String name = step.group(1);
      Matcher index = INDEX.matcher(step.group(2));
      boolean last = s == steps.length - 1;
      if (last && step.group(2).isEmpty()) {
        if (value == null) {
          ((ObjectNode) parent).remove(name);
        } else {
          ((ObjectNode) parent).set(name, value);
        }
        return root;
      }
      JsonNode node = parent.get(name);
      int pending = -1;
      while (index.find()) {
        if (pending >= 0) {
          node = node.get(pending);
        }
        pending = Integer.parseInt(index.group(1));
      }
      if (last) {
        ArrayNode array = (ArrayNode) node;
        if (value == null) {
          array.remove(pending);
        } else {
          array.set(pending, value);
        }
        return root;
      }
      parent = pending >= 0 ? node.get(pending) : node;
    }
    return root;
  }
}
