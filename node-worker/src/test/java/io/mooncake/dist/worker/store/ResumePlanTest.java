package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The resume decisions, without a disk or a network: {@link ResumePlan} and {@link RangeAnswer}.
 */
class ResumePlanTest {
  private static final String SHA = "ab".repeat(32);
  private static final String CRC = "crc32c-crc32:0123456789abcdef";
  private static final ObjectDigest.Algorithm ALG = ObjectDigest.Algorithm.CRC32C_CRC32;

  private static final List<ObjectPlan> OBJECTS =
      List.of(
          new ObjectPlan("o0", 0, 0, 100, null),
          new ObjectPlan("o1", 1, 100, 100, null),
          new ObjectPlan("o2", 2, 200, 100, null),
          new ObjectPlan("o3", 3, 300, 50, null));

  private static DownloadJournal.Header header(String sha, String validator) {
    return new DownloadJournal.Header("/d/m.bin", 350, sha, "src", validator);
  }

  private static Optional<DownloadJournal.Recorded> journal(DownloadJournal.Header h, int objects) {
    List<DownloadJournal.Line> lines = new ArrayList<>();
    for (int i = 0; i < objects; i++) {
      ObjectPlan o = OBJECTS.get(i);
      lines.add(new DownloadJournal.Line(o.offset(), o.length(), CRC, o.objectId()));
    }
    return Optional.of(new DownloadJournal.Recorded(h, lines));
  }

  @Test
  void theRecordedPrefixIsKeptAndTheSourceIsAskedFromItsEnd() {
    var d = ResumePlan.decide(journal(header(SHA, "\"e\""), 2), header(SHA, null), OBJECTS, ALG);
    assertEquals(2, d.kept().size());
    assertEquals(200, d.from());
    assertEquals("\"e\"", d.validator(), "the validator the bytes were read under");
  }

  @Test
  void theLastObjectIsNeverKeptSoTheSourceIsAlwaysAskedForSomething() {
    var d = ResumePlan.decide(journal(header(SHA, null), 4), header(SHA, null), OBJECTS, ALG);
    assertEquals(3, d.kept().size());
    assertEquals(300, d.from());
  }

  @Test
  void nothingIsKeptForAnotherFileSizeChecksumOrSource() {
    var rec = journal(header(SHA, "\"e\""), 3);
    assertEquals(0, ResumePlan.decide(Optional.empty(), header(SHA, null), OBJECTS, ALG).from());
    for (DownloadJournal.Header now :
        List.of(
            new DownloadJournal.Header("/d/other.bin", 350, SHA, "src", null),
            new DownloadJournal.Header("/d/m.bin", 351, SHA, "src", null),
            new DownloadJournal.Header("/d/m.bin", 350, "cd".repeat(32), "src", null),
            new DownloadJournal.Header("/d/m.bin", 350, null, "src", null),
            new DownloadJournal.Header("/d/m.bin", 350, SHA, "another source", null))) {
      var d = ResumePlan.decide(rec, now, OBJECTS, ALG);
      assertTrue(d.kept().isEmpty(), now + ": " + d.why());
      assertNull(d.validator());
    }
  }

  @Test
  void withoutSha256OrValidatorNothingCouldShowTheSourceUnchanged() {
    var d = ResumePlan.decide(journal(header(null, null), 3), header(null, null), OBJECTS, ALG);
    assertTrue(d.kept().isEmpty());
    assertTrue(d.why().contains("no sha256"), d.why());
    // A validator alone is enough: it goes out as If-Range.
    var e = ResumePlan.decide(journal(header(null, "\"e\""), 3), header(null, null), OBJECTS, ALG);
    assertEquals(3, e.kept().size());
  }

  @Test
  void keepingStopsAtTheFirstLineThatDisagreesWithTheManifestOrTheAlgorithm() {
    DownloadJournal.Header h = header(SHA, null);
    List<DownloadJournal.Line> lines =
        List.of(
            new DownloadJournal.Line(0, 100, CRC, "o0"),
            new DownloadJournal.Line(100, 100, "sha256:" + SHA, "o1"),
            new DownloadJournal.Line(200, 100, CRC, "o2"));
    var d = ResumePlan.decide(Optional.of(new DownloadJournal.Recorded(h, lines)), h, OBJECTS, ALG);
    assertEquals(1, d.kept().size(), "o1 was hashed with another algorithm than this store's");

    List<DownloadJournal.Line> relaid =
        List.of(
            new DownloadJournal.Line(0, 100, CRC, "o0"),
            new DownloadJournal.Line(100, 90, CRC, "o1"));
    assertEquals(
        1,
        ResumePlan.decide(Optional.of(new DownloadJournal.Recorded(h, relaid)), h, OBJECTS, ALG)
            .kept()
            .size());
    List<DownloadJournal.Line> renamed = List.of(new DownloadJournal.Line(0, 100, CRC, "x"));
    assertTrue(
        ResumePlan.decide(Optional.of(new DownloadJournal.Recorded(h, renamed)), h, OBJECTS, ALG)
            .kept()
            .isEmpty());
  }

  @Test
  void only206ForExactlyTheRestOfTheFileIsResumedFrom() {
    OptionalLong none = OptionalLong.empty();
    assertTrue(RangeAnswer.problem("bytes 200-349/350", OptionalLong.of(150), 200, 350).isEmpty());
    assertTrue(RangeAnswer.problem("bytes 200-349/*", none, 200, 350).isEmpty());
    for (String wrong :
        new String[] {
          null,
          "bytes 0-349/350",
          "bytes 200-299/350",
          "bytes 200-349/400",
          "bytes */350",
          "items 200-349/350",
          "bytes 200-349/350, 0-9/350"
        }) {
      assertTrue(RangeAnswer.problem(wrong, none, 200, 350).isPresent(), String.valueOf(wrong));
    }
    assertTrue(
        RangeAnswer.problem("bytes 200-349/350", OptionalLong.of(350), 200, 350).isPresent(),
        "a Content-Length other than the range's");
  }

  @Test
  void theHeldRuleReadsOnlyRunsOfObjectsNoLiveNodeHolds() {
    var runs = ResumePlan.toFetch(OBJECTS, java.util.Set.of("o1"));
    assertEquals(2, runs.size());
    assertEquals(List.of("o0"), runs.get(0).objects().stream().map(ObjectPlan::objectId).toList());
    assertEquals(0, runs.get(0).from());
    assertEquals(100, runs.get(0).end());
    assertEquals(
        List.of("o2", "o3"), runs.get(1).objects().stream().map(ObjectPlan::objectId).toList());
    assertEquals(200, runs.get(1).from());
    assertEquals(350, runs.get(1).end());
  }

  @Test
  void theHeldRuleReadsNothingWhenEveryObjectIsHeldAndEverythingWhenNoneIs() {
    assertTrue(ResumePlan.toFetch(OBJECTS, java.util.Set.of("o0", "o1", "o2", "o3")).isEmpty());
    var all = ResumePlan.toFetch(OBJECTS, java.util.Set.of());
    assertEquals(1, all.size());
    assertEquals(OBJECTS, all.get(0).objects());
  }

  @Test
  void theHeldRuleSkipsAHeldPrefixAndSuffix() {
    var runs = ResumePlan.toFetch(OBJECTS, java.util.Set.of("o0", "o3"));
    assertEquals(1, runs.size());
    assertEquals(100, runs.get(0).from());
    assertEquals(300, runs.get(0).end());
  }
}
