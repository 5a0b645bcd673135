package io.mooncake.dist.worker.store;

import static io.mooncake.dist.worker.store.TestModels.plan;
import static io.mooncake.dist.worker.store.TestModels.randomBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.mooncake.dist.scheduler.domain.FilePlan;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

class StreamingInternalsTest {

  @Test
  void theRangeHasherGivesTheSameDigestsWhateverPiecesTheBytesArriveIn() throws Exception {
    byte[] content = randomBytes(1, 10_007);
    FilePlan file = plan(0, "f", content, 1_000, null, null);
    for (int piece : new int[] {1, 7, 999, 1_000, 1_001, 10_007}) {
      RangeHasher h = new RangeHasher(ObjectLayout.inByteOrder(file));
      for (int off = 0; off < content.length; off += piece) {
        h.update(content, off, Math.min(piece, content.length - off));
      }
      assertEquals(
          TestModels.expectedDigests(file, content), h.objectDigests(), "piece size " + piece);
      assertEquals(TestModels.sha256Hex(content), h.fileSha256Hex());
    }
  }

  @Test
  void writingIntoAFullDeviceIsAPermanentDiskFullFailure() throws Exception {
    Path devFull = Path.of("/dev/full");
    assumeTrue(Files.isWritable(devFull), "needs Linux /dev/full");
    byte[] content = randomBytes(2, 5_000);
    FilePlan file = plan(0, "f", content, 1_000, null, null);
    Path pretendTarget = Path.of("/data/models/x/f.partial");

    StoreException e;
    try (FileChannel out = FileChannel.open(devFull, StandardOpenOption.WRITE)) {
      e =
          assertThrows(
              StoreException.class,
              () ->
                  ChunkedFileWriter.copy(
                      new ByteArrayInputStream(content),
                      "src",
                      out,
                      pretendTarget,
                      content.length,
                      new RangeHasher(ObjectLayout.inByteOrder(file)),
                      b -> {}));
    }

    assertFalse(e.retryable());
    assertTrue(
        e.getMessage().startsWith("disk full while writing " + pretendTarget), e.getMessage());
  }

  @Test
  void otherWriteErrorsAreRetryableButAQuotaExceededIsNot() {
    Path p = Path.of("/data/x");

    assertTrue(FileOps.writeFailure(p, new IOException("Input/output error")).retryable());
    assertFalse(FileOps.writeFailure(p, new IOException("Disk quota exceeded")).retryable());
    assertFalse(
        FileOps.writeFailure(
                p, new IOException("wrapped", new IOException("No space left on device")))
            .retryable());
  }
}
