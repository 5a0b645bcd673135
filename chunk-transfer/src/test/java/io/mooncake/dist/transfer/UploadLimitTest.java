package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --upload-limit-mbit} paces a single object too: the server sends it in pieces the shaper
 * can delay, not as one sendfile that passes in a burst. A limit can only make a transfer slower,
 * so the check is a lower bound on its duration (a slow machine cannot make it fail).
 */
@Timeout(60)
class UploadLimitTest {
  @TempDir Path dir;

  @Test
  void oneObjectIsSentNoFasterThanTheLimit() throws Exception {
    int size = 4 << 20;
    long limit = 2L << 20; // 2 MiB/s: the object needs about 2 s
    byte[] content = TestData.bytes(size, 8);
    Path source = TestData.file(dir, "obj.bin", content);
    Path target = dir.resolve("obj.copy");
    try (ChunkServer server =
            ChunkServer.start(
                "127.0.0.1",
                0,
                id -> Optional.of(new FileRange(source, 0, size)),
                TestData.SECURITY,
                limit);
        ChunkClient client = new ChunkClient(TestData.SECURITY);
        FileChannel out =
            FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      long start = System.nanoTime();
      FetchResult r =
          client.fetchBlocking("127.0.0.1", server.port(), "obj", 0, size, out, 0, null);
      double seconds = (System.nanoTime() - start) / 1e9;
      assertEquals(size, r.bytes());
      // The shaper lets about one interval's worth through at once; the rest waits for the limit.
      assertTrue(
          seconds >= 0.6 * size / limit, "4 MiB at a 2 MiB/s limit took only " + seconds + " s");
    }
    assertArrayEquals(content, Files.readAllBytes(target));
  }
}
