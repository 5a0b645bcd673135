package io.mooncake.dist.worker.store;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may read the staged models. Files are created 0640 and directories 0750 ({@link
 * FileOps#FILE_MODE}, {@link FileOps#DIR_MODE}): nothing for others. {@code --data-group} names the
 * group a serving engine runs as: the models directory gets that group and the set-group-ID bit, so
 * every directory and file created below it inherits the group (Linux semantics), and whatever is
 * already there is given it once at start.
 */
public final class DataTree {
  private static final Logger log = LoggerFactory.getLogger(DataTree.class);

  private DataTree() {}

  /** Removes any permission of others from {@code dir} itself (a tree made by an older release). */
  static void closeToOthers(Path dir) throws IOException {
    PosixFileAttributeView view =
        Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    if (view == null) {
      return;
    }
    Set<PosixFilePermission> perms = view.readAttributes().permissions();
    if (perms.removeAll(
        Set.of(
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_EXECUTE))) {
      view.setPermissions(perms);
      log.info("removed others' access to {}", dir);
    }
  }

  /**
   * Gives the models directory under {@code dataDir}, and everything in it, group {@code group},
   * and sets the set-group-ID bit on its directories so new files inherit the group.
   *
   * @throws IllegalArgumentException naming the group when it does not exist or this user may not
   *     give files to it
   */
  public static void shareWith(Path dataDir, String group) {
    Path models = dataDir.resolve("models");
    GroupPrincipal principal;
    try {
      principal =
          models.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(group);
    } catch (IOException e) {
      throw new IllegalArgumentException("no such group: " + group);
    }
    try {
      Files.walkFileTree(
          models,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
                throws IOException {
              setGroup(dir, principal);
              int mode = (Integer) Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS);
              Files.setAttribute(
                  dir, "unix:mode", (mode & 07777) | 02000, LinkOption.NOFOLLOW_LINKS);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              if (attrs.isRegularFile()) {
                setGroup(file, principal);
              }
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException | UnsupportedOperationException e) {
      throw new IllegalArgumentException(
          "cannot give " + models + " to group " + group + ": " + FileOps.describe(asIo(e)));
    }
  }

  private static void setGroup(Path p, GroupPrincipal group) throws IOException {
    Files.getFileAttributeView(p, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setGroup(group);
  }

  private static IOException asIo(Exception e) {
    return e instanceof IOException io ? io : new IOException(e.getMessage(), e);
  }
}
