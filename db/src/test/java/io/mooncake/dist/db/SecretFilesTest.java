package io.mooncake.dist.db;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretFilesTest {
  @TempDir Path dir;

  private Path file(String mode) throws Exception {
    Path f = Files.writeString(dir.resolve("secret-" + mode), "x");
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
    return f;
  }

  @Test
  void ownerOnlyModesPass() throws Exception {
    assertDoesNotThrow(() -> SecretFiles.requireOwnerOnly(file("rw-------"), "key"));
    assertDoesNotThrow(() -> SecretFiles.requireOwnerOnly(file("r--------"), "key"));
  }

  @Test
  void groupOrOthersReadingOrWritingIsRefusedWithTheChmodToRun() throws Exception {
    for (String mode : new String[] {"rw-r-----", "rw----r--", "rw--w----", "rw-----w-"}) {
      Path f = file(mode);
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> SecretFiles.requireOwnerOnly(f, "private key"));
      assertTrue(e.getMessage().contains("chmod 600 " + f), e.getMessage());
      assertTrue(e.getMessage().contains("private key"), e.getMessage());
      assertTrue(e.getMessage().contains(mode), e.getMessage());
    }
  }

  @Test
  void aMissingFileIsNamed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SecretFiles.requireOwnerOnly(dir.resolve("nope"), "key"));
    assertTrue(e.getMessage().contains("nope: no such file"), e.getMessage());
  }
}
