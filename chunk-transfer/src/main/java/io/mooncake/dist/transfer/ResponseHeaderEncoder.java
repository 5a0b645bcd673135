package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import java.nio.charset.StandardCharsets;

/**
 * Writes response headers. Payload bytes are not encoded here: the server writes them after an
 * {@link ResponseHeader.Ok} as a file region, which passes through this encoder untouched.
 */
final class ResponseHeaderEncoder extends MessageToByteEncoder<ResponseHeader> {

  ResponseHeaderEncoder() {
    super(ResponseHeader.class);
  }

  @Override
  protected void encode(ChannelHandlerContext ctx, ResponseHeader header, ByteBuf out) {
    encodeTo(header, out);
  }

  /** Writes {@code header} as its frame; also used for the error frames of a refused handshake. */
  static void encodeTo(ResponseHeader header, ByteBuf out) {
    out.writeInt(Protocol.MAGIC);
    out.writeByte(Protocol.VERSION);
    out.writeInt(header.requestId());
    switch (header) {
      case ResponseHeader.Ok ok -> {
        out.writeByte(Status.OK.code());
        out.writeLong(ok.length());
      }
      case ResponseHeader.Failure failure -> {
        byte[] message = failure.message().getBytes(StandardCharsets.UTF_8);
        if (message.length > Protocol.MAX_ERROR_MESSAGE_BYTES) {
          throw new IllegalArgumentException(
              "error message too long: " + message.length + " bytes");
        }
        out.writeByte(failure.status().code());
        out.writeShort(message.length);
        out.writeBytes(message);
      }
    }
  }
}
