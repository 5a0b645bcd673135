package io.mooncake.dist.cli.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UrlBaseTest {

  @Test
  void theDefaultIsTheFolderAsAFileUrlEndingInASlash(@TempDir Path dir) throws Exception {
    Path folder = Files.createDirectory(dir.resolve("my model"));
    UrlBase base = UrlBase.of(folder);
    assertEquals(folder.toUri().toASCIIString(), base.base());
    assertEquals(
        Path.of(folder.toString(), "sub", "a b.bin"),
        Path.of(java.net.URI.create(base.resolve("sub/a b.bin"))));
  }

  @Test
  void givenBasesGetATrailingSlashAndPathsArePercentEncodedPerSegment() {
    UrlBase base = UrlBase.parse("http://mirror:8000/m");
    assertEquals("http://mirror:8000/m/", base.base());
    assertEquals("http://mirror:8000/m/dir/%C3%A9t%C3%A9%23%3F.bin", base.resolve("dir/été#?.bin"));
  }

  @Test
  void onlyLocalFileUrlsAndHttpUrlsWithAHostAreAccepted() {
    assertEquals("file:///srv/m/", UrlBase.parse("file:///srv/m").base());
    assertThrows(IllegalArgumentException.class, () -> UrlBase.parse("file://host/srv/m"));
    assertThrows(IllegalArgumentException.class, () -> UrlBase.parse("/srv/m"));
    assertThrows(IllegalArgumentException.class, () -> UrlBase.parse("s3://bucket/m"));
    assertThrows(IllegalArgumentException.class, () -> UrlBase.parse("http:///m"));
  }
}
