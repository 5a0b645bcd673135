package io.mooncake.dist.worker.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.store.NodeDisks.Usage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a node reads off its data directory, and which of it a heartbeat must carry. */
class DiskLedgerTest {
  @TempDir Path data;

  private static final ModelRef LLAMA = new ModelRef("meta/llama", "main", "safetensors", "hf");
  private static final ModelRef TINY = new ModelRef("tiny", "r1", "bin", "local");

  private Path write(ModelRef m, String name, int bytes) throws Exception {
    Path dir =
        data.resolve("models")
            .resolve(m.provider())
            .resolve(m.modelId().replace("/", "%2F"))
            .resolve(m.revision())
            .resolve(m.format());
    Files.createDirectories(dir);
    return Files.write(dir.resolve(name), new byte[bytes]);
  }

  @Test
  void modelsAreReadFromTheirDirectoriesPartialFilesCountingOnlyAsHeld() throws Exception {
    write(LLAMA, "a.safetensors", 100);
    write(LLAMA, "b.safetensors.partial", 50);
    write(TINY, "t.bin", 7);
    Files.write(data.resolve("models/hf/stray-file"), new byte[1000]);
    DiskLedger ledger = new DiskLedger("n1:1", data);
    assertEquals(Map.of(LLAMA, 150L, TINY, 7L), ledger.scan());
    assertEquals(100, ledger.finishedBytesOf(LLAMA));
    assertEquals(
        LLAMA, ledger.modelOf(data.resolve("models/hf/meta%2Fllama/main/safetensors/x")).get());
    assertTrue(ledger.modelOf(data.resolve("models/hf/x")).isEmpty());
  }

  @Test
  void aHeartbeatCarriesOnlyWhatChangedSinceTheLastRecordedOne() throws Exception {
    write(TINY, "t.bin", 7);
    DiskLedger ledger = new DiskLedger("n1:1", data);
    Instant used = Instant.parse("2026-01-01T00:00:00Z");
    ledger.loadReported(List.of(new Usage("n1:1", LLAMA, 10, used)));
    List<Usage> first = ledger.changes(ledger.scan());
    // TINY is new; LLAMA, recorded before, is gone from the disk.
    assertEquals(2, first.size(), first.toString());
    assertTrue(first.stream().anyMatch(u -> u.model().equals(TINY) && u.bytes() == 7));
    assertTrue(first.stream().anyMatch(u -> u.model().equals(LLAMA) && u.gone()));
    ledger.recorded(first);
    assertEquals(List.of(), ledger.changes(ledger.scan()));
    // A use within the minute is not news; a model that grows is.
    ledger.touch(TINY);
    assertEquals(List.of(), ledger.changes(ledger.scan()));
    write(TINY, "u.bin", 3);
    ledger.touch(TINY);
    List<Usage> grown = ledger.changes(ledger.scan());
    assertEquals(1, grown.size());
    assertEquals(10, grown.get(0).bytes());
  }
}
