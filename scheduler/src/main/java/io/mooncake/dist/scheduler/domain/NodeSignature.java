package io.mooncake.dist.scheduler.domain;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * How a node proves itself to a master on the node link (heartbeats and wake-ups through the
 * master, issue 19): an {@code Authorization: MooncakeNode <node_id> <epoch_ms> <hmac>} header, the
 * HMAC-SHA256 under the cluster secret (the database's, which every member reads) of the method,
 * the path with its query, the time and the SHA-256 of the body. A master accepts it within {@link
 * #MAX_SKEW} of its own clock. Pure: no I/O, no clock of its own.
 */
public final class NodeSignature {
  /** The authorization scheme's name. */
  public static final String SCHEME = "MooncakeNode";

  /** How far a signature's time may be from the master's clock, either way. */
  public static final Duration MAX_SKEW = Duration.ofSeconds(60);

  private static final HexFormat HEX = HexFormat.of();

  private final byte[] secret;

  public NodeSignature(byte[] secret) {
    if (secret == null || secret.length == 0) {
      throw new IllegalArgumentException("the cluster secret is empty");
    }
    this.secret = secret.clone();
  }

  /** The header value a node sends with a request. */
  public String header(
      String nodeId, long epochMillis, String method, String pathAndQuery, byte[] body) {
    return SCHEME
        + " "
        + nodeId
        + " "
        + epochMillis
        + " "
        + mac(nodeId, epochMillis, method, pathAndQuery, body);
  }

  /**
   * The node a header proves, or why it proves nothing.
   *
   * @return the node id on success; empty with {@code why} filled otherwise
   */
  public Optional<String> verify(
      String header,
      long nowMillis,
      String method,
      String pathAndQuery,
      byte[] body,
      StringBuilder why) {
    if (header == null || !header.regionMatches(true, 0, SCHEME + " ", 0, SCHEME.length() + 1)) {
      why.append("node requests need 'Authorization: ").append(SCHEME).append(" ...'");
      return Optional.empty();
    }
    String[] parts = header.substring(SCHEME.length() + 1).strip().split(" ");
    if (parts.length != 3) {
      why.append("malformed ").append(SCHEME).append(" authorization");
      return Optional.empty();
    }
    long at;
    try {
      at = Long.parseLong(parts[1]);
    } catch (NumberFormatException e) {
      why.append("malformed ").append(SCHEME).append(" authorization time");
      return Optional.empty();
    }
    if (Math.abs(nowMillis - at) > MAX_SKEW.toMillis()) {
      why.append("node signature time is more than ")
          .append(MAX_SKEW.toSeconds())
          .append(" s from the master's clock (check the node's clock)");
      return Optional.empty();
    }
    byte[] expected =
        mac(parts[0], at, method, pathAndQuery, body).getBytes(StandardCharsets.US_ASCII);
    if (!MessageDigest.isEqual(expected, parts[2].getBytes(StandardCharsets.US_ASCII))) {
      why.append("node signature does not match (a different cluster secret?)");
      return Optional.empty();
    }
    return Optional.of(parts[0]);
  }

  private String mac(
      String nodeId, long epochMillis, String method, String pathAndQuery, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      String signed =
          nodeId
              + "\n"
              + epochMillis
              + "\n"
              + method
              + "\n"
              + pathAndQuery
              + "\n"
              + HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(body));
      return HEX.formatHex(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
