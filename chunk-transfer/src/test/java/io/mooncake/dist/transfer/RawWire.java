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
  static final int HANDSHAKE_MAGIC = 0x4D434B41;
  static final int VERSION = 2;
  static final String CLIENT_LABEL = "mooncake chunk v2 client";
  static final String SERVER_LABEL = "mooncake chunk v2 server";

  record Request(int requestId, String objectId, long offset, long length) {}

  record Response(int requestId, int status, long length, String message) {}

  private RawWire() {}

  static byte[] request(int requestId, String objectId, long offset, long length) {
    byte[] id = objectId.getBytes(StandardCharsets.UTF_8);
    return build(
        out -> {
          out.writeInt(MAGIC);
          out.writeByte(VERSION);
          out.writeInt(requestId);
          out.writeShort(id.length);
          out.write(id);
          out.writeLong(offset);
          out.writeLong(length);
        });
  }

  static Request readRequest(DataInputStream in) throws IOException {
    if (in.readInt() != MAGIC || in.readUnsignedByte() != VERSION) {
      throw new IOException("not a version 2 chunk request");
    }
    int requestId = in.readInt();
    byte[] id = in.readNBytes(in.readUnsignedShort());
    return new Request(
        requestId, new String(id, StandardCharsets.UTF_8), in.readLong(), in.readLong());
  }

  static byte[] okHeader(int requestId, long length) {
    return build(
        out -> {
          out.writeInt(MAGIC);
          out.writeByte(VERSION);
          out.writeInt(requestId);
          out.writeByte(0);
          out.writeLong(length);
        });
  }

  static byte[] errorFrame(int requestId, int status, String message) {
    byte[] text = message.getBytes(StandardCharsets.UTF_8);
    return build(
        out -> {
          out.writeInt(MAGIC);
          out.writeByte(VERSION);
          out.writeInt(requestId);
          out.writeByte(status);
          out.writeShort(text.length);
          out.write(text);
        });
  }

  /** Reads a response header; for OK the payload is left in the stream. */
  static Response readResponse(DataInputStream in) throws IOException {
    if (in.readInt() != MAGIC || in.readUnsignedByte() != VERSION) {
      throw new IOException("not a version 2 chunk response");
    }
    int requestId = in.readInt();
    int status = in.readUnsignedByte();
    if (status == 0) {
      return new Response(requestId, 0, in.readLong(), null);
    }
    byte[] text = in.readNBytes(in.readUnsignedShort());
    return new Response(requestId, status, -1, new String(text, StandardCharsets.UTF_8));
  }

  /** Reads the server's CHALLENGE and returns its nonce. */
  static byte[] readChallenge(DataInputStream in) throws IOException {
    int magic = in.readInt();
    int version = in.readUnsignedByte();
    if (magic != HANDSHAKE_MAGIC || version != VERSION) {
      throw new IOException(
          String.format("not a version 2 challenge: magic 0x%08x version %d", magic, version));
    }
    return in.readNBytes(32);
  }

  static byte[] proofFrame(byte[] clientNonce, byte[] mac) {
    return build(
        out -> {
          out.writeInt(HANDSHAKE_MAGIC);
          out.writeByte(VERSION);
          out.write(clientNonce);
          out.write(mac);
        });
  }

  /**
   * HMAC-SHA256(secret, label || 0x00 || serverNonce || clientNonce), written out from PROTOCOL.md.
   */
  static byte[] mac(byte[] secret, String label, byte[] serverNonce, byte[] clientNonce) {
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(new javax.crypto.spec.SecretKeySpec(secret, "HmacSHA256"));
      return mac.doFinal(
          concat(label.getBytes(StandardCharsets.US_ASCII), new byte[1], serverNonce, clientNonce));
    } catch (java.security.GeneralSecurityException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Plays a member client's side of the handshake on a raw socket; fails if the server's proof is
   * wrong.
   */
  static void clientHandshake(DataInputStream in, java.io.OutputStream out, byte[] secret)
      throws IOException {
    byte[] serverNonce = readChallenge(in);
    byte[] clientNonce = TestData.bytes(32, System.nanoTime());
    out.write(proofFrame(clientNonce, mac(secret, CLIENT_LABEL, serverNonce, clientNonce)));
    out.flush();
    if (in.readInt() != HANDSHAKE_MAGIC || in.readUnsignedByte() != VERSION) {
      throw new IOException("no ACCEPT frame after the proof");
    }
    if (!java.util.Arrays.equals(
        mac(secret, SERVER_LABEL, serverNonce, clientNonce), in.readNBytes(32))) {
      throw new IOException("server proof does not match");
    }
  }

  /**
   * Plays a member server's side of the handshake on a raw socket; fails if the client's proof is
   * wrong.
   */
  static void serverHandshake(DataInputStream in, java.io.OutputStream out, byte[] secret)
      throws IOException {
    byte[] serverNonce = TestData.bytes(32, System.nanoTime());
    out.write(challengeFrame(serverNonce));
    out.flush();
    if (in.readInt() != HANDSHAKE_MAGIC || in.readUnsignedByte() != VERSION) {
      throw new IOException("no PROOF frame after the challenge");
    }
    byte[] clientNonce = in.readNBytes(32);
    if (!java.util.Arrays.equals(
        mac(secret, CLIENT_LABEL, serverNonce, clientNonce), in.readNBytes(32))) {
      throw new IOException("client proof does not match");
    }
    out.write(acceptFrame(mac(secret, SERVER_LABEL, serverNonce, clientNonce)));
    out.flush();
  }

  static byte[] challengeFrame(byte[] serverNonce) {
    return build(
        out -> {
          out.writeInt(HANDSHAKE_MAGIC);
          out.writeByte(VERSION);
          out.write(serverNonce);
        });
  }

  static byte[] acceptFrame(byte[] mac) {
    return build(
        out -> {
          out.writeInt(HANDSHAKE_MAGIC);
          out.writeByte(VERSION);
          out.write(mac);
        });
  }

  static byte[] concat(byte[]... parts) {
    return build(
        out -> {
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
