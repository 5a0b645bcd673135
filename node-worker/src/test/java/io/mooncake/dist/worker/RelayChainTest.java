package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.transfer.ChunkTransferException.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RelayChainTest {
  private static final String SEED = "10.0.0.1:1";

  @Test
  void theFirstFollowerReadsFromTheSeedAndEveryOtherFromTheOneBeforeItInTargetOrder() {
    List<String> followers = List.of("10.0.0.9:1", "10.0.0.3:1", "10.0.0.5:1");
    assertEquals(Optional.of(SEED), RelayChain.predecessor(SEED, followers, "10.0.0.9:1"));
    assertEquals(Optional.of("10.0.0.9:1"), RelayChain.predecessor(SEED, followers, "10.0.0.3:1"));
    assertEquals(Optional.of("10.0.0.3:1"), RelayChain.predecessor(SEED, followers, "10.0.0.5:1"));
  }

  @Test
  void noChainForOneFollowerForMoreThanTheMostOrForANodeNotAmongThem() {
    assertEquals(Optional.empty(), RelayChain.predecessor(SEED, List.of("a:1"), "a:1"));
    assertEquals(Optional.empty(), RelayChain.predecessor(SEED, List.of(), "a:1"));
    assertEquals(Optional.empty(), RelayChain.predecessor(SEED, List.of("a:1", "b:1"), "c:1"));
    List<String> most = new ArrayList<>();
    for (int i = 0; i < RelayChain.MAX_FOLLOWERS; i++) {
      most.add("10.0.1." + i + ":1");
    }
    assertEquals(
        Optional.of(most.get(RelayChain.MAX_FOLLOWERS - 2)),
        RelayChain.predecessor(SEED, most, most.get(RelayChain.MAX_FOLLOWERS - 1)));
    List<String> tooMany = new ArrayList<>(most);
    tooMany.add("10.0.2.1:1");
    assertEquals(Optional.empty(), RelayChain.predecessor(SEED, tooMany, most.get(1)));
  }

  @Test
  void
      aFetchIsAskedAgainOnlyBeforeAnyByteLandedBeforeTheDeadlineAndWhileThePredecessorHasNotBegun() {
    long now = 1_000;
    long until = now + 5;
    for (Kind k : List.of(Kind.NOT_FOUND, Kind.BUSY, Kind.SHORT_TRANSFER)) {
      assertTrue(RelayChain.waitsFor(k, 0, until, now), k + ": not begun yet");
      assertFalse(RelayChain.waitsFor(k, 1, until, now), k + " after a byte: the copy fails over");
      assertFalse(RelayChain.waitsFor(k, 0, until, until), k + " at the deadline");
      assertFalse(RelayChain.waitsFor(k, 0, 0, now), k + " without a deadline: not a chain copy");
    }
    for (Kind k : Kind.values()) {
      if (!List.of(Kind.NOT_FOUND, Kind.BUSY, Kind.SHORT_TRANSFER).contains(k)) {
        assertFalse(
            RelayChain.waitsFor(k, 0, until, now),
            k + ": waiting would not help (gone, stalled, broken or ours)");
      }
    }
  }

  @Test
  void theDeadlineIsComparedAsNanoTimeIsAcrossItsWrap() {
    long now = Long.MAX_VALUE - 2;
    long until = now + 10; // wraps to a negative value
    assertTrue(RelayChain.waitsFor(Kind.NOT_FOUND, 0, until, now));
    assertFalse(RelayChain.waitsFor(Kind.NOT_FOUND, 0, until, until + 1));
  }

  @Test
  void aCopyStandsOnTheChainUntilItsNodeLeavesItAndOnlyANoChainJobReadsFromRelays() {
    List<String> followers = List.of("a:1", "b:1", "c:1");
    assertEquals(
        new RelayChain.Place(RelayChain.Standing.UNKNOWN, null),
        RelayChain.place(SEED, null, false, "b:1"));
    assertEquals(
        new RelayChain.Place(RelayChain.Standing.ON, "a:1"),
        RelayChain.place(SEED, followers, false, "b:1"));
    assertEquals(
        new RelayChain.Place(RelayChain.Standing.ON, SEED),
        RelayChain.place(SEED, followers, false, "a:1"));
    assertEquals(
        new RelayChain.Place(RelayChain.Standing.LEFT, null),
        RelayChain.place(SEED, followers, true, "b:1"));
    assertEquals(RelayChain.Place.NO_CHAIN, RelayChain.place(SEED, List.of(), false, "b:1"));
    assertEquals(RelayChain.Place.NO_CHAIN, RelayChain.place(SEED, List.of("b:1"), false, "b:1"));
    assertEquals(RelayChain.Place.NO_CHAIN, RelayChain.place(SEED, followers, false, "z:1"));
    for (RelayChain.Standing s : RelayChain.Standing.values()) {
      assertEquals(
          s == RelayChain.Standing.NO_CHAIN,
          RelayChain.readsFromRelays(s),
          s + ": reading relays that may wait on a chain could close a circle");
    }
  }
}
