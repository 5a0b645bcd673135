package io.mooncake.dist.worker;

import io.mooncake.dist.scheduler.store.Replica;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a follower takes an object from: the fan-out rule that keeps the seed's uplink for bytes
 * nobody else has. The seed must send every object at least once, and its uplink is the one link
 * every follower depends on while it is still acquiring; a second copy of an object over it is time
 * the seed cannot spend on an object no follower holds yet. So (BitTorrent's "super-seeding", in
 * pull form):
 *
 * <ul>
 *   <li>Other followers come first, in the catalog's order (not avoided, least busy): those that
 *       hold the object and those receiving it from a holder right now, which relay it as it lands
 *       (cut-through); the seed is the last resort, for when every one of them fails, and even then
 *       only while no other follower is pulling the object from it (the caller takes the object's
 *       one seed pull before asking the seed, {@code TaskQueue.takeSeedPull}).
 *   <li>When the seed is the only source and another follower is already pulling this object from
 *       it but cannot serve it yet (its node is not live), the copy waits instead of pulling a
 *       second copy: it is deferred (not failed, not an attempt) and claimed again moments later.
 *   <li>So does a copy whose only source is the seed while this node is already pulling another
 *       object from it, when the job has other followers to relay: one pull from the seed per
 *       follower at a time, so the seed's uplink is not split F x concurrency ways and the node's
 *       other slots take objects other followers relay.
 *   <li>And so does a copy whose only source is the seed while this node has already pulled its
 *       fair share of the job's objects from the seed ({@link SeedShares}): every object a follower
 *       pulls from the seed it relays to all the others, so its uplink carries (followers - 1) x
 *       its pulls, and a follower that won more pulls than its share is the job's slowest link at
 *       the end.
 *   <li>Otherwise the seed sends it (the caller then takes the object's one seed pull in the
 *       database, see {@code TaskQueue.takeSeedPull}), and this follower relays it to the others.
 * </ul>
 *
 * A wait lasts only while that other pull makes progress (the caller counts a pull as in flight
 * while its task row was updated within the last few seconds): a stalled or dead relay stops
 * holding anyone back, and the seed serves the object again.
 */
final class SourcePlanner {
  private SourcePlanner() {}

  /** What to do with one copy. */
  sealed interface Plan {
    /** Try these holders in this order. */
    record Fetch(List<Replica> order) implements Plan {}

    /** Ask again shortly: another follower should take this object from the seed. */
    record Wait(Why why, String reason) implements Plan {}
  }

  /** Why a copy waits. */
  enum Why {
    /** Another follower is pulling the object from the seed. */
    SEED_BUSY,
    /** This node already pulls another object from the seed. */
    OWN_SLOT,
    /** This node has pulled its share of the job's objects from the seed. */
    SHARE_TAKEN
  }

  /**
   * @param holders live sources with the right digest, holders and receiving followers, best first
   *     (this node excluded)
   * @param seedNodeId the job's seed
   * @param seedPullInFlight whether another follower is pulling this object from the seed right now
   * @param ownSeedPullRunning whether this node is pulling another object from the seed right now
   *     (the caller passes false for a job with a single follower: nobody can relay for it)
   * @param ownShareTaken whether this node has already pulled its share of the job's objects from
   *     the seed and should leave this one to another follower (false likewise with one follower,
   *     and once the copy has waited long enough, see {@link SeedShares#holdBack(int, int, long)})
   */
  static Plan plan(
      String objectId,
      List<Replica> holders,
      String seedNodeId,
      boolean seedPullInFlight,
      boolean ownSeedPullRunning,
      boolean ownShareTaken) {
    List<Replica> peers = new ArrayList<>(holders.size());
    Replica seed = null;
    for (Replica h : holders) {
      if (h.nodeId().equals(seedNodeId)) {
        seed = h;
      } else {
        peers.add(h);
      }
    }
    if (!peers.isEmpty()) {
      if (seed != null) {
        peers.add(seed);
      }
      return new Plan.Fetch(List.copyOf(peers));
    }
    if (seed != null && seedPullInFlight) {
      return new Plan.Wait(
          Why.SEED_BUSY,
          "object "
              + objectId
              + " is on its way from the seed "
              + seedNodeId
              + " to another follower; taking it from that follower instead of a second copy from the seed");
    }
    if (seed != null && ownSeedPullRunning) {
      return seedSlotTaken(seedNodeId);
    }
    if (seed != null && ownShareTaken) {
      return new Plan.Wait(
          Why.SHARE_TAKEN,
          "this node has pulled its share of the job's objects from the seed "
              + seedNodeId
              + "; leaving object "
              + objectId
              + " to a follower that has pulled fewer, so no uplink relays more than its share");
    }
    return new Plan.Fetch(seed == null ? List.of() : List.of(seed));
  }

  /**
   * The sources of a copy's later round, without those that refused it earlier (busy serving the
   * object to others, or a receiving follower that answered "not here"); all of them when nothing
   * else is left. A follower named as receiving has been claimed, but may not have begun to receive
   * (its copy is starting, or it is itself between sources): it answers "not here". Walking on
   * through the list the claim read leads every copy that met such a relay to the few that had
   * begun when the object was released, each of them then feeding up to ~200 readers at a 200th of
   * its uplink (bench/fleet.sh, N = 1,000, session 22); a fresh lookup sees who receives now and
   * how many read from each.
   */
  static List<Replica> skipping(List<Replica> holders, java.util.Set<String> notHere) {
    List<Replica> left = without(holders, notHere);
    return left.isEmpty() ? holders : left;
  }

  /** The holders that hold the object whole: those not in {@code arriving}, in their order. */
  static List<Replica> wholeHolders(List<Replica> holders, java.util.Set<String> arriving) {
    return without(holders, arriving);
  }

  private static List<Replica> without(List<Replica> holders, java.util.Set<String> nodes) {
    if (nodes.isEmpty()) {
      return holders;
    }
    List<Replica> kept = new ArrayList<>(holders.size());
    for (Replica h : holders) {
      if (!nodes.contains(h.nodeId())) {
        kept.add(h);
      }
    }
    return List.copyOf(kept);
  }

  /** The wait for a copy whose only source is the seed while this node already pulls from it. */
  static Plan.Wait seedSlotTaken(String seedNodeId) {
    return new Plan.Wait(
        Why.OWN_SLOT,
        "this node already takes an object from the seed "
            + seedNodeId
            + "; one at a time, so the seed's uplink serves every follower's first copy quickly");
  }
}
