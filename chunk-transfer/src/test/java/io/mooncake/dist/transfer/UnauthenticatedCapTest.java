package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Connections that have not authenticated are capped per address (and in all), so a stranger cannot
 * hold hundreds of descriptors for the handshake timeout; refused proofs log one WARN line per
 * interval, not one each.
 */
class UnauthenticatedCapTest {
  private ChunkServer server;

  @BeforeEach
  void start() throws Exception {
    server =
        ChunkServer.start(
            "127.0.0.1",
            0,
            id -> Optional.empty(),
            TestData.SECURITY.withHandshakeTimeout(Duration.ofSeconds(30)));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** True when the server greets the socket with its challenge, false when it closes it. */
  private static boolean challenged(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    try {
      return new DataInputStream(s.getInputStream()).readInt() == RawWire.HANDSHAKE_MAGIC;
    } catch (java.io.EOFException | java.net.SocketException closed) {
      return false;
    }
  }

  private Socket connect() throws IOException {
    return new Socket(InetAddress.getLoopbackAddress(), server.port());
  }

  @Test
  void oneAddressHoldsAtMostItsShareOfUnauthenticatedConnections() throws Exception {
    List<Socket> sockets = new ArrayList<>();
    try {
      int extra = 8;
      for (int i = 0; i < Unauthenticated.MAX_PER_ADDRESS + extra; i++) {
        sockets.add(connect());
      }
      int greeted = 0;
      for (Socket s : sockets) {
        greeted += challenged(s) ? 1 : 0;
      }
      assertEquals(Unauthenticated.MAX_PER_ADDRESS, greeted);

      // Closing unauthenticated connections gives their slots back.
      for (int i = 0; i < 4; i++) {
        sockets.remove(0).close();
      }
      boolean again = false;
      for (int attempt = 0; attempt < 50 && !again; attempt++) {
        Socket s = connect();
        sockets.add(s);
        again = challenged(s);
        if (!again) {
          Thread.sleep(100);
        }
      }
      assertTrue(again, "a slot freed by a close is usable again");
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  @Test
  void authenticatedConnectionsDoNotCountAgainstTheCap() throws Exception {
    List<ChunkClient> members = new ArrayList<>();
    try {
      java.nio.file.Path file = java.nio.file.Files.createTempFile("cap", ".bin");
      java.nio.file.Files.write(file, new byte[] {1, 2, 3});
      try (FileChannelHolder holder = new FileChannelHolder(file)) {
        for (int i = 0; i < Unauthenticated.MAX_PER_ADDRESS + 4; i++) {
          ChunkClient member = new ChunkClient(TestData.SECURITY);
          members.add(member);
          ChunkTransferException e =
              org.junit.jupiter.api.Assertions.assertThrows(
                  ChunkTransferException.class,
                  () ->
                      member.fetchBlocking(
                          "127.0.0.1", server.port(), "none", 0, 1, holder.channel, 0, null));
          assertEquals(ChunkTransferException.Kind.NOT_FOUND, e.kind(), e.toString());
        }
      }
    } finally {
      members.forEach(ChunkClient::close);
    }
  }

  private record FileChannelHolder(java.nio.channels.FileChannel channel) implements AutoCloseable {
    FileChannelHolder(java.nio.file.Path file) throws IOException {
      this(java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE));
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  @Test
  void refusedProofsLogOneWarningPerIntervalNotOneEach() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(ServerHandshakeHandler.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      for (int i = 0; i < 20; i++) {
        try (Socket s = connect()) {
          assertTrue(challenged(s));
          new DataInputStream(s.getInputStream()).skipNBytes(1 + 32);
          byte[] proof = new byte[5 + 32 + 32];
          java.nio.ByteBuffer.wrap(proof)
              .putInt(RawWire.HANDSHAKE_MAGIC)
              .put((byte) RawWire.VERSION);
          s.getOutputStream().write(proof);
          DataInputStream in = new DataInputStream(s.getInputStream());
          assertEquals(RawWire.MAGIC, in.readInt(), "an error frame answers the bad proof");
        }
      }
      long warnings =
          logs.list.stream()
              .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
              .filter(e -> e.getFormattedMessage().contains("proof does not match"))
              .count();
      assertTrue(warnings <= 1, warnings + " WARN lines for 20 refused proofs");
    } finally {
      logger.detachAppender(logs);
    }
  }
}
