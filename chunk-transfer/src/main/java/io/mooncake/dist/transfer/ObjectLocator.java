package io.mooncake.dist.transfer;

import java.io.IOException;
import java.util.Optional;

/**
 * Resolves an object id to where its bytes are on this node.
 *
 * <p>The chunk server calls this once per request, off the network I/O threads, so an
 * implementation may do a little blocking work (a stat, a local lookup). An {@link IOException} or
 * runtime exception becomes a {@code SOURCE_ERROR} response for that request; it never stops the
 * server.
 */
@FunctionalInterface
public interface ObjectLocator {

  /**
   * Finds the object's bytes.
   *
   * @param objectId the id the peer asked for
   * @return where the object's bytes are, or empty if this node does not hold the object
   * @throws IOException if the lookup itself failed
   */
  Optional<FileRange> locate(String objectId) throws IOException;
}
