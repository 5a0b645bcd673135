package io.mooncake.dist.scheduler.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeSignatureTest {
  private static final byte[] SECRET =
      "a cluster secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);
  private static final NodeSignature SIG = new NodeSignature(SECRET);
  private static final byte[] BODY = "{\"node_id\":\"n1:7001\"}".getBytes(StandardCharsets.UTF_8);
  private static final long NOW = 1_780_000_000_000L;

  private static Optional<String> verify(
      NodeSignature by, String header, long now, String method, String path, byte[] body) {
    return by.verify(header, now, method, path, body, new StringBuilder());
  }

  @Test
  void aSignedRequestProvesItsNode() {
    String h = SIG.header("n1:7001", NOW, "POST", "/api/v1/nodes/heartbeat", BODY);
    assertTrue(h.startsWith("MooncakeNode n1:7001 " + NOW + " "), h);
    assertEquals(
        Optional.of("n1:7001"), verify(SIG, h, NOW, "POST", "/api/v1/nodes/heartbeat", BODY));
    assertEquals(
        Optional.of("n1:7001"),
        verify(SIG, h, NOW + 59_000, "POST", "/api/v1/nodes/heartbeat", BODY));
  }

  @Test
  void anythingChangedOrStaleProvesNothing() {
    String h = SIG.header("n1:7001", NOW, "POST", "/api/v1/nodes/heartbeat", BODY);
    byte[] other = "{\"node_id\":\"n2:7001\"}".getBytes(StandardCharsets.UTF_8);
    assertTrue(verify(SIG, h, NOW, "POST", "/api/v1/nodes/heartbeat", other).isEmpty());
    assertTrue(verify(SIG, h, NOW, "GET", "/api/v1/nodes/heartbeat", BODY).isEmpty());
    assertTrue(verify(SIG, h, NOW, "POST", "/api/v1/nodes/wakeups", BODY).isEmpty());
    assertTrue(verify(SIG, h, NOW + 61_000, "POST", "/api/v1/nodes/heartbeat", BODY).isEmpty());
    assertTrue(verify(SIG, h, NOW - 61_000, "POST", "/api/v1/nodes/heartbeat", BODY).isEmpty());
    NodeSignature otherSecret =
        new NodeSignature("another secret of at least thirty-two bytes".getBytes());
    assertTrue(verify(otherSecret, h, NOW, "POST", "/api/v1/nodes/heartbeat", BODY).isEmpty());
    String forged = h.replace("n1:7001", "n2:7001");
    assertTrue(verify(SIG, forged, NOW, "POST", "/api/v1/nodes/heartbeat", BODY).isEmpty());
  }

  @Test
  void malformedHeadersSayWhy() {
    for (String h :
        new String[] {
          null, "", "Bearer abc", "MooncakeNode", "MooncakeNode n1 x y", "MooncakeNode n1 1 2 3"
        }) {
      StringBuilder why = new StringBuilder();
      assertTrue(SIG.verify(h, NOW, "GET", "/p", new byte[0], why).isEmpty(), String.valueOf(h));
      assertTrue(why.length() > 0, String.valueOf(h));
    }
    StringBuilder why = new StringBuilder();
    SIG.verify(
        SIG.header("n1", NOW - 120_000, "GET", "/p", new byte[0]),
        NOW,
        "GET",
        "/p",
        new byte[0],
        why);
    assertTrue(why.toString().contains("clock"), why.toString());
  }
}
