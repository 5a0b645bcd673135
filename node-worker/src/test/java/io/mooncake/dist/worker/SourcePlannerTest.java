package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.store.Replica;
import java.util.List;
import org.junit.jupiter.api.Test;

class SourcePlannerTest {
  private static final String SEED = "10.0.0.1:25000";

  private static Replica on(String node) {
    return new Replica("m/o1", node, 8, "sha256:aa", "/d/m.bin", 0);
  }

  private static List<String> order(SourcePlanner.Plan plan) {
    return assertInstanceOf(SourcePlanner.Plan.Fetch.class, plan).order().stream()
        .map(Replica::nodeId)
        .toList();
  }

  @Test
  void followersThatHoldTheObjectComeFirstInTheCatalogsOrderAndTheSeedLast() {
    var plan =
        SourcePlanner.plan("m/o1", List.of(on(SEED), on("f2"), on("f1")), SEED, true, true, false);
    assertEquals(List.of("f2", "f1", SEED), order(plan));
  }

  @Test
  void aFollowerHolderIsUsedWhetherOrNotTheSeedIsBusy() {
    assertEquals(
        List.of("f3"),
        order(SourcePlanner.plan("m/o1", List.of(on("f3")), SEED, true, false, false)));
    assertEquals(
        List.of("f3"),
        order(SourcePlanner.plan("m/o1", List.of(on("f3")), SEED, false, false, false)));
  }

  @Test
  void whenOnlyTheSeedHoldsItAndAnotherFollowerIsPullingItTheCopyWaits() {
    var plan = SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, true, false, false);
    var wait = assertInstanceOf(SourcePlanner.Plan.Wait.class, plan);
    assertTrue(wait.reason().contains("m/o1") && wait.reason().contains(SEED), wait.reason());
  }

  @Test
  void whenOnlyTheSeedHoldsItAndNobodyIsPullingItTheSeedSendsIt() {
    assertEquals(
        List.of(SEED),
        order(SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, false, false, false)));
  }

  @Test
  void whenOnlyTheSeedHoldsItAndThisNodeIsAlreadyPullingFromTheSeedTheCopyWaits() {
    var wait =
        assertInstanceOf(
            SourcePlanner.Plan.Wait.class,
            SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, false, true, false));
    assertTrue(wait.reason().contains("one at a time"), wait.reason());
    assertEquals(
        List.of("f1", SEED),
        order(SourcePlanner.plan("m/o1", List.of(on(SEED), on("f1")), SEED, false, true, false)),
        "a follower holder is taken whatever this node pulls from the seed");
  }

  @Test
  void noHolderAtAllIsAnEmptyOrderForTheCallerToReport() {
    assertEquals(List.of(), order(SourcePlanner.plan("m/o1", List.of(), SEED, true, false, false)));
  }

  @Test
  void withAnUnknownSeedEveryHolderIsAPeer() {
    assertEquals(
        List.of(SEED, "f1"),
        order(
            SourcePlanner.plan(
                "m/o1", List.of(on(SEED), on("f1")), "elsewhere", true, true, false)));
  }

  @Test
  void aFollowerStillReceivingTheObjectIsASourceBeforeTheSeedSoNobodyWaitsForItToFinish() {
    Replica receiving = new Replica("m/o1", "f4", 8, "sha256:aa", null, 0);
    assertEquals(
        List.of("f4", SEED),
        order(SourcePlanner.plan("m/o1", List.of(receiving, on(SEED)), SEED, true, true, false)),
        "the seed pull in flight is f4's own: relay it rather than wait or pull a second copy");
    assertEquals(
        List.of("f1", "f4", SEED),
        order(
            SourcePlanner.plan(
                "m/o1", List.of(on("f1"), receiving, on(SEED)), SEED, false, false, false)));
  }

  @Test
  void whenThisNodeHasPulledItsShareFromTheSeedTheCopyWaitsForAnotherFollower() {
    var wait =
        assertInstanceOf(
            SourcePlanner.Plan.Wait.class,
            SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, false, false, true));
    assertEquals(SourcePlanner.Why.SHARE_TAKEN, wait.why());
    assertTrue(wait.reason().contains("share") && wait.reason().contains("m/o1"), wait.reason());
    assertEquals(
        List.of("f1", SEED),
        order(SourcePlanner.plan("m/o1", List.of(on(SEED), on("f1")), SEED, false, false, true)),
        "the share only keeps this node from the seed: a follower holder is taken");
  }

  @Test
  void theSeedPullInFlightAndTheOwnSlotComeBeforeTheShareAsReasonsToWait() {
    assertEquals(
        SourcePlanner.Why.SEED_BUSY,
        assertInstanceOf(
                SourcePlanner.Plan.Wait.class,
                SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, true, true, true))
            .why());
    assertEquals(
        SourcePlanner.Why.OWN_SLOT,
        assertInstanceOf(
                SourcePlanner.Plan.Wait.class,
                SourcePlanner.plan("m/o1", List.of(on(SEED)), SEED, false, true, true))
            .why());
  }

  @Test
  void aLaterRoundSkipsTheRelaysThatAnsweredNotHereKeepingTheCatalogsOrder() {
    var holders = List.of(on("f2"), on("f1"), on("f3"), on(SEED));
    assertEquals(holders, SourcePlanner.skipping(holders, java.util.Set.of()));
    assertEquals(
        List.of("f1", SEED),
        SourcePlanner.skipping(holders, java.util.Set.of("f2", "f3")).stream()
            .map(Replica::nodeId)
            .toList());
  }

  @Test
  void whenEverySourceAnsweredNotHereTheyAreAllTriedAgain() {
    var holders = List.of(on("f2"), on("f1"));
    assertEquals(holders, SourcePlanner.skipping(holders, java.util.Set.of("f1", "f2")));
  }

  @Test
  void withTheRelaysSkippedOnlyTheSeedIsLeftAndItsRulesApply() {
    var sources = SourcePlanner.skipping(List.of(on("f2"), on(SEED)), java.util.Set.of("f2"));
    var wait =
        assertInstanceOf(
            SourcePlanner.Plan.Wait.class,
            SourcePlanner.plan("m/o1", sources, SEED, true, false, false));
    assertEquals(SourcePlanner.Why.SEED_BUSY, wait.why());
  }

  @Test
  void wholeHoldersLeaveOutTheNodesStillReceivingTheObjectAndKeepTheOrder() {
    Replica a = on("f1");
    Replica b = on("f2");
    Replica c = on("f3");
    assertEquals(
        List.of(a, c), SourcePlanner.wholeHolders(List.of(a, b, c), java.util.Set.of("f2")));
    assertEquals(
        List.of(a, b, c), SourcePlanner.wholeHolders(List.of(a, b, c), java.util.Set.of()));
    assertEquals(
        List.of(), SourcePlanner.wholeHolders(List.of(b), java.util.Set.of("f2")), "none whole");
  }
}
