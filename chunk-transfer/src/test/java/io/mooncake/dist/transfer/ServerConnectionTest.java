package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Talks to a real {@link ChunkServer} over a plain socket, after the handshake, to pin down
 * connection-level behaviour.
 */
@Timeout(60)
class ServerConnectionTest {

  @TempDir Path dir;

  private byte[] content;
  private ChunkServer server;
  private Socket socket;
  private DataInputStream in;

  @BeforeEach
  void start() throws Exception {
    content = TestData.bytes(300_000, 20);
    Path file = TestData.file(dir, "obj.bin", content);
    server =
        ChunkServer.start(
            "127.0.0.1",
            0,
            id ->
                id.equals("obj")
                    ? Optional.of(new FileRange(file, 0, Files.size(file)))
                    : Optional.empty(),
            TestData.SECURITY);
    socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
    in = new DataInputStream(socket.getInputStream());
    RawWire.clientHandshake(in, socket.getOutputStream(), TestData.secretBytes());
  }

  @AfterEach
  void stop() throws IOException {
    socket.close();
    server.close();
  }

  @Test
  void severalSequentialRequestsIncludingAFailedOneShareOneConnection() throws IOException {
    send(RawWire.request(1, "obj", 0, 100));
    assertPayload(1, 0, 100);

    send(RawWire.request(2, "missing", 0, 100));
    RawWire.Response notFound = RawWire.readResponse(in);
    assertEquals(new RawWire.Response(2, 1, -1, "object not here: missing"), notFound);

    send(RawWire.request(3, "obj", 100, 200_000));
    assertPayload(3, 100, 200_000);
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrder() throws IOException {
    send(
        RawWire.concat(
            RawWire.request(10, "obj", 0, 150_000),
            RawWire.request(11, "obj", 290_000, 20_000),
            RawWire.request(12, "obj", 150_000, 150_000)));

    assertPayload(10, 0, 150_000);
    RawWire.Response outOfRange = RawWire.readResponse(in);
    assertEquals(11, outOfRange.requestId());
    assertEquals(2, outOfRange.status());
    assertPayload(12, 150_000, 150_000);
  }

  @Test
  void aRequestSentThenHalfClosedIsStillAnsweredBeforeTheServerCloses() throws IOException {
    send(RawWire.request(5, "obj", 1_000, 50_000));
    socket.shutdownOutput();

    assertPayload(5, 1_000, 50_000);
    assertEquals(-1, in.read());
  }

  @Test
  void badMagicIsAnsweredWithABadRequestFrameAndTheConnectionIsClosed() throws IOException {
    send("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

    RawWire.Response response = RawWire.readResponse(in);

    assertEquals(4, response.status());
    assertTrue(response.message().contains("bad magic"), response.message());
    assertEquals(-1, in.read());
  }

  @Test
  void anUnsupportedVersionIsAnsweredWithItsOwnErrorCodeAndTheConnectionIsClosed()
      throws IOException {
    byte[] request = RawWire.request(6, "obj", 0, 1);
    request[4] = (byte) (Protocol.VERSION + 1);
    send(request);

    RawWire.Response response = RawWire.readResponse(in);

    assertEquals(5, response.status());
    assertEquals(-1, in.read());
  }

  @Test
  void anOversizedObjectIdIsAnsweredWithBadRequestCarryingTheRequestId() throws IOException {
    byte[] request = RawWire.request(7, "x".repeat(Protocol.MAX_OBJECT_ID_BYTES + 1), 0, 1);
    send(request);

    RawWire.Response response = RawWire.readResponse(in);

    assertEquals(new RawWire.Response(7, 4, -1, response.message()), response);
    assertTrue(response.message().contains("object id length"), response.message());
    assertEquals(-1, in.read());
  }

  @Test
  void anOffsetAbove2To63IsOutOfRangeNotAnArithmeticAccident() throws IOException {
    send(RawWire.request(8, "obj", -10L, 20));

    RawWire.Response response = RawWire.readResponse(in);

    assertEquals(8, response.requestId());
    assertEquals(2, response.status());
    assertTrue(response.message().contains(Long.toUnsignedString(-10L)), response.message());
  }

  private void send(byte[] bytes) throws IOException {
    socket.getOutputStream().write(bytes);
    socket.getOutputStream().flush();
  }

  private void assertPayload(int requestId, int offset, int length) throws IOException {
    RawWire.Response header = RawWire.readResponse(in);
    assertEquals(new RawWire.Response(requestId, 0, length, null), header);
    byte[] payload = in.readNBytes(length);
    assertArrayEquals(Arrays.copyOfRange(content, offset, offset + length), payload);
  }
}
