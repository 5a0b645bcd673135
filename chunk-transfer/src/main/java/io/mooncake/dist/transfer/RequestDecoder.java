package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Decodes request frames into {@link ChunkRequest}s.
 *
 * <p>Checks the magic, version and object id length as soon as their bytes arrive, so a garbage or
 * hostile stream is rejected without buffering up to a full frame. After the first violation it
 * discards all further input: the connection is about to be closed and nothing after a broken frame
 * can be trusted to start on a frame boundary.
 */
final class RequestDecoder extends ByteToMessageDecoder {

  private boolean failed;

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    int start = in.readerIndex();
    int available = in.readableBytes();
    if (available >= 4 && in.getInt(start) != Protocol.MAGIC) {
      throw fail(in, Status.BAD_REQUEST, 0, String.format("bad magic 0x%08x", in.getInt(start)));
    }
    if (available >= 5 && in.getUnsignedByte(start + 4) != Protocol.VERSION) {
      throw fail(
          in,
          Status.UNSUPPORTED_VERSION,
          0,
          "unsupported protocol version "
              + in.getUnsignedByte(start + 4)
              + ", this server speaks "
              + Protocol.VERSION);
    }
    if (available < Protocol.REQUEST_PREFIX_BYTES) {
      return;
    }
    int requestId = in.getInt(start + 5);
    int idLength = in.getUnsignedShort(start + 9);
    if (idLength == 0 || idLength > Protocol.MAX_OBJECT_ID_BYTES) {
      throw fail(
          in,
          Status.BAD_REQUEST,
          requestId,
          "object id length " + idLength + " outside 1.." + Protocol.MAX_OBJECT_ID_BYTES);
    }
    if (available < Protocol.REQUEST_PREFIX_BYTES + idLength + Protocol.REQUEST_SUFFIX_BYTES) {
      return;
    }
    String objectId;
    try {
      objectId =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(in.nioBuffer(start + Protocol.REQUEST_PREFIX_BYTES, idLength))
              .toString();
    } catch (CharacterCodingException e) {
      throw fail(in, Status.BAD_REQUEST, requestId, "object id is not valid UTF-8");
    }
    in.skipBytes(Protocol.REQUEST_PREFIX_BYTES + idLength);
    long offset = in.readLong();
    long length = in.readLong();
    out.add(new ChunkRequest(requestId, objectId, offset, length));
  }

  @Override
  protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
      throws Exception {
    decode(ctx, in, out);
    if (!failed && in.isReadable()) {
      throw fail(
          in,
          Status.BAD_REQUEST,
          0,
          "truncated request frame: stream ended " + in.readableBytes() + " bytes into a frame");
    }
  }

  private ProtocolViolationException fail(
      ByteBuf in, Status status, int requestId, String message) {
    failed = true;
    in.skipBytes(in.readableBytes());
    return new ProtocolViolationException(status, requestId, message);
  }
}
