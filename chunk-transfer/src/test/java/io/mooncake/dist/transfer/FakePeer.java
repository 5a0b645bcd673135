package io.mooncake.dist.transfer;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A one-connection raw-socket server that plays a scripted, usually misbehaving, chunk server.
 * Closing it closes the socket and interrupts the script, then waits for the script to end, so a
 * script blocked on a read or a latch cannot outlive its test.
 */
final class FakePeer implements AutoCloseable {

  interface Script {
    void play(Socket socket, DataInputStream in, OutputStream out) throws Exception;
  }

  private final ServerSocket listener;
  private final Thread thread;
  private final AtomicReference<Socket> connection = new AtomicReference<>();
  private final AtomicReference<Throwable> scriptFailure = new AtomicReference<>();

  /**
   * A member: completes the server side of the handshake with the tests' secret, then plays {@code
   * script}.
   */
  FakePeer(Script script) throws IOException {
    this(
        true,
        (socket, in, out) -> {
          RawWire.serverHandshake(in, out, TestData.secretBytes());
          script.play(socket, in, out);
        });
  }

  /** Plays {@code script} from the first byte: the handshake, if any, is the script's. */
  static FakePeer raw(Script script) throws IOException {
    return new FakePeer(false, script);
  }

  private FakePeer(boolean member, Script script) throws IOException {
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    thread =
        Thread.ofPlatform()
            .name("fake-peer-" + listener.getLocalPort())
            .daemon()
            .start(
                () -> {
                  try (Socket socket = listener.accept()) {
                    connection.set(socket);
                    script.play(
                        socket,
                        new DataInputStream(socket.getInputStream()),
                        socket.getOutputStream());
                  } catch (Throwable t) {
                    scriptFailure.set(t);
                  }
                });
  }

  /**
   * Blocks until the client closes the connection. A close with unread bytes in the client's
   * receive buffer arrives as a reset rather than an end of stream; both mean "closed".
   *
   * @throws AssertionError if the client sends anything instead
   */
  static void awaitClientClose(InputStream in) throws IOException {
    int next;
    try {
      next = in.read();
    } catch (SocketException reset) {
      return;
    }
    if (next != -1) {
      throw new AssertionError("client sent an unexpected byte " + next);
    }
  }

  int port() {
    return listener.getLocalPort();
  }

  /**
   * Waits for a script that ends by itself and returns its own failure, if any; tests assert it is
   * null so a broken fake cannot make a test pass.
   */
  Throwable awaitScriptEnd() throws InterruptedException {
    thread.join();
    return scriptFailure.get();
  }

  @Override
  public void close() throws Exception {
    listener.close();
    Socket socket = connection.get();
    if (socket != null) {
      socket.close();
    }
    thread.interrupt();
    thread.join();
  }
}
