package io.mooncake.dist.transfer;

/**
 * Constants of the chunk wire protocol. {@code chunk-transfer/PROTOCOL.md} is the specification;
 * these are its numbers. All integers on the wire are big-endian.
 */
public final class Protocol {

    /** First four bytes of every request and response frame: ASCII {@code "MCKT"}. */
    public static final int MAGIC = 0x4D434B54;

    /** The only protocol version this code speaks. */
    public static final int VERSION = 1;

    /** Longest object id, in UTF-8 bytes. */
    public static final int MAX_OBJECT_ID_BYTES = 1024;

    /** Longest error message, in UTF-8 bytes; longer messages are truncated by the sender. */
    public static final int MAX_ERROR_MESSAGE_BYTES = 4096;

    /** magic(4) version(1) requestId(4) objectIdLength(2). */
    static final int REQUEST_PREFIX_BYTES = 11;

    /** offset(8) length(8), after the object id. */
    static final int REQUEST_SUFFIX_BYTES = 16;

    /** magic(4) version(1) requestId(4) status(1). */
    static final int RESPONSE_PREFIX_BYTES = 10;

    /** Response prefix plus payloadLength(8). */
    static final int OK_HEADER_BYTES = RESPONSE_PREFIX_BYTES + 8;

    /** Response prefix plus messageLength(2); the message follows. */
    static final int ERROR_HEADER_FIXED_BYTES = RESPONSE_PREFIX_BYTES + 2;

    private Protocol() {
    }
}
