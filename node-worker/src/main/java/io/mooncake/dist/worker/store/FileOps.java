package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Durable-file primitives (fsync, atomic rename, directory fsync, cleanup) and the translation of
 * {@link IOException}s into {@link StoreException}s with plain-words messages.
 */
final class FileOps {
  private static final Logger log = LoggerFactory.getLogger(FileOps.class);

  /** Suffix of a file that is still being written; it sits next to its final name. */
  static final String PARTIAL_SUFFIX = ".partial";

  private FileOps() {}

  /** Staged files: owner read-write, group read (a serving engine's group), nothing for others. */
  static final java.nio.file.attribute.FileAttribute<?> FILE_MODE =
      java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
          java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));

  /** Directories of the data tree: owner all, group read and search, nothing for others. */
  static final java.nio.file.attribute.FileAttribute<?> DIR_MODE =
      java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
          java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-x---"));

  static Path partialOf(Path finalPath) {
    return finalPath.resolveSibling(finalPath.getFileName() + PARTIAL_SUFFIX);
  }

  /** Creates the directory a model file goes into; a failure here is a node problem. */
  static void createParentDirectories(Path file) throws StoreException {
    try {
      Files.createDirectories(file.getParent(), DIR_MODE);
    } catch (IOException e) {
      throw writeFailure(file.getParent(), e);
    }
  }

  /**
   * A fresh partial file for a download, which rewrites it whole: whatever sits at its name (an
   * earlier attempt's file, or a symlink someone planted to make us write through it) is removed
   * first, and the new one is created exclusively without following links.
   */
  static FileChannel createFresh(Path partial) throws IOException {
    Files.deleteIfExists(partial); // removes a link itself, never its target
    return FileChannel.open(
        partial,
        java.util.Set.of(
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            java.nio.file.LinkOption.NOFOLLOW_LINKS),
        FILE_MODE);
  }

  /**
   * The partial file copies of several objects share: opened (or created) for positional reads and
   * writes without following links; anything at its name that is not a regular file is removed
   * first, since no copy of ours made it.
   */
  static FileChannel openShared(Path partial) throws IOException {
    if (Files.exists(partial, java.nio.file.LinkOption.NOFOLLOW_LINKS)
        && !Files.isRegularFile(partial, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      log.warn("removing {}: not a regular file (a symlink?), so not ours", partial);
      Files.delete(partial);
    }
    return FileChannel.open(
        partial,
        java.util.Set.of(
            StandardOpenOption.CREATE,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE,
            java.nio.file.LinkOption.NOFOLLOW_LINKS),
        FILE_MODE);
  }

  /**
   * {@code file} opened for writes with {@code O_DIRECT}, without following links; fails where the
   * file system refuses direct I/O (tmpfs before Linux 6.6, some network file systems).
   */
  static FileChannel openDirect(Path file) throws IOException {
    return FileChannel.open(
        file,
        StandardOpenOption.WRITE,
        java.nio.file.LinkOption.NOFOLLOW_LINKS,
        com.sun.nio.file.ExtendedOpenOption.DIRECT);
  }

  /**
   * Flushes {@code file}'s data to stable storage, renames it atomically over {@code target} and
   * flushes the directory entry. After this returns a crash leaves either the old state or the
   * complete file under its final name, never a torn one.
   */
  static void commit(Path partial, Path target) throws StoreException {
    if (Files.isSymbolicLink(partial)) {
      // Renaming a link into place would make the model file a link to whatever it names.
      throw new StoreException(
          "partial file " + partial + " is a symbolic link; refusing to commit it", false);
    }
    try (FileChannel ch =
        FileChannel.open(
            partial, StandardOpenOption.READ, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      ch.force(true);
    } catch (NoSuchFileException e) {
      throw new StoreException(
          "partial file vanished before it could be committed: " + partial, false, e);
    } catch (IOException e) {
      throw writeFailure(partial, e);
    }
    try {
      Files.move(
          partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new StoreException(
          "cannot rename " + partial + " to " + target + ": " + describe(e), !isDiskFull(e), e);
    }
    fsyncDirectory(target.getParent());
  }

  /**
   * Makes a rename durable. Best effort: some file systems refuse to open or sync a directory, and
   * by now the file is complete under its final name, so a failure is logged rather than thrown
   * (throwing would make the task re-transfer bytes that are already in place).
   */
  static void fsyncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      log.warn("could not fsync directory {} after a rename: {}", dir, describe(e));
    }
  }

  /**
   * Gives a file exactly {@code size} bytes. Growing writes one zero byte at the new end, which
   * only touches a byte past the old end (never data) and leaves the gap sparse; shrinking drops
   * bytes past the manifest size, which belong to no object.
   */
  static void sizeTo(FileChannel ch, long size) throws IOException {
    long current = ch.size();
    if (current > size) {
      ch.truncate(size);
    } else if (current < size) {
      ByteBuffer zero = ByteBuffer.allocate(1);
      while (zero.hasRemaining()) {
        ch.write(zero, size - 1);
      }
    }
  }

  /**
   * Deletes a file if present; a failure is logged, because cleanup must not mask the real error.
   */
  static void deleteQuietly(Path file) {
    try {
      if (Files.deleteIfExists(file)) {
        log.debug("deleted {}", file);
      }
    } catch (IOException e) {
      log.warn("could not delete {}: {}", file, describe(e));
    }
  }

  /**
   * A write-side failure: a full disk (or exhausted quota) is permanent, since retrying on the same
   * node fills it again; anything else is treated as a transient I/O hiccup.
   */
  static StoreException writeFailure(Path file, IOException e) {
    if (isDiskFull(e)) {
      return new StoreException(
          "disk full while writing " + file + " (" + describe(e) + ")", false, e);
    }
    if (e instanceof AccessDeniedException) {
      return new StoreException("permission denied while writing " + file, false, e);
    }
    return new StoreException("I/O error while writing " + file + ": " + describe(e), true, e);
  }

  static boolean isDiskFull(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = t.getMessage();
      if (m != null
          && (m.contains("No space left on device") || m.contains("Disk quota exceeded"))) {
        return true;
      }
    }
    return false;
  }

  /** The cause in words: the OS reason when there is one, not a bare path or class name. */
  static String describe(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof FileSystemException fse && fse.getReason() != null) {
      return fse.getReason();
    }
    // Some exceptions (the HTTP client's ConnectException) carry their words only in the cause.
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return t.getMessage();
      }
    }
    return e instanceof java.net.ConnectException
        ? "connection refused"
        : e.getClass().getSimpleName();
  }
}
