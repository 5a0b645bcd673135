package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ResponseCodecTest {

  private final EmbeddedChannel channel = new EmbeddedChannel(new ResponseDecoder());

  @AfterEach
  void closeChannel() {
    channel.finishAndReleaseAll();
  }

  @Test
  void anOkHeaderDecodesAndThePayloadFollowsAsItArrives() {
    byte[] payload = "0123456789".getBytes(StandardCharsets.US_ASCII);

    channel.writeInbound(
        Unpooled.wrappedBuffer(
            encode(new ResponseHeader.Ok(9, payload.length)),
            Unpooled.wrappedBuffer(payload, 0, 4)));
    channel.writeInbound(Unpooled.wrappedBuffer(payload, 4, 6));

    assertEquals(new ResponseHeader.Ok(9, payload.length), channel.readInbound());
    assertPayload("0123", channel.readInbound());
    assertPayload("456789", channel.readInbound());
    assertNull(channel.readInbound());
  }

  @Test
  void anOkHeaderArrivingOneByteAtATimeDecodes() {
    ByteBuf header = encode(new ResponseHeader.Ok(1, 1L << 40));

    while (header.isReadable()) {
      channel.writeInbound(header.readRetainedSlice(1));
    }
    header.release();

    assertEquals(new ResponseHeader.Ok(1, 1L << 40), channel.readInbound());
  }

  @ParameterizedTest
  @EnumSource(value = Status.class, names = "OK", mode = EnumSource.Mode.EXCLUDE)
  void everyErrorFrameDecodesWithItsStatusAndMessage(Status status) {
    ResponseHeader.Failure failure =
        ResponseHeader.Failure.of(12, status, "object not here: weights/é/1");
    ByteBuf frame = encode(failure);
    assertEquals(status.code(), frame.getUnsignedByte(9));

    channel.writeInbound(frame);

    assertEquals(failure, channel.readInbound());
  }

  @Test
  void anErrorFrameSplitInsideItsMessageDecodes() {
    ResponseHeader.Failure failure =
        ResponseHeader.Failure.of(3, Status.SOURCE_ERROR, "cannot read object file: /data/x");
    ByteBuf frame = encode(failure);

    channel.writeInbound(frame.readRetainedSlice(Protocol.ERROR_HEADER_FIXED_BYTES + 5));
    assertNull(channel.readInbound());
    channel.writeInbound(frame);

    assertEquals(failure, channel.readInbound());
  }

  @Test
  void aZeroLengthOkIsCompleteWithoutPayload() {
    channel.writeInbound(encode(new ResponseHeader.Ok(4, 0)));

    assertEquals(new ResponseHeader.Ok(4, 0), channel.readInbound());
    assertNull(channel.readInbound());
  }

  @Test
  void bytesBeyondThePromisedPayloadAreAProtocolViolation() {
    ByteBuf frame =
        Unpooled.wrappedBuffer(
            encode(new ResponseHeader.Ok(2, 3)),
            Unpooled.wrappedBuffer("abcEXTRA".getBytes(StandardCharsets.US_ASCII)));

    ProtocolViolationException e =
        assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));

    assertTrue(e.getMessage().contains("5 bytes beyond"), e.getMessage());
    assertEquals(new ResponseHeader.Ok(2, 3), channel.readInbound());
    assertPayload("abc", channel.readInbound());
  }

  @Test
  void aByteAfterAnErrorFrameIsAProtocolViolation() {
    channel.writeInbound(
        encode(ResponseHeader.Failure.of(1, Status.NOT_FOUND, "object not here: x")));

    assertThrows(
        ProtocolViolationException.class,
        () -> channel.writeInbound(Unpooled.wrappedBuffer(new byte[1])));
  }

  @Test
  void badMagicIsAProtocolViolation() {
    ProtocolViolationException e =
        assertThrows(
            ProtocolViolationException.class,
            () ->
                channel.writeInbound(
                    Unpooled.wrappedBuffer(
                        "HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII))));

    assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
  }

  @Test
  void anotherVersionIsAProtocolViolation() {
    ByteBuf frame = encode(new ResponseHeader.Ok(1, 1));
    frame.setByte(4, Protocol.VERSION + 1);

    assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));
  }

  @Test
  void anUnknownStatusIsAProtocolViolation() {
    ByteBuf frame = encode(new ResponseHeader.Ok(1, 1));
    frame.setByte(9, 200);

    ProtocolViolationException e =
        assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));

    assertTrue(e.getMessage().contains("200"), e.getMessage());
  }

  @Test
  void anErrorMessageLengthAboveTheLimitIsAProtocolViolation() {
    ByteBuf frame = Unpooled.buffer();
    frame
        .writeInt(Protocol.MAGIC)
        .writeByte(Protocol.VERSION)
        .writeInt(1)
        .writeByte(Status.SOURCE_ERROR.code())
        .writeShort(Protocol.MAX_ERROR_MESSAGE_BYTES + 1);

    assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));
  }

  @Test
  void aPayloadLengthAbove2To63IsAProtocolViolation() {
    ByteBuf frame = encode(new ResponseHeader.Ok(1, 1));
    frame.setLong(Protocol.RESPONSE_PREFIX_BYTES, -1L);

    assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));
  }

  @Test
  void anOverlongErrorMessageIsCutToTheProtocolLimitOnACharacterBoundary() {
    ResponseHeader.Failure failure =
        ResponseHeader.Failure.of(1, Status.SOURCE_ERROR, "é🚀".repeat(2000));

    byte[] bytes = failure.message().getBytes(StandardCharsets.UTF_8);
    assertTrue(bytes.length <= Protocol.MAX_ERROR_MESSAGE_BYTES, "length " + bytes.length);
    assertTrue(failure.message().endsWith("..."));
    assertEquals(
        failure.message(), new String(bytes, StandardCharsets.UTF_8), "no split character");

    channel.writeInbound(encode(failure));
    assertEquals(failure, channel.readInbound());
  }

  private static ByteBuf encode(ResponseHeader header) {
    EmbeddedChannel encoder = new EmbeddedChannel(new ResponseHeaderEncoder());
    assertTrue(encoder.writeOutbound(header));
    ByteBuf frame = encoder.readOutbound();
    encoder.finishAndReleaseAll();
    return frame;
  }

  private static void assertPayload(String expected, ByteBuf actual) {
    try {
      assertEquals(
          expected, actual.toString(StandardCharsets.US_ASCII), ByteBufUtil.hexDump(actual));
    } finally {
      actual.release();
    }
  }
}
