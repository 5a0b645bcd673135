package io.mooncake.dist.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Writes a byte range of a file with {@code O_DIRECT}: bytes are gathered in a block-aligned
 * staging buffer and written in large aligned pieces straight to the device, bypassing the page
 * cache. On this class of machine filling the page cache costs more CPU than the network and the
 * hash together (dd measured ~0.6 GiB/s buffered vs ~1 GiB/s direct, at a third of the system
 * time), so a follower that writes directly keeps up with the wire.
 *
 * <p>{@code O_DIRECT} needs the file position, the length and the buffer address aligned to the
 * file system's block size. The range's start must be aligned (object offsets are multiples of the
 * chunk size); a tail shorter than a block (the end of an object whose length is not a multiple of
 * the block) goes through {@code buffered}, a normal channel on the same file. Memory: one staging
 * buffer per sink in flight, taken from a small pool at its first byte and returned when the sink
 * finishes or aborts, so steady copying allocates no direct memory (a direct buffer left to the
 * garbage collector is freed late, which shows up as resident memory), and a fetch that gets no
 * byte (a source without the object, a refused connection) takes none: allocating 4 MiB of direct
 * memory zeroes it, which was a third of the fleet benchmark's simulator CPU (bench/fleet.sh: its
 * thousand nodes share one JVM and one pool, and their transfers write no byte).
 */
public final class DirectFileSink implements ByteSink {
  /** Staging size: large enough that each write is one efficient device request. */
  public static final int STAGING_BYTES = 4 * 1024 * 1024;

  /**
   * A slow stream's staged bytes go to the file once at least this many are staged and {@link
   * #FLUSH_AFTER_NANOS} have passed since the last write to the file, before the buffer is full.
   * What a node relays while an object arrives ({@link Arrival}, cut-through) is what is in the
   * file, so with only full-buffer writes a relay of an 8 MiB object waited for half of it: at 100
   * Mbit/s with seven seed pulls sharing the seed's uplink (1.8 MB/s each) 2.4 s before any relay
   * began, and the last 4 MiB reached the readers only after the whole object had (issue 20's
   * per-link timeline: the followers' downlinks at 1/7 for the job's first 3 s, and each follower's
   * uplink silent for seconds, then flooded). A fast stream (loopback, 1 GiB/s) still fills the
   * buffer first and writes 4 MiB at a time (any stream over 84 MB/s does: at 20 ms, streams of 128
   * MB/s wrote 2.5 MB pieces and bench/transfer.sh on a 0.23 GiB/s disk took 9.9 s instead of 8.6
   * in one A/B); a 1.8 MB/s one writes about every 256 KiB (0.15 s).
   */
  public static final int MIN_FLUSH_BYTES = 256 * 1024;

  /** See {@link #MIN_FLUSH_BYTES}. */
  public static final long FLUSH_AFTER_NANOS = 50_000_000L;

  /**
   * The channel direct writes go to, asked for at each aligned write (so an implementation can open
   * it at the first one: a fetch that gets no byte then holds no second descriptor, and the fleet
   * benchmark's thousand simulated nodes, whose transfers write no byte, hold 8,000 fewer).
   */
  @FunctionalInterface
  public interface DirectChannel {
    FileChannel get() throws IOException;
  }

  private final DirectChannel direct;
  private final FileChannel buffered;
  private final int block;

  /** Taken from the pool at the first byte; null before it and after finish or abort. */
  private ByteBuffer staging;

  private boolean closed;
  private final long start;
  private long position;
  private final java.util.function.LongSupplier clock;
  private long lastFlush;

  /**
   * @param direct the file opened with {@code ExtendedOpenOption.DIRECT} and WRITE
   * @param buffered the same file opened normally with WRITE, for the unaligned tail
   * @param position where the range starts; must be a multiple of {@code blockSize}
   * @param blockSize the file system's block size (a power of two)
   */
  public DirectFileSink(FileChannel direct, FileChannel buffered, long position, int blockSize) {
    this(() -> direct, buffered, position, blockSize, System::nanoTime);
  }

  /** As above, the direct channel asked for at each aligned write ({@link DirectChannel}). */
  public DirectFileSink(DirectChannel direct, FileChannel buffered, long position, int blockSize) {
    this(direct, buffered, position, blockSize, System::nanoTime);
  }

