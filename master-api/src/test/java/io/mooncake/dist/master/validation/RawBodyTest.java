package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/** Bodies that are not one strict JSON object are refused as a whole, at field "body". */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class RawBodyTest {

  private static String rfcText() {
    return new String(TestRequests.rfcBytes(), StandardCharsets.UTF_8);
  }

  private static void assertBodyRejected(byte[] body, String fragment) {
    ValidationException e =
        assertThrows(ValidationException.class, () -> JobRequestParser.parse(body));
    assertEquals("body", e.field(), e::getMessage);
    assertTrue(e.getMessage().startsWith("body: "), e::getMessage);
    assertTrue(
        e.getMessage().contains(fragment),
        () -> "expected '" + fragment + "' in: " + e.getMessage());
  }

  private static void assertBodyRejected(String body, String fragment) {
    assertBodyRejected(body.getBytes(StandardCharsets.UTF_8), fragment);
  }

  @Test
  void a_null_or_empty_body_is_rejected() {
    assertBodyRejected((byte[]) null, "must not be empty");
    assertBodyRejected(new byte[0], "must not be empty");
  }

  @Test
  void a_whitespace_only_body_is_rejected() {
    assertBodyRejected(" \n\t ", "must be a JSON object, got no value");
  }

  @Test
  void a_body_over_the_size_limit_is_rejected_before_parsing() {
    byte[] huge = new byte[JobRequestParser.MAX_BODY_BYTES + 1];
    Arrays.fill(huge, (byte) ' ');
    assertBodyRejected(huge, "must be at most 8388608 bytes, got 8388609");
  }

  @Test
  void malformed_utf8_is_rejected_with_its_offset() {
    byte[] rfc = TestRequests.rfcBytes();
    int at = rfcText().indexOf("demo-model");
    byte[] lone = rfc.clone();
    lone[at] = (byte) 0xC3; // a lead byte followed by an ASCII byte, not a continuation
    assertBodyRejected(lone, "must be valid UTF-8, malformed byte sequence at offset " + at);

    byte[] overlong = rfc.clone();
    overlong[at] = (byte) 0xC0; // overlong encoding of '-'
    overlong[at + 1] = (byte) 0xAD;
    assertBodyRejected(overlong, "must be valid UTF-8");

    byte[] surrogate = rfc.clone(); // CESU-style encoded surrogate U+D800
    surrogate[at] = (byte) 0xED;
    surrogate[at + 1] = (byte) 0xA0;
    surrogate[at + 2] = (byte) 0x80;
    assertBodyRejected(surrogate, "must be valid UTF-8");

    byte[] truncated = Arrays.copyOf(rfc, rfc.length + 1);
    truncated[rfc.length] = (byte) 0xE2;
    assertBodyRejected(
        truncated, "must be valid UTF-8, malformed byte sequence at offset " + rfc.length);
  }

  @Test
  void nesting_deeper_than_the_limit_is_rejected() {
    String deep =
        "[".repeat(JobRequestParser.MAX_NESTING_DEPTH)
            + "]".repeat(JobRequestParser.MAX_NESTING_DEPTH);
    assertBodyRejected(rfcText().replaceFirst("\\{", "{\"deep\":" + deep + ","), "nesting depth");
  }

  @Test
  void trailing_content_after_the_document_is_rejected() {
    assertBodyRejected(rfcText() + "garbage", "invalid JSON");
    assertBodyRejected(rfcText() + "{}", "invalid JSON");
    assertBodyRejected(rfcText() + " ,", "invalid JSON");
  }

  @Test
  void a_trailing_newline_is_not_trailing_content() {
    JobRequestParser.parse((rfcText() + "\r\n").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void duplicate_keys_are_rejected_at_any_level() {
    assertBodyRejected(
        rfcText().replaceFirst("\\{", "{\"job_id\":\"other\","), "Duplicate field 'job_id'");
    assertBodyRejected(
        rfcText().replace("\"format\": \"bin\",", "\"format\": \"bin\", \"format\": \"bin\","),
        "Duplicate field 'format'");
  }

  @Test
  void syntax_errors_are_rejected_with_their_position() {
    assertBodyRejected(rfcText().replace("\"r1\",", "'r1',"), "invalid JSON");
    assertBodyRejected(
        rfcText().replace("\"provider\": \"local\"\n}", "\"provider\": \"local\",\n}"),
        "invalid JSON");
    assertBodyRejected(rfcText().substring(0, 100), "line");
    assertBodyRejected("{\"size\": NaN}", "invalid JSON");
    assertBodyRejected("{\"size\": 012}", "invalid JSON");
    assertBodyRejected("{/* comment */}", "invalid JSON");
  }

  @Test
  void a_top_level_value_other_than_an_object_is_rejected() {
    assertBodyRejected("[" + rfcText() + "]", "must be a JSON object, got an array");
    assertBodyRejected("null", "must be a JSON object, got null");
    assertBodyRejected("\"job\"", "must be a JSON object, got a string");
    assertBodyRejected("42", "must be a JSON object, got an integer");
  }

  @Test
  void a_byte_order_mark_is_not_accepted_as_json() {
    byte[] rfc = TestRequests.rfcBytes();
    byte[] withBom = new byte[rfc.length + 3];
    withBom[0] = (byte) 0xEF;
    withBom[1] = (byte) 0xBB;
    withBom[2] = (byte) 0xBF;
    System.arraycopy(rfc, 0, withBom, 3, rfc.length);
    assertBodyRejected(withBom, "invalid JSON");
  }
}
