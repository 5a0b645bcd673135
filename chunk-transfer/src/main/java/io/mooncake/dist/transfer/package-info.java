/**
 * Moves byte ranges of large files between nodes: the room where model weights actually travel.
 *
 * <p>A {@link io.mooncake.dist.transfer.ChunkServer} serves objects that an {@link
 * io.mooncake.dist.transfer.ObjectLocator} finds on the local disk, sending each requested range
 * with {@code sendfile} so payload bytes never enter the JVM heap. A {@link
 * io.mooncake.dist.transfer.ChunkClient} fetches a range from a peer and streams it straight into a
 * caller-owned {@link java.nio.channels.FileChannel} with positional writes while hashing it, so a
 * 64 MiB chunk costs a few socket buffers of memory, not 64 MiB.
 *
 * <p>Both sides take a {@link io.mooncake.dist.transfer.ChunkSecurity}: the cluster secret that
 * every connection's handshake proves both ways before any request, and optionally {@link
 * io.mooncake.dist.transfer.ChunkTls} (mutual TLS; payloads are then encrypted in user space
 * instead of sent with {@code sendfile}). Where the secret comes from is the caller's business.
 *
 * <p>This package knows nothing about databases, schedules or which peer holds what: callers decide
 * what to fetch from where, verify the returned digest ({@link ObjectDigest}) against their own
 * expectation, and decide whether to retry. Failures are reported as {@link
 * io.mooncake.dist.transfer.ChunkTransferException} with a {@link
 * io.mooncake.dist.transfer.ChunkTransferException.Kind} a caller can act on; the client never
 * retries on its own. The wire format is specified in {@code chunk-transfer/PROTOCOL.md}.
 */
package io.mooncake.dist.transfer;
