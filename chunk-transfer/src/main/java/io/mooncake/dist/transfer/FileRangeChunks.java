package io.mooncake.dist.transfer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.EOFException;
import java.nio.channels.FileChannel;

/**
 * A payload read in chunks for {@link io.netty.handler.stream.ChunkedWriteHandler}, used when TLS
 * is on: encryption needs the bytes in user space, so {@code sendfile} is out. Unlike Netty's
 * {@code ChunkedNioFile}, a file that ends before the range does (shrunk while being sent) fails
 * the write instead of producing empty chunks forever. Owns {@code file} and closes it, unless told
 * it is borrowed (one piece of a stream of an arriving object).
 */
final class FileRangeChunks implements ChunkedInput<ByteBuf> {

  /** Bytes per chunk: several TLS records, and no more than the channel's high water mark. */
  static final int CHUNK_BYTES = 128 * 1024;

  private final FileChannel file;
  private final long start;
  private final long end;
  private final boolean ownsFile;
  private long position;

  FileRangeChunks(FileChannel file, long position, long length) {
    this(file, position, length, true);
  }

  /**
   * @param ownsFile whether closing this input closes {@code file}
   */
  FileRangeChunks(FileChannel file, long position, long length, boolean ownsFile) {
    this.ownsFile = ownsFile;
    this.file = file;
    this.start = position;
    this.position = position;
    this.end = position + length;
  }

  @Override
  public boolean isEndOfInput() {
    return position >= end;
  }

  @Override
  public void close() throws Exception {
    if (ownsFile) {
      file.close();
    }
  }

  @Deprecated
  @Override
  public ByteBuf readChunk(ChannelHandlerContext ctx) throws Exception {
    return readChunk(ctx.alloc());
  }

  @Override
  public ByteBuf readChunk(ByteBufAllocator allocator) throws Exception {
    if (position >= end) {
      return null;
    }
    int size = (int) Math.min(CHUNK_BYTES, end - position);
    ByteBuf chunk = allocator.buffer(size);
    boolean ok = false;
    try {
      while (chunk.readableBytes() < size) {
        int n =
            chunk.writeBytes(file, position + chunk.readableBytes(), size - chunk.readableBytes());
        if (n < 0) {
          throw new EOFException(
              "file ended at byte "
                  + (position + chunk.readableBytes())
                  + " while sending up to byte "
                  + end);
        }
      }
      position += size;
      ok = true;
      return chunk;
    } finally {
      if (!ok) {
        chunk.release();
      }
    }
  }

  @Override
  public long length() {
    return end - start;
  }

  @Override
  public long progress() {
    return position - start;
  }
}
