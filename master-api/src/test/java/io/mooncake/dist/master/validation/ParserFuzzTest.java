package io.mooncake.dist.master.validation;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;

/**
 * Mutates the RFC example at random, at byte and at tree level, and checks the parser's contract:
 * every input either parses or is refused with a {@link ValidationException}; nothing else escapes.
 * Seeded, so a failure reproduces; the failing input is printed in base64.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class ParserFuzzTest {
  private static final long SEED = 0x6d6f6f6e63616b65L;
  private static final int ITERATIONS = 20_000;
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** Characters that matter to JSON, to URLs and paths, plus bytes that break UTF-8. */
  private static final byte[] INTERESTING =
      "{}[]\":,\\/.-0123456789eE+ntfaul \t\n\u0000:%".getBytes(StandardCharsets.ISO_8859_1);

  private final byte[] rfc = TestRequests.rfcBytes();

  @Test
  void random_mutations_of_the_rfc_example_either_parse_or_raise_a_validation_exception() {
    Random random = new Random(SEED);
    int accepted = 0;
    int rejected = 0;
    for (int i = 0; i < ITERATIONS; i++) {
      byte[] input = mutate(random);
      try {
        ParsedRequest parsed = JobRequestParser.parse(input);
        assertNotNull(parsed.request());
        assertNotNull(parsed.canonicalSha256());
        accepted++;
      } catch (ValidationException e) {
        assertNotNull(e.field());
        assertTrue(e.getMessage().startsWith(e.field() + ": "), e::getMessage);
        rejected++;
      } catch (Throwable t) {
        fail(
            "iteration "
                + i
                + ": "
                + t
                + " for input (base64) "
                + Base64.getEncoder().encodeToString(input),
            t);
      }
    }
    // Both outcomes must be common, or the mutations are not exploring the interesting boundary.
    assertTrue(accepted > ITERATIONS / 50, "accepted only " + accepted);
    assertTrue(rejected > ITERATIONS / 2, "rejected only " + rejected);
  }

  private byte[] mutate(Random random) {
    int rounds = 1 + random.nextInt(3);
    byte[] bytes = rfc;
    for (int r = 0; r < rounds; r++) {
      bytes =
          switch (random.nextInt(7)) {
            case 0 -> flipBytes(bytes, random);
            case 1 -> Arrays.copyOf(bytes, random.nextInt(bytes.length + 1));
            case 2 -> insert(bytes, random);
            case 3 -> removeRange(bytes, random);
            case 4 -> duplicateRange(bytes, random);
            default -> mutateTree(bytes, random);
          };
    }
    return bytes;
  }

  private static byte[] flipBytes(byte[] in, Random random) {
    byte[] out = in.clone();
    for (int n = 1 + random.nextInt(3); n > 0 && out.length > 0; n--) {
      int at = random.nextInt(out.length);
      out[at] =
          random.nextBoolean()
              ? (byte) (out[at] ^ (1 << random.nextInt(8)))
              : (byte) random.nextInt(256);
    }
    return out;
  }

  private static byte[] insert(byte[] in, Random random) {
    int at = random.nextInt(in.length + 1);
    byte[] piece = new byte[1 + random.nextInt(4)];
    for (int i = 0; i < piece.length; i++) {
      piece[i] =
          random.nextInt(4) == 0
              ? (byte) random.nextInt(256)
              : INTERESTING[random.nextInt(INTERESTING.length)];
    }
    return splice(in, at, at, piece);
  }

  private static byte[] removeRange(byte[] in, Random random) {
    if (in.length == 0) {
      return in;
    }
    int from = random.nextInt(in.length);
    int to = Math.min(in.length, from + 1 + random.nextInt(16));
    return splice(in, from, to, new byte[0]);
  }

  private static byte[] duplicateRange(byte[] in, Random random) {
    if (in.length == 0) {
      return in;
    }
    int from = random.nextInt(in.length);
    int to = Math.min(in.length, from + 1 + random.nextInt(64));
    int at = random.nextInt(in.length + 1);
    return splice(in, at, at, Arrays.copyOfRange(in, from, to));
  }

  private static byte[] splice(byte[] in, int from, int to, byte[] piece) {
    byte[] out = new byte[in.length - (to - from) + piece.length];
    System.arraycopy(in, 0, out, 0, from);
    System.arraycopy(piece, 0, out, from, piece.length);
    System.arraycopy(in, to, out, from + piece.length, in.length - to);
    return out;
  }

  /** Replaces or removes one value anywhere in the tree; falls back to a byte flip on bad JSON. */
  private static byte[] mutateTree(byte[] in, Random random) {
    JsonNode root;
    try {
      root = TestRequests.json(new String(in, StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      return flipBytes(in, random);
    }
    List<JsonNode> containers = new ArrayList<>();
    collectContainers(root, containers);
    if (containers.isEmpty()) {
      return randomValue(random, 2).toString().getBytes(StandardCharsets.UTF_8);
    }
    JsonNode target = containers.get(random.nextInt(containers.size()));
    if (target instanceof ObjectNode object && !object.isEmpty()) {
      List<String> names = new ArrayList<>();
      for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
        names.add(it.next());
      }
      String name = names.get(random.nextInt(names.size()));
      if (random.nextInt(5) == 0) {
        object.remove(name);
      } else {
        object.set(name, randomValue(random, 2));
      }
    } else if (target instanceof ArrayNode array && !array.isEmpty()) {
      int index = random.nextInt(array.size());
      switch (random.nextInt(3)) {
        case 0 -> array.remove(index);
        case 1 -> array.add(array.get(index).deepCopy());
        default -> array.set(index, randomValue(random, 2));
      }
    }
    return root.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void collectContainers(JsonNode node, List<JsonNode> out) {
    if (node.isContainerNode()) {
      out.add(node);
      node.forEach(child -> collectContainers(child, out));
    }
  }

  private static JsonNode randomValue(Random random, int depth) {
    int kinds = depth > 0 ? 12 : 10;
    return switch (random.nextInt(kinds)) {
      case 0 -> NODES.nullNode();
      case 1 -> NODES.booleanNode(random.nextBoolean());
      case 2 -> NODES.numberNode(random.nextLong());
      case 3 -> NODES.numberNode(random.nextInt(5) - 1);
      case 4 -> NODES.numberNode(random.nextDouble() * 1e6);
      case 5 -> NODES.numberNode(new BigInteger(80, random));
      case 6 -> NODES.textNode("");
      case 7 ->
          NODES.textNode(
              List.of(
                      "../x",
                      "/etc/passwd",
                      "127.0.0.1:25001",
                      "a\\b",
                      "file://h/x",
                      "sha256:00",
                      "demo-model/r1/chunk-000",
                      "v1",
                      "r1",
                      ".",
                      "node1",
                      "1.2.3.4:0")
                  .get(random.nextInt(12)));
      case 8 -> NODES.textNode(randomText(random));
      case 9 -> NODES.numberNode(Long.MAX_VALUE - random.nextInt(3));
      case 10 -> {
        ArrayNode array = NODES.arrayNode();
        for (int i = random.nextInt(3); i > 0; i--) {
          array.add(randomValue(random, depth - 1));
        }
        yield array;
      }
      default -> {
        ObjectNode object = NODES.objectNode();
        for (int i = random.nextInt(3); i > 0; i--) {
          object.set(randomText(random), randomValue(random, depth - 1));
        }
        yield object;
      }
    };
  }

  private static String randomText(Random random) {
    StringBuilder out = new StringBuilder();
    for (int i = random.nextInt(12); i > 0; i--) {
      out.append(
          (char) (random.nextInt(3) == 0 ? random.nextInt(0x10000) : 0x20 + random.nextInt(0x5f)));
    }
    return out.toString();
  }
}
