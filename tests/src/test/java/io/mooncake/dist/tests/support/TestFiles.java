package io.mooncake.dist.tests.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Random;

/** Model files with reproducible random content, and their digests. */
public final class TestFiles {
  private TestFiles() {}

  public static Path random(Path file, long size, long seed) {
    try {
      Files.createDirectories(file.getParent());
      Random r = new Random(seed);
      byte[] buf = new byte[64 * 1024];
      try (var out = Files.newOutputStream(file)) {
        for (long left = size; left > 0; ) {
          int n = (int) Math.min(buf.length, left);
          r.nextBytes(buf);
          out.write(buf, 0, n);
          left -= n;
        }
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String sha256(Path file) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      try (var in = Files.newInputStream(file)) {
        byte[] buf = new byte[1 << 16];
        for (int n; (n = in.read(buf)) > 0; ) {
          md.update(buf, 0, n);
        }
      }
      return HexFormat.of().formatHex(md.digest());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  public static boolean sameBytes(Path a, Path b) {
    try {
      return Files.mismatch(a, b) == -1;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Writes {@code content} to a new file only its owner may read (mode 600), as token and secret
   * files must be.
   */
  public static Path privateFile(Path file, String content) {
    try {
      Files.createDirectories(file.getParent());
      Files.createFile(
          file,
          java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
              java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
      Files.writeString(file, content);
      return file;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * A port nothing listens on, for a launcher to bind. Taken below the kernel's ephemeral range
   * (32768 and up here), never twice in this JVM: a port from {@code new ServerSocket(0)} is itself
   * ephemeral, so between the check and the launcher's bind any outgoing connection (a Hikari pool
   * opening, an HTTP client) could take it as its local port, and the node would exit with "cannot
   * bind" and leave its job waiting.
   */
  public static synchronized int freePort() {
    for (int attempt = 0; attempt < PORT_SPAN; attempt++) {
      int port = PORT_FLOOR + (nextPort++ % PORT_SPAN);
      if (handedOut.add(port) && bindable(port)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free port in " + PORT_FLOOR + "-" + (PORT_FLOOR + PORT_SPAN));
  }

  private static final int PORT_FLOOR = 20_000;
  private static final int PORT_SPAN = 12_000;
  private static final java.util.Set<Integer> handedOut = new java.util.HashSet<>();
  private static int nextPort = new java.util.Random().nextInt(PORT_SPAN);

  /** Whether a listener could bind {@code port} on all interfaces, as the launchers do. */
  private static boolean bindable(int port) {
    try (var s = new java.net.ServerSocket()) {
      s.bind(new java.net.InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
