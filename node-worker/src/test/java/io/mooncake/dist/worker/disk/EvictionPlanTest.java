package io.mooncake.dist.worker.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.worker.disk.EvictionPlan.Admission;
import io.mooncake.dist.worker.disk.EvictionPlan.Candidate;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The eviction and admission decisions over every case: candidates in, victims out. */
class EvictionPlanTest {
  private static final long MIB = 1024 * 1024;

  private static Candidate model(String id, long mib, int usedAt, boolean pinned, boolean inUse) {
    return new Candidate(
        new ModelRef(id, "r1", "bin", "local"),
        mib * MIB,
        Instant.ofEpochSecond(usedAt),
        pinned,
        inUse);
  }

  private static Candidate model(String id, long mib, int usedAt) {
    return model(id, mib, usedAt, false, false);
  }

  private static List<String> ids(EvictionPlan.Victims v) {
    return v.models().stream().map(c -> c.model().modelId()).toList();
  }

  @Test
  void theLeastRecentlyUsedModelsGoFirstUntilEnoughIsFreed() {
    var v =
        EvictionPlan.choose(
            List.of(model("new", 10, 300), model("old", 10, 100), model("mid", 10, 200)), 15 * MIB);
    assertEquals(List.of("old", "mid"), ids(v));
    assertEquals(20 * MIB, v.bytes());
  }

  @Test
  void nothingIsEvictedWhenNothingNeedsFreeing() {
    assertTrue(EvictionPlan.choose(List.of(model("a", 10, 1)), 0).isEmpty());
    assertTrue(EvictionPlan.choose(List.of(model("a", 10, 1)), -5).isEmpty());
    assertTrue(EvictionPlan.choose(List.of(), 10 * MIB).isEmpty());
  }

  @Test
  void aPinnedOrInUseModelIsNeverAVictimEvenWhenItIsTheOldest() {
    var v =
        EvictionPlan.choose(
            List.of(
                model("pinned", 10, 1, true, false),
                model("busy", 10, 2, false, true),
                model("free", 10, 3)),
            30 * MIB);
    assertEquals(List.of("free"), ids(v));
    assertEquals(10 * MIB, EvictionPlan.evictable(v.models()));
  }

  @Test
  void aWatermarkPassFreesWhatItCanWhenTheEvictableModelsDoNotAddUp() {
    var v = EvictionPlan.choose(List.of(model("a", 1, 1), model("b", 2, 2)), 100 * MIB);
    assertEquals(List.of("a", "b"), ids(v));
    assertEquals(3 * MIB, v.bytes());
  }

  @Test
  void tiesGoToTheLargerModelThenByName() {
    var v =
        EvictionPlan.choose(List.of(model("b", 5, 1), model("a", 5, 1), model("big", 20, 1)), 1);
    assertEquals(List.of("big"), ids(v));
    var both = EvictionPlan.choose(List.of(model("b", 5, 1), model("a", 5, 1)), 6 * MIB);
    assertEquals(List.of("a", "b"), ids(both));
  }

  @Test
  void emptyModelsAreNotWorthEvicting() {
    assertEquals(
        List.of("real"),
        ids(EvictionPlan.choose(List.of(model("empty", 0, 1), model("real", 1, 2)), 1)));
  }

  @Test
  void theHighWatermarkTriggersAndTheLowOneIsTheTarget() {
    // 100 bytes, 90/80: at 90 used nothing; at 95 used, free down to 80.
    assertEquals(0, EvictionPlan.toFree(100, 10, 90, 80));
    assertEquals(15, EvictionPlan.toFree(100, 5, 90, 80));
    assertEquals(0, EvictionPlan.toFree(0, 0, 90, 80));
    // Large disks do not overflow.
    long tib = 1L << 40;
    assertEquals(tib + 1, EvictionPlan.toFree(10 * tib, tib - 1, 90, 80));
  }

  @Test
  void aModelThatFitsAsItIsEvictsNothing() {
    var a = EvictionPlan.admit(10 * MIB, 10 * MIB, List.of(model("old", 10, 1)));
    assertEquals(List.of(), ids(assertInstanceOf(Admission.Fits.class, a).victims()));
  }

  @Test
  void aModelThatFitsAfterEvictionEvictsOnlyTheLeastRecentlyUsedItNeeds() {
    var a =
        EvictionPlan.admit(
            16 * MIB, 4 * MIB, List.of(model("b", 8, 2), model("a", 8, 1), model("c", 8, 3)));
    assertEquals(List.of("a", "b"), ids(assertInstanceOf(Admission.Fits.class, a).victims()));
  }

  @Test
  void aModelThatCannotFitEvictsNothingAndNamesTheFiguresAndThePins() {
    var a =
        EvictionPlan.admit(
            16 * MIB,
            4 * MIB,
            List.of(
                model("kept", 8, 1, true, false),
                model("busy", 8, 2, false, true),
                model("x", 1, 3)));
    var big = assertInstanceOf(Admission.TooBig.class, a);
    assertEquals(MIB, big.evictable());
    String m = big.message("10.0.0.1:7001", new ModelRef("new", "r2", "bin", "local"));
    assertEquals(
        "not enough disk on node 10.0.0.1:7001 for local/new@r2 (bin): needs 16777216 bytes,"
            + " 4194304 free, 1048576 evictable; pinned: local/kept@r1 (bin) (8388608 bytes);"
            + " in use by active jobs: local/busy@r1 (bin) (8388608 bytes)",
        m);
  }

  @Test
  void negativeFreeSpaceFromOtherJobsReservationsCountsAsNone() {
    var a = EvictionPlan.admit(MIB, -5 * MIB, List.of());
    assertEquals(0, assertInstanceOf(Admission.TooBig.class, a).free());
  }
}
