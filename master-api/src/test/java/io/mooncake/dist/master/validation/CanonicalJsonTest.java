package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class CanonicalJsonTest {

  @Test
  void keys_are_sorted_at_every_level_and_whitespace_is_dropped() {
    assertEquals(
        "{\"a\":[{\"x\":1,\"y\":true}],\"b\":null}",
        CanonicalJson.canonical(
            TestRequests.json("{ \"b\" : null, \"a\" : [ {\"y\":true, \"x\":1} ] }")));
  }

  @Test
  void strings_are_escaped_to_printable_ascii() {
    assertEquals(
        "[\"q\\\"b\\\\ \\u000a\\u00e9\\ud83d\\ude00\"]",
        CanonicalJson.canonical(TestRequests.json("[\"q\\\"b\\\\ \\n\u00e9\uD83D\uDE00\"]")));
  }

  @Test
  void integers_and_fractions_stay_distinct() {
    assertNotEquals(
        CanonicalJson.sha256Hex(TestRequests.json("{\"n\":1}")),
        CanonicalJson.sha256Hex(TestRequests.json("{\"n\":1.0}")));
    assertEquals(
        "{\"n\":123456789012345678901234567890}",
        CanonicalJson.canonical(TestRequests.json("{\"n\":123456789012345678901234567890}")));
  }
}
