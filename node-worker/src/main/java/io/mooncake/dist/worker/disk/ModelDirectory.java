package io.mooncake.dist.worker.disk;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Removing a model's directory: artifact deletion and eviction both free disk this way. */
public final class ModelDirectory {
  private ModelDirectory() {}

  /**
   * Deletes {@code dir} and everything under it; links are removed, not followed. Absent is fine. A
   * file a peer is still reading stays readable to that reader (its descriptor keeps the inode)
   * until it closes it.
   *
   * @return the files deleted
   */
  public static long deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    long[] files = {0};
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.deleteIfExists(file);
            files[0]++;
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof NoSuchFileException) {
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            if (e != null && !(e instanceof NoSuchFileException)) {
              throw e;
            }
            Files.deleteIfExists(d);
            return FileVisitResult.CONTINUE;
          }
        });
    return files[0];
  }
}
