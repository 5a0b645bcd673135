package io.mooncake.dist.transfer;

/**
 * What a completed fetch wrote.
 *
 * <p>The digest covers exactly the bytes received from the peer. The client does not know what the
 * bytes should hash to: the caller compares {@code sha256Hex} against its own expectation and treats a
 * mismatch as a failed transfer.
 *
 * @param bytes     number of bytes written into the target
 * @param sha256Hex lower-case hex SHA-256 of those bytes
 */
public record FetchResult(long bytes, String sha256Hex) {
}
