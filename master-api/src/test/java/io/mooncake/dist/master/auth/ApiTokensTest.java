package io.mooncake.dist.master.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.master.auth.ApiTokens.Grant;
import io.mooncake.dist.master.auth.ApiTokens.Permission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiTokensTest {
  @TempDir Path tmp;

  @Test
  void readsPermissionsNamesAndComments() {
    ApiTokens t =
        ApiTokens.parse(
            "f",
            """
        # the API's tokens
        read   0123456789abcdef0123   grafana
          # an indented comment
        write  fedcba9876543210fedc
        """);
    assertEquals(2, t.size());
    assertEquals(
        new Grant("grafana", Permission.READ), t.lookup("0123456789abcdef0123").orElseThrow());
    assertEquals(
        new Grant("line-4", Permission.WRITE), t.lookup("fedcba9876543210fedc").orElseThrow());
    assertTrue(t.lookup("0123456789abcdef012").isEmpty());
    assertTrue(t.lookup("").isEmpty());
  }

  @Test
  void aHashInsideATokenIsPartOfItNotACommentThatTruncatesIt() {
    ApiTokens t = ApiTokens.parse("f", "write aaaaaaaaaaaaaaaa#rest\n");
    assertTrue(t.lookup("aaaaaaaaaaaaaaaa#rest").isPresent());
    assertTrue(t.lookup("aaaaaaaaaaaaaaaa").isEmpty());
    // A comment after the fields is no longer cut off silently: the line is refused, named.
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ApiTokens.parse("f", "read 0123456789abcdef0123 grafana # dashboards"));
    assertTrue(e.getMessage().startsWith("f line 1: expected"), e.getMessage());
    assertTrue(e.getMessage().contains("only at the start of a line"), e.getMessage());
  }

  @Test
  void writeIncludesReadButNotTheOtherWayRound() {
    assertTrue(Permission.WRITE.allows(Permission.READ));
    assertTrue(Permission.WRITE.allows(Permission.WRITE));
    assertTrue(Permission.READ.allows(Permission.READ));
    assertFalse(Permission.READ.allows(Permission.WRITE));
  }

  @Test
  void refusesWhatWouldWeakenTheGateNamingTheLine() {
    assertEquals(
        "f line 1: permission must be 'read' or 'write', got 'admin'",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApiTokens.parse("f", "admin 0123456789abcdef0123"))
            .getMessage());
    assertEquals(
        "f line 2: token shorter than 16 characters",
        assertThrows(IllegalArgumentException.class, () -> ApiTokens.parse("f", "\nread short"))
            .getMessage());
    assertEquals(
        "f line 2: token listed twice",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApiTokens.parse("f", "read 0123456789abcdef0123\nwrite 0123456789abcdef0123"))
            .getMessage());
    assertEquals(
        "f line 1: expected '<read|write> <token> [<name>]'",
        assertThrows(IllegalArgumentException.class, () -> ApiTokens.parse("f", "read"))
            .getMessage());
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> ApiTokens.parse("f", "# nothing\n"))
            .getMessage()
            .startsWith("f: no token in the file"));
  }

  @Test
  void refusesAFileOthersCanReadOrThatIsMissing() throws Exception {
    Path file = tmp.resolve("tokens");
    Files.writeString(file, "write 0123456789abcdef0123\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
    assertEquals(
        file
            + ": group or others may access this token file (mode rw-r-----); make it readable by its"
            + " owner only: chmod 600 "
            + file,
        assertThrows(IllegalArgumentException.class, () -> ApiTokens.load(file)).getMessage());
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertEquals(1, ApiTokens.load(file).size());
    assertEquals(
        tmp.resolve("none") + ": no such file",
        assertThrows(IllegalArgumentException.class, () -> ApiTokens.load(tmp.resolve("none")))
            .getMessage());
  }
}
