package io.mooncake.dist.worker;

import io.mooncake.dist.transfer.ByteSink;
import io.mooncake.dist.transfer.ChunkClient;
import io.mooncake.dist.transfer.ChunkSecurity;
import io.mooncake.dist.transfer.ChunkServer;
import io.mooncake.dist.transfer.ChunkTransferException;
import io.mooncake.dist.transfer.FetchResult;
import io.mooncake.dist.transfer.ObjectDigest;
import io.mooncake.dist.transfer.ObjectLocator;
import java.util.function.LongConsumer;

/**
 * How a worker's objects cross the network: serving them to peers and fetching them from peers. The
 * worker's database work (claims, source lookups, publishes, leases) never goes through here, so
 * replacing the bytes by a timing model ({@code bench/fleet}) keeps every statement a real node
 * issues. {@link #chunks} is the real one: the Netty chunk server and client.
 */
public interface Transport extends AutoCloseable {

  /** A running server of this node's objects. */
  interface Served extends AutoCloseable {
    int port();

    long bytesServed();

    @Override
    void close();
  }

  /** Starts serving the objects {@code locator} finds on {@code bindHost:port}. */
  Served serve(String bindHost, int port, ObjectLocator locator) throws InterruptedException;

  /**
   * Fetches {@code length} bytes of {@code objectId} from {@code offset} on the peer {@code
   * host:port} into {@code sink}, digesting them with {@code algorithm}; blocks until done.
   */
  FetchResult fetch(
      String host,
      int port,
      String objectId,
      long offset,
      long length,
      ByteSink sink,
      ObjectDigest.Algorithm algorithm,
      LongConsumer progress)
      throws ChunkTransferException;

  @Override
  void close();

  /**
   * How many readers a node sends one object to at a time; the next is answered {@code BUSY} and
   * asks elsewhere. About what an uplink feeds at the pace an object arrives (each of a node's 8
   * copy slots reads one object); the copy-source lookup passes over a source already feeding the
   * object to as many (migration V026, {@code c_readers}), and this is where the limit holds
   * exactly: the lookup sees a reader only once its copy has recorded its source. A job of at most
   * 8 followers never reaches it.
   */
  int READERS_PER_OBJECT = 8;

  /** The chunk protocol: rate limits in bytes per second over all connections, 0 = unlimited. */
  static Transport chunks(
      ChunkSecurity security, long uploadBytesPerSecond, long downloadBytesPerSecond) {
    ChunkClient client =
        new ChunkClient(security, ChunkClient.DEFAULT_IDLE_TIMEOUT, downloadBytesPerSecond);
    return new Transport() {
      @Override
      public Served serve(String bindHost, int port, ObjectLocator locator)
          throws InterruptedException {
        ChunkServer server =
            ChunkServer.start(
                bindHost, port, locator, security, uploadBytesPerSecond, READERS_PER_OBJECT);
        return new Served() {
          @Override
          public int port() {
            return server.port();
          }

          @Override
          public long bytesServed() {
            return server.bytesServed();
          }

          @Override
          public void close() {
            server.close();
          }
        };
      }

      @Override
      public FetchResult fetch(
          String host,
          int port,
          String objectId,
          long offset,
          long length,
          ByteSink sink,
          ObjectDigest.Algorithm algorithm,
          LongConsumer progress)
          throws ChunkTransferException {
        return client.fetchBlocking(
            host, port, objectId, offset, length, sink, algorithm, progress);
      }

      @Override
      public void close() {
        client.close();
      }

      @Override
      public String toString() {
        return security.toString();
      }
    };
  }
}
