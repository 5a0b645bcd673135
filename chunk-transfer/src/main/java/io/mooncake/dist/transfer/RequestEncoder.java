package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import java.nio.charset.StandardCharsets;

/** Writes a {@link ChunkRequest} as one request frame (see PROTOCOL.md). */
final class RequestEncoder extends MessageToByteEncoder<ChunkRequest> {

  RequestEncoder() {
    super(ChunkRequest.class);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, ChunkRequest request, ByteBuf out) {
    byte[] id = request.objectId().getBytes(StandardCharsets.UTF_8);
    if (id.length == 0 || id.length > Protocol.MAX_OBJECT_ID_BYTES) {
      throw new IllegalArgumentException(
          "object id must be 1.."
              + Protocol.MAX_OBJECT_ID_BYTES
              + " UTF-8 bytes, got "
              + id.length);
    }
    out.ensureWritable(Protocol.REQUEST_PREFIX_BYTES + id.length + Protocol.REQUEST_SUFFIX_BYTES);
    out.writeInt(Protocol.MAGIC);
    out.writeByte(Protocol.VERSION);
    out.writeInt(request.requestId());
    out.writeShort(id.length);
    out.writeBytes(id);
    out.writeLong(request.offset());
    out.writeLong(request.length());
  }
}
