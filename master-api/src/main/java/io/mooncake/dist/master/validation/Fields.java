package io.mooncake.dist.master.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Typed access to one JSON object of the request, each lookup knowing its own JSON path so every
 * error names the exact field. Unknown members are simply never asked for, which is what makes the
 * format forward compatible.
 */
final class Fields {
  private final ObjectNode node;
  private final String path;

  private Fields(ObjectNode node, String path) {
    this.node = node;
    this.path = path;
  }

  /** The object at {@code path}; {@code value} must be a JSON object. */
  static Fields object(JsonNode value, String path) {
    if (!(value instanceof ObjectNode object)) {
      throw typeError(path, "an object", value);
    }
    return new Fields(object, path);
  }

  /** This object's JSON path ({@code ""} for the document root). */
  String path() {
    return path;
  }

  /** The JSON path of member {@code name}. */
  String path(String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  /** The JSON path of element {@code index} of the array at {@code arrayPath}. */
  static String index(String arrayPath, int index) {
    return arrayPath + "[" + index + "]";
  }

  String requiredString(String name) {
    return string(required(name), path(name));
  }

  long requiredLong(String name) {
    return integer(required(name), path(name));
  }

  Fields requiredObject(String name) {
    return object(required(name), path(name));
  }

  ArrayNode requiredArray(String name) {
    return array(required(name), path(name));
  }

  /**
   * The member as an object, or {@code null} when absent or JSON {@code null} (optional =
   * omittable).
   */
  Fields optionalObject(String name) {
    JsonNode value = node.get(name);
    return value == null || value.isNull() ? null : object(value, path(name));
  }

  /** The member as an array, or {@code null} when absent or JSON {@code null}. */
  ArrayNode optionalArray(String name) {
    JsonNode value = node.get(name);
    return value == null || value.isNull() ? null : array(value, path(name));
  }

  /** The member as an integer, or {@code null} when absent or JSON {@code null}. */
  Long optionalLong(String name) {
    JsonNode value = node.get(name);
    return value == null || value.isNull() ? null : integer(value, path(name));
  }

  /** A required member is present; an explicit {@code null} is then reported as a type error. */
  private JsonNode required(String name) {
    JsonNode value = node.get(name);
    if (value == null) {
      throw new ValidationException(path(name), "is required");
    }
    return value;
  }

  static String string(JsonNode value, String path) {
    if (value == null || !value.isTextual()) {
      throw typeError(path, "a string", value);
    }
    return value.textValue();
  }

  /**
   * An integral JSON number within the signed 64-bit range; {@code 1.0} and {@code "1"} are not.
   */
  static long integer(JsonNode value, String path) {
    if (value == null || !value.isIntegralNumber()) {
      throw typeError(path, "an integer", value);
    }
    if (!value.canConvertToLong()) {
      throw new ValidationException(path, "must be an integer within the signed 64-bit range");
    }
    return value.longValue();
  }

  static ArrayNode array(JsonNode value, String path) {
    if (!(value instanceof ArrayNode array)) {
      throw typeError(path, "an array", value);
    }
    return array;
  }

  static long nonNegative(long value, String path) {
    if (value < 0) {
      throw new ValidationException(path, "must be a non-negative integer, got " + value);
    }
    return value;
  }

  static long inRange(long value, String path, long min, long max) {
    if (value < min || value > max) {
      throw new ValidationException(
          path, "must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  /** What a JSON value is, in words, for "must be X, got Y" messages. */
  static String describe(JsonNode value) {
    if (value == null || value.isMissingNode()) {
      return "nothing";
    }
    return switch (value.getNodeType()) {
      case OBJECT -> "an object";
      case ARRAY -> "an array";
      case STRING -> "a string";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      case NUMBER -> value.isIntegralNumber() ? "an integer" : "a fractional number";
      default -> "an unsupported value";
    };
  }

  private static ValidationException typeError(String path, String expected, JsonNode got) {
    return new ValidationException(path, "must be " + expected + ", got " + describe(got));
  }
}
