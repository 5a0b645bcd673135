package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.Checksums;
import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ModelPaths;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.domain.TaskPayload;
import io.mooncake.dist.transfer.ObjectDigest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's local model store under {@code <data-dir>/models}. Each model file is stored once; an
 * object is a byte range of it. Incomplete files live at {@code <final>.partial} and reach their
 * final name only by an fsynced atomic rename, so the final name always holds a complete file.
 *
 * <p>Thread-safe. Concurrent {@link #openForObjectWrite} calls for one file share one partial file
 * without truncating each other; a download is expected to be the only writer of its files.
 */
public final class ModelStore {
  private static final Logger log = LoggerFactory.getLogger(ModelStore.class);

  private static final java.nio.file.LinkOption NOFOLLOW = java.nio.file.LinkOption.NOFOLLOW_LINKS;

  private final Path dataDir;
  private final SourceOpener sources;
  private final VerifiedStamps stamps;
  private final DownloadJournal journal;
  private final boolean fullReverify;

  /** The digest this node publishes for the objects it downloads. */
  private final ObjectDigest.Algorithm publishes;

  /** Bytes seed reuse has read and hashed (not the files it found unchanged since hashed). */
  private final java.util.concurrent.atomic.LongAdder verifyBytesHashed =
      new java.util.concurrent.atomic.LongAdder();

  /** A store under {@code dataDir}, creating {@code dataDir/models} if missing. */
  public ModelStore(Path dataDir) {
    this(dataDir, new SourceOpener());
  }

  /** As {@link #ModelStore(Path)}, reading download sources through {@code sources}. */
  public ModelStore(Path dataDir, SourceOpener sources) {
    this(dataDir, sources, false);
  }

  /**
   * As above; with {@code fullReverify} seed reuse re-hashes every file even when it is unchanged
   * since this node hashed it (see {@link VerifiedStamps}).
   */
  public ModelStore(Path dataDir, SourceOpener sources, boolean fullReverify) {
    this(dataDir, sources, fullReverify, ObjectDigest.Algorithm.CRC32C_CRC32);
  }

  /** As above; a download publishes its objects' digests in {@code publishes}. */
  public ModelStore(
      Path dataDir, SourceOpener sources, boolean fullReverify, ObjectDigest.Algorithm publishes) {
    this.dataDir = dataDir.toAbsolutePath().normalize();
    this.sources = sources;
    this.fullReverify = fullReverify;
    this.publishes = java.util.Objects.requireNonNull(publishes, "publishes");
    this.stamps = new VerifiedStamps(this.dataDir);
    this.journal = new DownloadJournal(this.dataDir);
    Path models = this.dataDir.resolve("models");
    try {
      Files.createDirectories(models, FileOps.DIR_MODE);
      DataTree.closeToOthers(models);
    } catch (IOException e) {
      // Without its models directory the worker cannot do anything; fail at startup, loudly.
      throw new UncheckedIOException("cannot create the model store directory " + models, e);
    }
  }

  /** Bytes seed reuse has read and hashed since this store was made. */
  public long verifyBytesHashed() {
    return verifyBytesHashed.sum();
  }

  public Path dataDir() {
    return dataDir;
  }

  /** {@code <data-dir>/models/<provider>/<model_id>/<revision>/<format>}. */
  public Path modelDir(ModelRef model) {
    return ModelPaths.modelDir(dataDir, model);
  }

  /** Where the complete file lives. @throws IllegalArgumentException if the path escapes */
  public Path finalPath(ModelRef model, FilePlan file) {
    return ModelPaths.file(modelDir(model), file.path());
  }

  /** Where the file lives while incomplete: {@code <final>.partial}, same directory. */
  public Path partialPath(ModelRef model, FilePlan file) {
    return FileOps.partialOf(finalPath(model, file));
  }

  /**
   * MODEL_DOWNLOAD: streams every file of the payload from its download URL into its partial file
   * in one pass, hashing each object and the whole file as the bytes go by, then commits it under
   * its final name. Files committed before a failure stay (they are complete); the exception says
   * whether retrying can help.
   *
   * <p>Resume: each object whose bytes are fsynced is recorded in the file's {@link
   * DownloadJournal}. A failure a retry can fix keeps the partial file and that record; a permanent
   * one removes both. The next attempt (after a retry, or a restart after SIGKILL) hashes the
   * recorded objects again ({@link KeptPrefix}), keeps the longest run from byte 0 that still
   * matches ({@link ResumePlan}), and asks the source only for the bytes after it (HTTP {@code
   * Range}, with {@code If-Range} when the source gave a validator). A source that answers with the
   * whole file instead is read from the start. The whole-file sha256 covers the kept bytes too.
   *
   * @param progress receives cumulative bytes written across all files of the payload
   * @return object id to its digest ({@code "<algorithm>:<hex>"}, the store's published algorithm)
   *     for every object, in manifest order
   */
  public LinkedHashMap<String, String> download(TaskPayload payload, LongConsumer progress)
      throws StoreException {
    return download(payload, progress, (file, object, digest) -> {});
  }

  /**
   * As {@link #download(TaskPayload, LongConsumer)}, handing each object to {@code sink} as soon as
   * its bytes are written, fsynced and hashed, while later objects are still being read: peers can
   * start copying it from the partial file (pipelining). The fsyncs and the hand-outs run on a
   * {@link BackgroundPublisher} thread, so reading and writing never wait for them. A failure after
   * some objects were handed out still fails the whole download; the caller withdraws what it
   * published.
   */
  public LinkedHashMap<String, String> download(
      TaskPayload payload, LongConsumer progress, ObjectSink sink) throws StoreException {
    if (payload.fillsIn()) {
      return fillIn(payload, progress, sink);
    }
    LinkedHashMap<String, String> result = new LinkedHashMap<>();
    long before = 0;
    for (FilePlan file : payload.files()) {
      Map<String, String> digests =
          downloadFile(payload.model(), payload.sourcesOrAny(), file, before, progress, sink);
      for (ObjectPlan o : file.objects()) {
        result.put(o.objectId(), digests.get(o.objectId()));
      }
      before += file.sizeBytes();
    }
    log.info(
        "downloaded {} file(s), {} bytes, {} object(s) of {}",
        payload.files().size(),
        before,
        result.size(),
        payload.model());
    return result;
  }

  /**
   * The download of a seed that took over from a failed one: only the objects not {@code held},
   * into the files' byte ranges, nothing renamed ({@link FillIn}).
   *
   * @return object id to digest for the objects read, in manifest order
   */
  private LinkedHashMap<String, String> fillIn(
      TaskPayload payload, LongConsumer progress, ObjectSink sink) throws StoreException {
    java.util.Set<String> held = java.util.Set.copyOf(payload.held());
    LinkedHashMap<String, String> result = new LinkedHashMap<>();
    long fetched = 0;
    for (FilePlan file : payload.files()) {
      Map<String, String> digests =
          FillIn.file(
              this,
              sources,
              publishes,
              payload.model(),
              payload.sourcesOrAny(),
              file,
              held,
              fetched,
              progress,
              sink);
      for (ObjectPlan o : file.objects()) {
        if (digests.containsKey(o.objectId())) {
          result.put(o.objectId(), digests.get(o.objectId()));
          fetched += o.length();
        }
      }
    }
    log.info(
        "fetched {} bytes, {} object(s) of {} no live node held; {} object(s) held elsewhere",
        fetched,
        result.size(),
        payload.model(),
        held.size());
    return result;
  }

  private Map<String, String> downloadFile(
      ModelRef model,
      io.mooncake.dist.scheduler.domain.SourceRules rules,
      FilePlan file,
      long before,
      LongConsumer progress,
      ObjectSink sink)
      throws StoreException {
    List<ObjectPlan> objects = ObjectLayout.inByteOrder(file);
    Path target = resolve(model, file);
    Path partial = FileOps.partialOf(target);
    String url = file.downloadUrl();
    String shown = io.mooncake.dist.scheduler.domain.SourceUrls.display(url);
    if (url == null || url.isBlank()) {
      throw new StoreException("no download_url for " + file.path(), false);
    }
    FileOps.createParentDirectories(target);
    String expected = Checksums.sha256HexOrNull(file.sha256());
    DownloadJournal.Header header =
        new DownloadJournal.Header(
            target.toString(), file.sizeBytes(), expected, DownloadJournal.sourceKey(url), null);
    ResumePlan.Decision plan = ResumePlan.decide(journal.read(target), header, objects, publishes);
    // What an earlier attempt left is hashed again before the source is asked for the rest.
    KeptPrefix.Kept kept =
        plan.kept().isEmpty()
            ? null
            : KeptPrefix.check(
                partial, file.sizeBytes(), objects, plan.kept(), expected != null, publishes);
    if (kept == null && !plan.kept().isEmpty()) {
      plan = ResumePlan.Decision.fromZero("the kept bytes no longer match");
    }
    long from = kept == null ? 0 : kept.end();
    log.info(
        "downloading {} from {}{} ({})",
        file.path(),
        shown,
        from > 0 ? " resuming at byte " + from + " of " + file.sizeBytes() : "",
        plan.why());
    boolean committed = false;
    boolean keepPartial = false;
    FileChannel out = kept == null ? null : kept.channel();
    try {
      SourceOpener.Opened opened;
      try {
        // The source is opened first so a refused source (404, missing file) never touches the
        // disk.
        opened =
            sources.open(
                url, file.sizeBytes(), rules, from, kept == null ? null : plan.validator());
      } catch (StoreException e) {
        // Nothing of this attempt was written: what an earlier one kept is still good for a retry.
        keepPartial = e.retryable() && kept != null;
        throw e;
      }
      Map<String, String> digests;
      try {
        if (opened.startsAt() != from) {
          // The source sent the whole file (it ignores ranges, or it changed): start over.
          closeQuietly(out, partial.toString());
          out = null;
          kept = null;
        }
        RangeHasher hasher;
        List<DownloadJournal.Line> keptLines;
        DownloadJournal.Header recorded;
        if (kept == null) {
          out = createFresh(partial);
          hasher = new RangeHasher(objects, expected != null, publishes);
          keptLines = List.of();
          recorded = header.withValidator(opened.validator());
        } else {
          hasher = kept.hasher();
          keptLines = kept.lines();
          recorded = header.withValidator(plan.validator());
        }
        DownloadJournal.Writer record;
        try {
          record = journal.begin(target, recorded, keptLines);
        } catch (IOException e) {
          throw FileOps.writeFailure(journal.pathOf(target), e);
        }
        try {
          digests =
              writePartial(
                  opened.in(),
                  shown,
                  file,
                  objects,
                  partial,
                  out,
                  hasher,
                  opened.startsAt(),
                  written -> progress.accept(before + written),
                  sink,
                  record);
        } catch (StoreException e) {
          // A retry can keep what is durable and recorded; a permanent failure drops it.
          keepPartial =
              e.retryable()
                  && record.objects() > 0
                  && (expected != null || recorded.validator() != null);
          throw e;
        } finally {
          closeQuietly(record, journal.pathOf(target).toString());
        }
      } finally {
        // Every byte is written and checked by now, or the download failed: either way a failure
        // to close the source changes nothing.
        closeQuietly(opened.in(), shown);
      }
      closeQuietly(out, partial.toString());
      out = null;
      FileOps.commit(partial, target);
      committed = true;
      journal.discard(target);
      stamps.record(target, file, digests, expected);
      log.info("stored {} ({} bytes) from {}", target, file.sizeBytes(), shown);
      return digests;
    } catch (StoreException e) {
      log.warn(
          "download of {} from {} failed (retryable={}{}): {}",
          file.path(),
          shown,
          e.retryable(),
          keepPartial ? "; its verified objects are kept for the next attempt" : "",
          e.getMessage());
      throw e;
    } finally {
      closeQuietly(out, partial.toString());
      if (!committed && !keepPartial) {
        FileOps.deleteQuietly(partial);
        journal.discard(target);
      }
    }
  }

  private static FileChannel createFresh(Path partial) throws StoreException {
    try {
      return FileOps.createFresh(partial);
    } catch (IOException e) {
      throw FileOps.writeFailure(partial, e);
    }
  }

  private static void closeQuietly(java.io.Closeable c, String what) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException e) {
      log.debug("closing {} failed: {}", what, e.toString());
    }
  }

  private Map<String, String> writePartial(
      InputStream in,
      String url,
      FilePlan file,
      List<ObjectPlan> objects,
      Path partial,
      FileChannel out,
      RangeHasher hasher,
      long from,
      LongConsumer fileProgress,
      ObjectSink sink,
      DownloadJournal.Writer record)
      throws StoreException {
    try {
      FileOps.sizeTo(out, file.sizeBytes());
      String expected = Checksums.sha256HexOrNull(file.sha256());
      try (BackgroundPublisher publisher =
          new BackgroundPublisher(file, objects, hasher, out, partial, sink, record)) {
        // Objects kept from an earlier attempt, checked again: handed out before the rest arrives.
        publisher.run();
        fileProgress.accept(from);
        ChunkedFileWriter.copy(
            in, url, out, partial, from, file.sizeBytes(), hasher, fileProgress, publisher);
        publisher.finish();
      }
      String actual = expected == null ? null : hasher.fileSha256Hex();
      if (expected != null && !expected.equals(actual)) {
        throw new StoreException(
            "checksum mismatch for "
                + file.path()
                + ": manifest sha256 "
                + expected
                + ", source sha256 "
                + actual
                + (from > 0 ? " (resumed at byte " + from + " after an interrupted attempt)" : ""),
            false);
      }
      out.force(true);
      return hasher.objectDigests();
    } catch (IOException e) {
      throw FileOps.writeFailure(partial, e);
    }
  }

  /**
   * MODEL_VERIFY (seed reuse): checks that every final file exists with its manifest size and that
   * every object range, and the whole file when the manifest gives a sha256, hashes to the
   * published digest. Each file is read once, sequentially.
   *
   * @return bytes verified
   * @throws StoreException not retryable on any mismatch, naming the first bad object or file
   */
  public long verify(TaskPayload payload) throws StoreException {
    return verify(payload, (file, object, digest) -> {});
  }

  /**
   * As {@link #verify(TaskPayload)}, handing each object to {@code sink} as soon as its range has
   * been hashed and matched, so followers can start copying it while later objects are still being
   * checked. A mismatch stops at the first bad object; objects handed out before it did match their
   * digests.
   */
  public long verify(TaskPayload payload, ObjectSink sink) throws StoreException {
    long total = 0;
    for (FilePlan file : payload.files()) {
      List<ObjectPlan> objects = ObjectLayout.inByteOrder(file);
      for (ObjectPlan o : objects) {
        try {
          ObjectDigest.Algorithm.of(o.digest());
        } catch (IllegalArgumentException e) {
          throw new StoreException(
              "object "
                  + o.objectId()
                  + " of "
                  + file.path()
                  + " has no published digest to verify against: "
                  + e.getMessage(),
              false);
        }
      }
      Path target = resolve(payload.model(), file);
      if (!fullReverify && stamps.unchangedAndMatching(target, file)) {
        // The very file this node hashed, untouched since: its bytes are the ones that matched.
        for (ObjectPlan o : objects) {
          sink.completed(file, o, o.digest().toLowerCase(java.util.Locale.ROOT));
        }
        log.info("{} unchanged since this node hashed it; not re-hashed", target);
        total += file.sizeBytes();
        continue;
      }
      String fileHex;
      Map<String, String> matched = new java.util.HashMap<>();
      try (FileChannel ch = FileChannel.open(target, StandardOpenOption.READ, NOFOLLOW)) {
        checkSize(ch, target, file);
        java.security.MessageDigest whole = file.sha256() != null ? Sha256.newDigest() : null;
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(Sha256.BUFFER_BYTES);
        for (ObjectPlan o : objects) {
          ObjectDigest part = ObjectDigest.toCompareWith(o.digest());
          long pos = o.offset();
          long end = o.offset() + o.length();
          while (pos < end) {
            buf.clear().limit((int) Math.min(buf.capacity(), end - pos));
            int n = ch.read(buf, pos);
            if (n < 0) {
              throw new IOException(
                  "file ended at byte " + pos + ", expected " + file.sizeBytes() + " bytes");
            }
            buf.flip();
            if (whole != null) {
              whole.update(buf.duplicate());
            }
            part.update(buf);
            pos += n;
            verifyBytesHashed.add(n);
          }
          String got = part.finish();
          if (!ObjectDigest.same(o.digest(), got)) {
            throw new StoreException(
                "object "
                    + o.objectId()
                    + " of "
                    + file.path()
                    + " (bytes "
                    + o.offset()
                    + ".."
                    + end
                    + ") does not match its published digest: expected "
                    + o.digest()
                    + ", found "
                    + got,
                false);
          }
          sink.completed(file, o, got);
          matched.put(o.objectId(), got);
        }
        fileHex = whole == null ? null : Sha256.hex(whole.digest());
      } catch (NoSuchFileException e) {
        throw new StoreException("model file missing: " + target, false, e);
      } catch (IOException e) {
        throw new StoreException(
            "I/O error while reading " + target + ": " + FileOps.describe(e), true, e);
      }
      checkFileSha(file, fileHex, target);
      stamps.record(target, file, matched, fileHex);
      total += file.sizeBytes();
    }
    log.info("verified {} bytes of {}", total, payload.model());
    return total;
  }

  /**
   * REPLICA_COPY: the file an object of {@code file} is written into, opened READ+WRITE for
   * positional writes. The final file when it is already complete with the right size, else the
   * partial file, created and sized (sparse) if absent. Creating and sizing happen under a per-file
   * lock and never shrink or rewrite existing bytes, so concurrent copies of different objects of
   * one file all land. The caller closes the channel.
   */
  public FileChannel openForObjectWrite(ModelRef model, FilePlan file) throws StoreException {
    return openBuffered(model, file);
  }

  /**
   * The file to write an object into (as {@link #openForObjectWrite}), opened normally, and once
   * more with {@code O_DIRECT} at its first direct write where the file system supports it, so
   * large aligned writes can bypass the page cache. The caller closes it.
   */
  public ObjectTarget openObjectTarget(ModelRef model, FilePlan file) throws StoreException {
    FileChannel buffered = openBuffered(model, file);
    Path path = resolve(model, file);
    // The same choice openBuffered made: the final file when complete, else the partial one.
    Path open =
        Files.isRegularFile(path, NOFOLLOW) && sizeOrMinusOne(path) == file.sizeBytes()
            ? path
            : FileOps.partialOf(path);
    return new ObjectTarget(open, buffered, directBlockSize(open));
  }

  /** The data directory's block size for direct writes; 0 where it refuses them. Decided once. */
  private int directBlockSize(Path file) {
    Integer known = directBlock;
    if (known != null) {
      return known;
    }
    int block = 0;
    try (FileChannel probe = FileOps.openDirect(file)) {
      block = (int) Files.getFileStore(file).getBlockSize();
    } catch (IOException | UnsupportedOperationException e) {
      // Buffered writes still work.
      log.debug("no direct I/O for {}: {}", file, e.toString());
    }
    directBlock = block;
    return block;
  }

  private volatile Integer directBlock;

  /**
   * An object's file ({@code path}: final or partial), open for buffered writes and, when {@link
   * #blockSize} is not 0, for direct ones through {@link #direct}, which opens it at its first
   * call: a copy that gets no byte (its source has not got the object yet) holds one descriptor,
   * not two.
   */
  public static final class ObjectTarget implements AutoCloseable {
    private final Path path;
    private final FileChannel buffered;
    private final int blockSize;
    private FileChannel direct;
    private boolean closed;

    ObjectTarget(Path path, FileChannel buffered, int blockSize) {
      this.path = path;
      this.buffered = buffered;
      this.blockSize = blockSize;
    }

    public Path path() {
      return path;
    }

    public FileChannel buffered() {
      return buffered;
    }

    /** The file system's block size for direct writes; 0 when it refuses them. */
    public int blockSize() {
      return blockSize;
    }

    /**
     * The file opened with {@code O_DIRECT}, opened at the first call; the buffered channel if that
     * open fails after all (the writes still land, through the page cache).
     */
    public synchronized FileChannel direct() throws IOException {
      if (closed) {
        throw new java.nio.channels.ClosedChannelException();
      }
      if (direct == null) {
        try {
          direct = FileOps.openDirect(path);
        } catch (IOException | UnsupportedOperationException e) {
          log.debug("no direct I/O for {}: {}", path, e.toString());
          direct = buffered;
        }
      }
      return direct;
    }

    @Override
    public synchronized void close() throws IOException {
      closed = true;
      try (FileChannel b = buffered) {
        if (direct != null && direct != buffered) {
          direct.close();
        }
      }
    }
  }

  /**
   * Classifies a failure to write {@code file}: a full disk or a permission problem is permanent
   * (retrying cannot help), other I/O errors are retryable.
   */
  public StoreException writeFailure(Path file, IOException e) {
    return FileOps.writeFailure(file, e);
  }

  private FileChannel openBuffered(ModelRef model, FilePlan file) throws StoreException {
    Path target = resolve(model, file);
    Path partial = FileOps.partialOf(target);
    ReentrantLock lock = PathLocks.forFile(target);
    lock.lock();
    try {
      if (Files.isRegularFile(target, NOFOLLOW) && sizeOrMinusOne(target) == file.sizeBytes()) {
        return FileChannel.open(
            target, StandardOpenOption.READ, StandardOpenOption.WRITE, NOFOLLOW);
      }
      FileOps.createParentDirectories(partial);
      FileChannel ch = FileOps.openShared(partial);
      try {
        FileOps.sizeTo(ch, file.sizeBytes());
      } catch (IOException e) {
        ch.close();
        throw e;
      }
      return ch;
    } catch (IOException e) {
      throw FileOps.writeFailure(partial, e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Digests bytes {@code [offset, offset+length)} of an existing file with {@code algorithm}.
   *
   * @return {@code "<algorithm>:<hex>"}
   * @throws StoreException not retryable when the file is missing or shorter than the range
   */
  public String digestRange(Path file, long offset, long length, ObjectDigest.Algorithm algorithm)
      throws StoreException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (offset < 0 || length < 0 || offset > size - length) {
        throw new StoreException(
            "byte range "
                + offset
                + ".."
                + (offset + length)
                + " lies outside "
                + file
                + " ("
                + size
                + " bytes)",
            false);
      }
      return Sha256.digestRange(ch, offset, length, algorithm);
    } catch (NoSuchFileException e) {
      throw new StoreException("file not found: " + file, false, e);
    } catch (IOException e) {
      throw new StoreException(
          "I/O error while reading " + file + ": " + FileOps.describe(e), true, e);
    }
  }

  /**
   * MATERIALIZE (follower, after every object was copied and verified): commits each file. A file
   * already final (and with no partial) is accepted after checking its size and, when given, its
   * sha256. Otherwise the partial must have the manifest size and, when given, the manifest sha256;
   * it is then fsynced and atomically renamed to its final name. A zero-byte file, which has no
   * objects to copy, is created here.
   *
   * @return total bytes materialized
   * @throws StoreException not retryable on a missing partial or a size/checksum mismatch
   */
  public long materialize(TaskPayload payload) throws StoreException {
    return materialize(payload, file -> false);
  }

  /**
   * As {@link #materialize(TaskPayload)}, but a file for which {@code proven} holds is checked for
   * its size only: every object of it was checked on arrival against digests that already prove the
   * whole file (see {@code ReplicaCatalog.matchesVerifiedSeed}), so a second pass over the bytes is
   * skipped.
   */
  public long materialize(TaskPayload payload, java.util.function.Predicate<FilePlan> proven)
      throws StoreException {
    long total = 0;
    for (FilePlan file : payload.files()) {
      Path target = resolve(payload.model(), file);
      Path partial = FileOps.partialOf(target);
      if (Files.isRegularFile(target, NOFOLLOW) && !Files.exists(partial, NOFOLLOW)) {
        checkComplete(target, file, "model file");
        total += file.sizeBytes();
        continue;
      }
      if (file.sizeBytes() == 0 && !Files.exists(partial, NOFOLLOW)) {
        createEmpty(partial);
      }
      // Hashing a large file takes a while; it runs outside the per-file lock so copies of other
      // files sharing the lock stripe are not held up. Only the rename is serialized.
      boolean skipHash = !file.objects().isEmpty() && proven.test(file);
      checkComplete(partial, file, "partial file", !skipHash);
      ReentrantLock lock = PathLocks.forFile(target);
      lock.lock();
      try {
        FileOps.commit(partial, target);
      } finally {
        lock.unlock();
      }
      log.info("materialized {} ({} bytes)", target, file.sizeBytes());
      total += file.sizeBytes();
    }
    return total;
  }

  /**
   * Where the bytes of a published object of {@code finalPath} live now: the final file if it
   * exists, else its partial file if that exists, else empty.
   */
  public Optional<Path> existingFile(Path finalPath) {
    if (Files.isRegularFile(finalPath)) {
      return Optional.of(finalPath);
    }
    Path partial = FileOps.partialOf(finalPath);
    return Files.isRegularFile(partial) ? Optional.of(partial) : Optional.empty();
  }

  /**
   * What the chunk server may send for a published object of {@code finalPath}: the real path
   * (links resolved) of the final file, else of its partial file, when it is a regular file inside
   * this store's models directory; empty when neither exists.
   *
   * @throws IllegalArgumentException when the file resolves outside the models directory or is not
   *     a regular file
   */
  public Optional<Path> servableFile(Path finalPath) {
    Path root;
    try {
      root = dataDir.resolve("models").toRealPath();
    } catch (IOException e) {
      return Optional.empty();
    }
    for (Path candidate : List.of(finalPath, FileOps.partialOf(finalPath))) {
      Path real;
      try {
        real = candidate.toRealPath();
      } catch (IOException e) {
        continue; // missing (or vanished meanwhile): try the partial, then give up
      }
      if (!real.startsWith(root) || real.equals(root)) {
        throw new IllegalArgumentException(
            candidate + " resolves to " + real + ", outside the model store " + root);
      }
      if (!Files.isRegularFile(real, NOFOLLOW)) {
        throw new IllegalArgumentException(candidate + " is not a regular file");
      }
      return Optional.of(real);
    }
    return Optional.empty();
  }

  /**
   * Removes the partial files of this payload's files, and what a download recorded of them (after
   * a failed or canceled placement, or a download with no attempt left).
   */
  public void discardPartials(TaskPayload payload) {
    for (FilePlan file : payload.files()) {
      Path target;
      try {
        target = resolve(payload.model(), file);
      } catch (StoreException e) {
        log.warn("not discarding a partial for {}: {}", file.path(), e.getMessage());
        continue;
      }
      ReentrantLock lock = PathLocks.forFile(target);
      lock.lock();
      try {
        FileOps.deleteQuietly(FileOps.partialOf(target));
        journal.discard(target);
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * The final path, with a manifest path that escapes the model directory as a permanent failure.
   */
  private Path resolve(ModelRef model, FilePlan file) throws StoreException {
    Path path;
    try {
      path = finalPath(model, file);
    } catch (IllegalArgumentException e) {
      throw new StoreException(e.getMessage(), false, e);
    }
    refuseSymlinkEscape(path, file);
    // The partial file is written and renamed into place: a link planted at its name gets the same
    // check as one at the final name (and is never written through: see FileOps).
    refuseSymlinkEscape(FileOps.partialOf(path), file);
    return path;
  }

  /**
   * The lexical checks keep {@code ..} out; this keeps symlinks out: the deepest part of the path
   * that exists must really lie inside the data directory, or a link planted in the model directory
   * could make the node write anywhere.
   */
  private void refuseSymlinkEscape(Path path, FilePlan file) throws StoreException {
    Path root;
    try {
      // The models directory itself may be gone (an operator removed it); the data dir may not.
      root = dataDir.toRealPath().resolve("models");
    } catch (IOException e) {
      throw new StoreException(
          "data directory " + dataDir + " is not usable: " + FileOps.describe(e), false, e);
    }
    // A directory on the way may vanish between the walk and the resolution: walk again.
    for (int attempt = 0; attempt < 3; attempt++) {
      Path existing = path;
      while (existing != null && !Files.exists(existing, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        existing = existing.getParent();
      }
      if (existing == null) {
        return;
      }
      Path real;
      try {
        real = existing.toRealPath();
      } catch (NoSuchFileException e) {
        continue;
      } catch (IOException e) {
        throw new StoreException("cannot resolve " + path + ": " + FileOps.describe(e), true, e);
      }
      // Only the data directory itself (when models/ is gone) may resolve above the models root;
      // anything inside the model tree must resolve inside it.
      boolean aboveRoot = dataDir.resolve("models").normalize().startsWith(existing.normalize());
      if (aboveRoot ? !root.startsWith(real) : !real.startsWith(root)) {
        throw new StoreException(
            "manifest path "
                + file.path()
                + " resolves through a symlink to "
                + real
                + ", outside the data directory "
                + dataDir,
            false);
      }
      return;
    }
    throw new StoreException("cannot resolve " + path + ": its directories keep changing", true);
  }

  /** Size (and sha256 when the manifest gives one) of a file that should be complete. */
  private static void checkComplete(Path path, FilePlan file, String what) throws StoreException {
    checkComplete(path, file, what, true);
  }

  private static void checkComplete(Path path, FilePlan file, String what, boolean hash)
      throws StoreException {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, NOFOLLOW)) {
      checkSize(ch, path, file);
      if (hash && Checksums.sha256HexOrNull(file.sha256()) != null) {
        checkFileSha(file, Sha256.hex(Sha256.hashRange(ch, 0, file.sizeBytes())), path);
      }
    } catch (NoSuchFileException e) {
      throw new StoreException(what + " missing for " + file.path() + ": " + path, false, e);
    } catch (IOException e) {
      throw new StoreException(
          "I/O error while reading " + path + ": " + FileOps.describe(e), true, e);
    }
  }

  private static void checkSize(FileChannel ch, Path path, FilePlan file)
      throws IOException, StoreException {
    long size = ch.size();
    if (size != file.sizeBytes()) {
      throw new StoreException(
          path + " has " + size + " bytes, manifest size_bytes is " + file.sizeBytes(), false);
    }
  }

  private static void checkFileSha(FilePlan file, String actualHex, Path path)
      throws StoreException {
    String expected = Checksums.sha256HexOrNull(file.sha256());
    if (expected != null && !expected.equals(actualHex)) {
      throw new StoreException(
          "checksum mismatch for "
              + file.path()
              + ": manifest sha256 "
              + expected
              + ", file sha256 "
              + actualHex
              + " ("
              + path
              + ")",
          false);
    }
  }

  private static void createEmpty(Path partial) throws StoreException {
    FileOps.createParentDirectories(partial);
    try {
      FileOps.createFresh(partial).close();
    } catch (IOException e) {
      throw FileOps.writeFailure(partial, e);
    }
  }

  private static long sizeOrMinusOne(Path path) {
    try {
      return Files.size(path);
    } catch (IOException e) {
      return -1;
    }
  }
}
