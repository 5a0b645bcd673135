package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.ObjectPlan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a download has made durable so far, so that a later attempt (after a failure, a restart or a
 * SIGKILL) can keep it: one small file per model file in {@code <data-dir>/.mooncake/downloads/}, a
 * header naming the file, its size, the manifest sha256, the source (as a hash of its URL: a
 * presigned query must not land on disk) and the source's validator, then one line per object whose
 * bytes were fsynced into {@code <file>.partial}, in byte order, with the digest they hashed to
 * while read from the source. A line is appended only after the object's bytes are fsynced; the
 * journal itself is not fsynced, since a lost line only costs re-reading that object, and every
 * kept object is hashed again before it is trusted ({@link ResumePlan}, {@link KeptPrefix}).
 */
final class DownloadJournal {
  private static final Logger log = LoggerFactory.getLogger(DownloadJournal.class);
  private static final String MAGIC = "mooncake-download-v1";

  private final Path dir;

  DownloadJournal(Path dataDir) {
    this.dir = dataDir.resolve(".mooncake").resolve("downloads");
  }

  /**
   * Who the recorded objects belong to; a resume needs every field to match the current task.
   *
   * @param sha256 the manifest's whole-file sha256 (lower-case hex), or null
   * @param validator the source's validator when the bytes were read (see {@link SourceOpener}), or
   *     null; not compared, but sent back as {@code If-Range}
   */
  record Header(String path, long size, String sha256, String source, String validator) {
    Header withValidator(String v) {
      return new Header(path, size, sha256, source, v);
    }
  }

  /** One object line: its place in the file, its id and the digest its bytes hashed to. */
  record Line(long offset, long length, String digest, String objectId) {}

  /** A journal as read back. */
  record Recorded(Header header, List<Line> objects) {}

  /** The key a source is recorded under: the SHA-256 of its URL. */
  static String sourceKey(String url) {
    return Sha256.hex(Sha256.newDigest().digest(url.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * The journal of {@code finalPath}, or empty when there is none or it is unreadable. A last line
   * cut short (a process killed while appending it) is ignored.
   */
  Optional<Recorded> read(Path finalPath) {
    Path file = journalOf(finalPath);
    try {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
        return Optional.empty();
      }
      String text = Files.readString(file, StandardCharsets.UTF_8);
      int end = text.lastIndexOf('\n');
      String[] lines = end < 0 ? new String[0] : text.substring(0, end).split("\n", -1);
      if (lines.length < 6 || !lines[0].equals(MAGIC)) {
        return Optional.empty();
      }
      Header h =
          new Header(
              value(lines[1], "path"),
              Long.parseLong(value(lines[2], "size")),
              dashIsNull(value(lines[3], "sha256")),
              value(lines[4], "source"),
              dashIsNull(value(lines[5], "validator")));
      List<Line> objects = new ArrayList<>();
      for (int i = 6; i < lines.length; i++) {
        String[] f = value(lines[i], "object").split(" ", 4);
        if (f.length != 4) {
          throw new IllegalArgumentException("bad object line " + i);
        }
        objects.add(new Line(Long.parseLong(f[0]), Long.parseLong(f[1]), f[2], f[3]));
      }
      return Optional.of(new Recorded(h, List.copyOf(objects)));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException | RuntimeException e) {
      log.warn("download journal {} unusable, starting {} over: {}", file, finalPath, e.toString());
      return Optional.empty();
    }
  }

  /**
   * Starts the journal of {@code finalPath} afresh with {@code header} and the objects already kept
   * (written to a temporary file and renamed over the old journal), open for appending.
   */
  Writer begin(Path finalPath, Header header, List<Line> kept) throws IOException {
    Files.createDirectories(dir, FileOps.DIR_MODE);
    Path file = journalOf(finalPath);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    StringBuilder text = new StringBuilder();
    text.append(MAGIC)
        .append('\n')
        .append("path ")
        .append(header.path())
        .append('\n')
        .append("size ")
        .append(header.size())
        .append('\n')
        .append("sha256 ")
        .append(header.sha256() == null ? "-" : header.sha256())
        .append('\n')
        .append("source ")
        .append(header.source())
        .append('\n')
        .append("validator ")
        .append(header.validator() == null ? "-" : oneLine(header.validator()))
        .append('\n');
    for (Line l : kept) {
      text.append(line(l));
    }
    try (FileChannel ch = FileOps.createFresh(tmp)) {
      write(ch, text.toString());
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    FileChannel append =
        FileChannel.open(
            file, StandardOpenOption.WRITE, StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS);
    return new Writer(file, append, kept);
  }

  /** Removes the journal of {@code finalPath} (after a commit, or when its partial is dropped). */
  void discard(Path finalPath) {
    FileOps.deleteQuietly(journalOf(finalPath));
  }

  /** Appends the objects of one download attempt as they become durable. Thread-confined. */
  static final class Writer implements java.io.Closeable {
    private final Path file;
    private final FileChannel ch;
    private final Set<String> recorded = new HashSet<>();
    private boolean broken;

    private Writer(Path file, FileChannel ch, List<Line> kept) {
      this.file = file;
      this.ch = ch;
      kept.forEach(l -> recorded.add(l.objectId()));
    }

    /**
     * Records that {@code object}'s bytes are durable and hashed to {@code digest}; an object
     * already recorded is skipped. A failure to write is logged, not thrown: it only means a later
     * attempt reads the object again.
     */
    void append(ObjectPlan object, String digest) {
      if (broken || recorded.contains(object.objectId())) {
        return;
      }
      try {
        write(ch, line(new Line(object.offset(), object.length(), digest, object.objectId())));
        recorded.add(object.objectId());
      } catch (IOException e) {
        // A line that never lands, or lands cut short, costs a re-read; later lines would leave a
        // gap in the prefix, so stop recording.
        broken = true;
        log.warn("cannot append to download journal {}: {}", file, FileOps.describe(e));
      }
    }

    /** How many objects the journal lists. */
    int objects() {
      return recorded.size();
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  private static String line(Line l) {
    return "object " + l.offset() + " " + l.length() + " " + l.digest() + " " + l.objectId() + "\n";
  }

  private static String oneLine(String s) {
    return s.replace('\n', ' ').replace('\r', ' ');
  }

  private static void write(FileChannel ch, String s) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  private static String value(String line, String key) {
    if (!line.startsWith(key + " ")) {
      throw new IllegalArgumentException("expected " + key + ", found " + line);
    }
    return line.substring(key.length() + 1);
  }

  private static String dashIsNull(String s) {
    return s.equals("-") ? null : s;
  }

  /** Where the journal of {@code finalPath} lives. */
  Path pathOf(Path finalPath) {
    return journalOf(finalPath);
  }

  private Path journalOf(Path finalPath) {
    return dir.resolve(sourceKey(finalPath.toString()));
  }
}
