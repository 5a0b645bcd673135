package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the response to a connection's current request: emits a {@link ResponseHeader}, then the
 * payload as a series of retained {@link ByteBuf} slices of the received socket buffers. A kept
 * connection's next fetch calls {@link #expectNext} before it sends its request.
 *
 * <p>Unlike a {@code ByteToMessageDecoder}, this never accumulates payload: each slice shares
 * memory with the buffer the transport read into, so a 64 MiB payload is never held in memory at
 * once and never copied. Only the few header bytes are copied, into a small buffer, because a
 * header may be split across reads. Any byte after the promised payload is a protocol violation:
 * the server sent more than it announced.
 */
final class ResponseDecoder extends ChannelInboundHandlerAdapter {

  private enum State {
    HEADER,
    BODY,
    DONE,
    FAILED
  }

  private State state = State.HEADER;
  private ByteBuf header;
  private long remaining;

  /** The last response was read whole: the next bytes are a new response's header. */
  void expectNext() {
    if (state != State.DONE) {
      throw new IllegalStateException(
          "response decoder in state " + state + ", not done with the last response");
    }
    state = State.HEADER;
    remaining = 0;
    if (header != null) {
      header.clear();
    }
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    header = ctx.alloc().buffer(Protocol.OK_HEADER_BYTES);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseHeader();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseHeader();
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ctx.fireChannelRead(msg);
      return;
    }
    try {
      while (in.isReadable()) {
        switch (state) {
          case HEADER -> readHeader(ctx, in);
          case BODY -> readBody(ctx, in);
          case DONE ->
              throw fail(
                  "peer sent " + in.readableBytes() + " bytes beyond the response it announced");
          case FAILED -> in.skipBytes(in.readableBytes());
        }
      }
    } finally {
      in.release();
    }
  }

  private void readBody(ChannelHandlerContext ctx, ByteBuf in) {
    int n = (int) Math.min(in.readableBytes(), remaining);
    remaining -= n;
    if (remaining == 0) {
      state = State.DONE;
    }
    ctx.fireChannelRead(in.readRetainedSlice(n));
  }

  private void readHeader(ChannelHandlerContext ctx, ByteBuf in) {
    // The header grows in steps (fixed prefix, then the status-specific part); copy only up to
    // the size known so far so payload bytes are never copied into the header buffer.
    int needed = headerBytesNeeded();
    while (header.readableBytes() < needed && in.isReadable()) {
      header.writeBytes(in, Math.min(needed - header.readableBytes(), in.readableBytes()));
      needed = headerBytesNeeded();
    }
    if (header.readableBytes() < needed) {
      return;
    }
    ResponseHeader decoded = parseHeader();
    header.clear();
    if (decoded instanceof ResponseHeader.Ok ok && ok.length() > 0) {
      state = State.BODY;
      remaining = ok.length();
    } else {
      state = State.DONE;
    }
    ctx.fireChannelRead(decoded);
  }

  /** Total header size implied by the bytes seen so far; validates each field as it completes. */
  private int headerBytesNeeded() {
    int have = header.readableBytes();
    if (have >= 4 && header.getInt(0) != Protocol.MAGIC) {
      throw fail(String.format("bad magic 0x%08x in response", header.getInt(0)));
    }
    if (have >= 5 && header.getUnsignedByte(4) != Protocol.VERSION) {
      throw fail("unsupported response version " + header.getUnsignedByte(4));
    }
    if (have < Protocol.RESPONSE_PREFIX_BYTES) {
      return Protocol.RESPONSE_PREFIX_BYTES;
    }
    Status status = Status.fromCode(header.getUnsignedByte(9));
    if (status == null) {
      throw fail("unknown response status " + header.getUnsignedByte(9));
    }
    if (status == Status.OK) {
      return Protocol.OK_HEADER_BYTES;
    }
    if (have < Protocol.ERROR_HEADER_FIXED_BYTES) {
      return Protocol.ERROR_HEADER_FIXED_BYTES;
    }
    int messageLength = header.getUnsignedShort(Protocol.RESPONSE_PREFIX_BYTES);
    if (messageLength > Protocol.MAX_ERROR_MESSAGE_BYTES) {
      throw fail(
          "error message length " + messageLength + " exceeds " + Protocol.MAX_ERROR_MESSAGE_BYTES);
    }
    return Protocol.ERROR_HEADER_FIXED_BYTES + messageLength;
  }

  private ResponseHeader parseHeader() {
    int requestId = header.getInt(5);
    Status status = Status.fromCode(header.getUnsignedByte(9));
    if (status == Status.OK) {
      long length = header.getLong(Protocol.RESPONSE_PREFIX_BYTES);
      if (length < 0) {
        throw fail("payload length " + Long.toUnsignedString(length) + " exceeds 2^63-1");
      }
      return new ResponseHeader.Ok(requestId, length);
    }
    int messageLength = header.getUnsignedShort(Protocol.RESPONSE_PREFIX_BYTES);
    String message =
        header.toString(Protocol.ERROR_HEADER_FIXED_BYTES, messageLength, StandardCharsets.UTF_8);
    return new ResponseHeader.Failure(requestId, status, message);
  }

  private ProtocolViolationException fail(String message) {
    state = State.FAILED;
    return new ProtocolViolationException(Status.BAD_REQUEST, 0, message);
  }

  private void releaseHeader() {
    if (header != null) {
      header.release();
      header = null;
    }
  }
}
