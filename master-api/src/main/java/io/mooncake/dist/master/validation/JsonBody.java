package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Turns raw body bytes into a JSON tree, rejecting anything that is not one strict JSON document.
 */
final class JsonBody {
  static final String FIELD = "body";

  /**
   * A private mapper rather than {@code Json.MAPPER}: the strictness wanted here (depth limit,
   * duplicate keys, trailing tokens) must not leak into, or depend on, the shared wire mapper.
   */
  private static final ObjectMapper STRICT =
      JsonMapper.builder(
              JsonFactory.builder()
                  .streamReadConstraints(
                      StreamReadConstraints.builder()
                          .maxNestingDepth(JobRequestParser.MAX_NESTING_DEPTH)
                          .build())
                  // Same switch as JsonParser.Feature.STRICT_DUPLICATE_DETECTION: with duplicates,
                  // the
                  // "last one wins" rule would let two readers of one body disagree on its meaning.
                  .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                  .build())
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  private JsonBody() {}

  static JsonNode read(byte[] body) {
    if (body == null || body.length == 0) {
      throw new ValidationException(FIELD, "must not be empty");
    }
    if (body.length > JobRequestParser.MAX_BODY_BYTES) {
      throw new ValidationException(
          FIELD,
          "must be at most " + JobRequestParser.MAX_BODY_BYTES + " bytes, got " + body.length);
    }
    String text = decodeUtf8(body);
    JsonNode tree;
    try {
      tree = STRICT.readTree(text);
    } catch (JsonProcessingException e) {
      throw new ValidationException(FIELD, "invalid JSON: " + describe(e));
    }
    if (tree != null) {
      refuseNul(tree, "");
    }
    if (tree == null || !tree.isObject()) {
      throw new ValidationException(
          FIELD,
          "must be a JSON object, got "
              + (tree == null || tree.isMissingNode() ? "no value" : Fields.describe(tree)));
    }
    return tree;
  }

  /**
   * Refuses U+0000 in any name or string of the body, known field or not: the request is stored as
   * {@code jsonb}, which cannot hold it, and no identifier, path or URL may contain it.
   */
  private static void refuseNul(JsonNode node, String path) {
    if (node.isTextual() && node.textValue().indexOf('\u0000') >= 0) {
      throw new ValidationException(
          path.isEmpty() ? FIELD : path,
          "must not contain control characters, found U+0000 at index "
              + node.textValue().indexOf('\u0000'));
    }
    if (node.isObject()) {
      for (var it = node.fields(); it.hasNext(); ) {
        var e = it.next();
        String child = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
        if (e.getKey().indexOf('\u0000') >= 0) {
          throw new ValidationException(
              path.isEmpty() ? FIELD : path,
              "field names must not contain control characters, found U+0000 in "
                  + Texts.quote(e.getKey()));
        }
        refuseNul(e.getValue(), child);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        refuseNul(node.get(i), path + "[" + i + "]");
      }
    }
  }

  /**
   * Decodes strictly. Jackson would otherwise substitute or mis-report bad bytes, and a body whose
   * bytes are not what its text says would hash and compare unpredictably.
   */
  private static String decodeUtf8(byte[] body) {
    CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(body);
    // UTF-8 never yields more UTF-16 units than bytes, so one pass into this buffer suffices.
    CharBuffer out = CharBuffer.allocate(body.length);
    CoderResult result = decoder.decode(in, out, true);
    if (!result.isError()) {
      result = decoder.flush(out);
    }
    if (result.isError()) {
      throw new ValidationException(
          FIELD, "must be valid UTF-8, malformed byte sequence at offset " + in.position());
    }
    out.flip();
    return out.toString();
  }

  private static String describe(JsonProcessingException e) {
    JsonLocation at = e.getLocation();
    String where =
        at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
    // Jackson's own wording is precise and names no caller data beyond a short token; keep it
    // whole.
    return Texts.printable(String.valueOf(e.getOriginalMessage()), 400) + where;
  }
}
