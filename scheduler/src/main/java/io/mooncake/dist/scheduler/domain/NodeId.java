package io.mooncake.dist.scheduler.domain;

import java.util.regex.Pattern;

/** A node's identity, {@code host:port}, where port is its chunk server's port. */
public record NodeId(String host, int port) {
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]{0,253})?");

  /**
   * Parses {@code host:port}.
   *
   * @throws IllegalArgumentException with a message saying what is wrong
   */
  public static NodeId parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("node id must be host:port, got an empty value");
    }
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("node id must be host:port, got '" + text + "'");
    }
    String host = text.substring(0, colon);
    String portText = text.substring(colon + 1);
    if (!HOST.matcher(host).matches()) {
      throw new IllegalArgumentException(
          "node id host must be a hostname or IPv4 address, got '" + text + "'");
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("node id port must be a number, got '" + text + "'");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("node id port must be 1-65535, got '" + text + "'");
    }
    return new NodeId(host, port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
