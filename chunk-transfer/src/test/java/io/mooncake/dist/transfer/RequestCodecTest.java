package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.EncoderException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RequestCodecTest {

  private final EmbeddedChannel channel =
      new EmbeddedChannel(new RequestEncoder(), new RequestDecoder());

  @AfterEach
  void closeChannel() {
    channel.finishAndReleaseAll();
  }

  @Test
  void anEncodedRequestDecodesToTheSameRequest() {
    ChunkRequest request =
        new ChunkRequest(
            42, "models/llama-70b/shard-00017.safetensors", 123_456_789_012L, 64L << 20);

    ByteBuf frame = encode(request);
    assertEquals(
        Protocol.REQUEST_PREFIX_BYTES + request.objectId().length() + Protocol.REQUEST_SUFFIX_BYTES,
        frame.readableBytes());
    assertEquals(Protocol.MAGIC, frame.getInt(0));
    assertEquals(Protocol.VERSION, frame.getUnsignedByte(4));

    assertTrue(channel.writeInbound(frame));
    assertEquals(request, channel.readInbound());
  }

  @Test
  void aNonAsciiObjectIdSurvivesTheRoundTrip() {
    ChunkRequest request = new ChunkRequest(7, "Gewichte/ÿ-模型-🚀", 0, 1);

    assertTrue(channel.writeInbound(encode(request)));
    assertEquals(request, channel.readInbound());
  }

  @Test
  void aRequestArrivingOneByteAtATimeIsReassembled() {
    ChunkRequest request = new ChunkRequest(3, "obj", 5, 6);
    ByteBuf frame = encode(request);

    while (frame.isReadable()) {
      channel.writeInbound(frame.readRetainedSlice(1));
    }
    frame.release();

    assertEquals(request, channel.readInbound());
    assertNull(channel.readInbound());
  }

  @Test
  void severalRequestsInOneBufferDecodeInOrder() {
    ChunkRequest first = new ChunkRequest(1, "a", 0, 10);
    ChunkRequest second = new ChunkRequest(2, "b", 10, 20);
    ByteBuf both = Unpooled.wrappedBuffer(encode(first), encode(second));

    channel.writeInbound(both);

    assertEquals(first, channel.readInbound());
    assertEquals(second, channel.readInbound());
  }

  @Test
  void unsignedOffsetsAboveLongMaxDecodeAsNegativeForTheServerToReject() {
    ByteBuf frame =
        rawRequest(Protocol.MAGIC, Protocol.VERSION, "x".getBytes(StandardCharsets.UTF_8));
    frame.setLong(frame.writerIndex() - 16, 0xFFFF_FFFF_FFFF_FFFFL);

    channel.writeInbound(frame);

    ChunkRequest decoded = channel.readInbound();
    assertTrue(decoded.offset() < 0, "2^64-1 must not become a valid offset");
  }

  @Test
  void badMagicIsRejectedAsABadRequestAsSoonAsFourBytesArrive() {
    ProtocolViolationException e =
        assertThrows(
            ProtocolViolationException.class,
            () ->
                channel.writeInbound(
                    Unpooled.wrappedBuffer("GET ".getBytes(StandardCharsets.US_ASCII))));

    assertEquals(Status.BAD_REQUEST, e.status());
    assertTrue(e.getMessage().contains("bad magic"), e.getMessage());
  }

  @Test
  void anotherProtocolVersionIsRejectedAsUnsupported() {
    ByteBuf frame = rawRequest(Protocol.MAGIC, 9, "obj".getBytes(StandardCharsets.UTF_8));

    ProtocolViolationException e =
        assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(frame));

    assertEquals(Status.UNSUPPORTED_VERSION, e.status());
    assertTrue(e.getMessage().contains("9"), e.getMessage());
  }

  @Test
  void anOversizedObjectIdIsRejectedBeforeItsBytesArrive() {
    ByteBuf prefix = Unpooled.buffer();
    prefix
        .writeInt(Protocol.MAGIC)
        .writeByte(Protocol.VERSION)
        .writeInt(77)
        .writeShort(Protocol.MAX_OBJECT_ID_BYTES + 1);

    ProtocolViolationException e =
        assertThrows(ProtocolViolationException.class, () -> channel.writeInbound(prefix));

    assertEquals(Status.BAD_REQUEST, e.status());
    assertEquals(77, e.requestId());
    assertTrue(
        e.getMessage().contains(String.valueOf(Protocol.MAX_OBJECT_ID_BYTES + 1)), e.getMessage());
  }

  @Test
  void anEmptyObjectIdIsRejected() {
    ProtocolViolationException e =
        assertThrows(
            ProtocolViolationException.class,
            () -> channel.writeInbound(rawRequest(Protocol.MAGIC, Protocol.VERSION, new byte[0])));

    assertEquals(Status.BAD_REQUEST, e.status());
  }

  @Test
  void anObjectIdThatIsNotUtf8IsRejected() {
    ProtocolViolationException e =
        assertThrows(
            ProtocolViolationException.class,
            () ->
                channel.writeInbound(
                    rawRequest(Protocol.MAGIC, Protocol.VERSION, new byte[] {(byte) 0xC3, 0x28})));

    assertEquals(Status.BAD_REQUEST, e.status());
    assertTrue(e.getMessage().contains("UTF-8"), e.getMessage());
  }

  @Test
  void aTruncatedFrameYieldsNothingUntilTheStreamEndsAndIsThenReported() {
    ByteBuf frame = encode(new ChunkRequest(5, "object", 0, 100));
    ByteBuf truncated = frame.readRetainedSlice(frame.readableBytes() - 3);
    frame.release();

    assertFalse(channel.writeInbound(truncated));
    assertNull(channel.readInbound());

    ProtocolViolationException e = assertThrows(ProtocolViolationException.class, channel::finish);
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
  }

  @Test
  void inputAfterAViolationIsDiscardedEvenIfItLooksLikeAValidFrame() {
    assertThrows(
        ProtocolViolationException.class,
        () -> channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {1, 2, 3, 4})));

    channel.writeInbound(encode(new ChunkRequest(1, "obj", 0, 1)));

    assertNull(channel.readInbound());
  }

  @Test
  void theEncoderRefusesAnObjectIdLongerThanTheLimit() {
    EncoderException e =
        assertThrows(
            EncoderException.class,
            () ->
                channel.writeOutbound(
                    new ChunkRequest(1, "x".repeat(Protocol.MAX_OBJECT_ID_BYTES + 1), 0, 1)));

    assertInstanceOf(IllegalArgumentException.class, e.getCause());
  }

  private ByteBuf encode(ChunkRequest request) {
    EmbeddedChannel encoder = new EmbeddedChannel(new RequestEncoder());
    assertTrue(encoder.writeOutbound(request));
    ByteBuf frame = encoder.readOutbound();
    encoder.finishAndReleaseAll();
    return frame;
  }

  private static ByteBuf rawRequest(int magic, int version, byte[] objectId) {
    ByteBuf buf = Unpooled.buffer();
    buf.writeInt(magic)
        .writeByte(version)
        .writeInt(1)
        .writeShort(objectId.length)
        .writeBytes(objectId);
    buf.writeLong(0).writeLong(1);
    return buf;
  }
}