  /** As above, with the clock (nanoseconds) that times {@link #FLUSH_AFTER_NANOS}. */
  DirectFileSink(
      DirectChannel direct,
      FileChannel buffered,
      long position,
      int blockSize,
      java.util.function.LongSupplier clock) {
    if (blockSize <= 0 || Integer.bitCount(blockSize) != 1 || position % blockSize != 0) {
      throw new IllegalArgumentException(
          "direct writes need a power-of-two block size and an aligned start: position "
              + position
              + ", block "
              + blockSize);
    }
    this.direct = direct;
    this.buffered = buffered;
    this.block = blockSize;
    this.position = position;
    this.start = position;
    this.clock = clock;
    this.lastFlush = clock.getAsLong();
  }

  /**
   * True when a range starting at {@code position} can be written directly with this block size.
   */
  public static boolean aligned(long position, int blockSize) {
    return blockSize > 0 && Integer.bitCount(blockSize) == 1 && position % blockSize == 0;
  }

  @Override
  public void write(ByteBuffer bytes) throws IOException {
    if (staging == null && bytes.hasRemaining()) {
      if (closed) {
        throw new IllegalStateException("write after the sink finished or aborted");
      }
      staging = StagingPool.take(block);
    }
    while (bytes.hasRemaining()) {
      int n = Math.min(bytes.remaining(), staging.remaining());
      ByteBuffer slice = bytes.duplicate();
      slice.limit(slice.position() + n);
      staging.put(slice);
      bytes.position(bytes.position() + n);
      if (!staging.hasRemaining()) {
        flushAligned();
      }
    }
    if (staging != null
        && staging.position() >= MIN_FLUSH_BYTES
        && clock.getAsLong() - lastFlush >= FLUSH_AFTER_NANOS) {
      flushAligned();
    }
  }

  @Override
  public void finish() throws IOException {
    if (staging == null) {
      abort();
      return;
    }
    flushAligned();
    staging.flip();
    while (staging.hasRemaining()) {
      position += buffered.write(staging, position);
    }
    abort();
  }

  /** Bytes written to the file so far (staged bytes not yet written are not counted). */
  @Override
  public long stored() {
    return position - start;
  }

  @Override
  public void abort() {
    closed = true;
    ByteBuffer b = staging;
    staging = null;
    if (b != null) {
      StagingPool.give(b);
    }
  }

  /** Aligned staging buffers, reused across fetches; at most {@code MAX_POOLED} are kept. */
  private static final class StagingPool {
    private static final int MAX_POOLED = 8;
    private static final java.util.concurrent.ConcurrentLinkedQueue<ByteBuffer> POOL =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static final java.util.concurrent.atomic.AtomicInteger SIZE =
        new java.util.concurrent.atomic.AtomicInteger();

    static ByteBuffer take(int blockSize) {
      ByteBuffer b = POOL.poll();
      if (b != null) {
        SIZE.decrementAndGet();
        if (b.alignmentOffset(0, blockSize) == 0) {
          return b.clear();
        }
      }
      return ByteBuffer.allocateDirect(STAGING_BYTES + blockSize)
          .alignedSlice(blockSize)
          .limit(STAGING_BYTES)
          .slice();
    }

    static void give(ByteBuffer b) {
      if (SIZE.incrementAndGet() <= MAX_POOLED) {
        POOL.add(b.clear());
      } else {
        SIZE.decrementAndGet();
      }
    }
  }

  /** Writes the block-aligned part of the staged bytes directly and keeps the rest staged. */
  private void flushAligned() throws IOException {
    int alignedBytes = staging.position() & -block;
    if (alignedBytes == 0) {
      return;
    }
    lastFlush = clock.getAsLong();
    staging.flip();
    int rest = staging.limit() - alignedBytes;
    staging.limit(alignedBytes);
    FileChannel out = direct.get();
    while (staging.hasRemaining()) {
      position += out.write(staging, position);
    }
    // Move the unaligned remainder (< one block) to the front of the buffer.
    staging.limit(alignedBytes + rest);
    staging.compact();
  }
}
