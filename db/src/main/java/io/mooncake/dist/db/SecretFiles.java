package io.mooncake.dist.db;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The one rule for files that hold a secret (API tokens, source credentials, the cluster secret,
 * TLS private keys): neither group nor others may read or write them, as ssh demands of its keys.
 * Lives in {@code db} because it is the one module both the master and the node worker depend on;
 * it touches no database.
 */
public final class SecretFiles {
  /** Permission bits a secret file must not have. */
  private static final Set<PosixFilePermission> OPEN =
      EnumSet.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE);

  private SecretFiles() {}

  /**
   * Refuses {@code file} when group or others may read or write it (the link target's mode counts,
   * as that is what gets read). File systems without POSIX permissions are not checked.
   *
   * @param what what the file holds, for the message ("token file", "private key")
   * @throws IllegalArgumentException naming the file, its mode and the {@code chmod} to run; or
   *     that it does not exist or cannot be read
   */
  public static void requireOwnerOnly(Path file, String what) {
    Set<PosixFilePermission> perms;
    try {
      perms = Files.getPosixFilePermissions(file);
    } catch (UnsupportedOperationException e) {
      return;
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(file + ": no such file");
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot read: " + e.getMessage());
    }
    Set<PosixFilePermission> open = EnumSet.copyOf(OPEN);
    open.retainAll(perms);
    if (!open.isEmpty()) {
      throw new IllegalArgumentException(
          file
              + ": group or others may access this "
              + what
              + " (mode "
              + PosixFilePermissions.toString(perms)
              + "); make it readable by its owner only: chmod 600 "
              + file);
    }
    if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && !Files.isRegularFile(file)) {
      throw new IllegalArgumentException(file + ": not a regular file");
    }
  }
}
