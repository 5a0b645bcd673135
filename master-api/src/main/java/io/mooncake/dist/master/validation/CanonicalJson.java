package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;

/**
 * A canonical text form of a JSON tree, and its SHA-256, for recognising a re-POST of the same job.
 *
 * <p>Object keys are sorted (by UTF-16 code units) at every level, there is no whitespace, and
 * strings escape everything outside printable ASCII as {@code \}{@code uXXXX}, so {@code "é"} and
 * {@code "\}{@code u00e9"} — the same JSON string — also hash the same. Integers are written in
 * plain decimal; fractional numbers keep Java's double spelling, distinct from any integer.
 */
final class CanonicalJson {
  private CanonicalJson() {}

  static String sha256Hex(JsonNode node) {
    StringBuilder out = new StringBuilder(1024);
    write(node, out);
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of()
          .formatHex(sha.digest(out.toString().getBytes(StandardCharsets.US_ASCII)));
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform is required to provide SHA-256.
      throw new IllegalStateException(e);
    }
  }

  static String canonical(JsonNode node) {
    StringBuilder out = new StringBuilder();
    write(node, out);
    return out.toString();
  }

  // Recursion is bounded by JobRequestParser.MAX_NESTING_DEPTH, enforced while parsing.
  private static void write(JsonNode node, StringBuilder out) {
    switch (node.getNodeType()) {
      case OBJECT -> {
        List<String> names = new ArrayList<>(node.size());
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
          names.add(it.next());
        }
        names.sort(null);
        out.append('{');
        for (int i = 0; i < names.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          string(names.get(i), out);
          out.append(':');
          write(node.get(names.get(i)), out);
        }
        out.append('}');
      }
      case ARRAY -> {
        out.append('[');
        for (int i = 0; i < node.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(node.get(i), out);
        }
        out.append(']');
      }
      case STRING -> string(node.textValue(), out);
      case NUMBER ->
          out.append(node.isIntegralNumber() ? node.bigIntegerValue().toString() : node.asText());
      case BOOLEAN -> out.append(node.booleanValue());
      // A parsed document holds nothing else (no binary or POJO nodes); null stands in for safety.
      default -> out.append("null");
    }
  }

  private static void string(String value, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }
}
