package io.mooncake.dist.transfer;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The wire format written out by hand from PROTOCOL.md, independent of the Netty codecs, for tests
 * that play a raw-socket client or a misbehaving server.
 */
final class RawWire {

    static final int MAGIC = 0x4D434B54;

    record Request(int requestId, String objectId, long offset, long length) {
    }

    record Response(int requestId, int status, long length, String message) {
    }

    private RawWire() {
    }

    static byte[] request(int requestId, String objectId, long offset, long length) {
        byte[] id = objectId.getBytes(StandardCharsets.UTF_8);
        return build(out -> {
            out.writeInt(MAGIC);
            out.writeByte(1);
            out.writeInt(requestId);
            out.writeShort(id.length);
            out.write(id);
            out.writeLong(offset);
            out.writeLong(length);
        });
    }

    static Request readRequest(DataInputStream in) throws IOException {
        if (in.readInt() != MAGIC || in.readUnsignedByte() != 1) {
            throw new IOException("not a version 1 chunk request");
        }
        int requestId = in.readInt();
        byte[] id = in.readNBytes(in.readUnsignedShort());
        return new Request(requestId, new String(id, StandardCharsets.UTF_8), in.readLong(), in.readLong());
    }

    static byte[] okHeader(int requestId, long length) {
        return build(out -> {
            out.writeInt(MAGIC);
            out.writeByte(1);
            out.writeInt(requestId);
            out.writeByte(0);
            out.writeLong(length);
        });
    }

    static byte[] errorFrame(int requestId, int status, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        return build(out -> {
            out.writeInt(MAGIC);
            out.writeByte(1);
            out.writeInt(requestId);
            out.writeByte(status);
            out.writeShort(text.length);
            out.write(text);
        });
    }

    /** Reads a response header; for OK the payload is left in the stream. */
    static Response readResponse(DataInputStream in) throws IOException {
        if (in.readInt() != MAGIC || in.readUnsignedByte() != 1) {
            throw new IOException("not a version 1 chunk response");
        }
        int requestId = in.readInt();
        int status = in.readUnsignedByte();
        if (status == 0) {
            return new Response(requestId, 0, in.readLong(), null);
        }
        byte[] text = in.readNBytes(in.readUnsignedShort());
        return new Response(requestId, status, -1, new String(text, StandardCharsets.UTF_8));
    }

    static byte[] concat(byte[]... parts) {
        return build(out -> {
            for (byte[] part : parts) {
                out.write(part);
            }
        });
    }

    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] build(Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }
}
