package io.mooncake.dist.worker;

import io.mooncake.dist.transfer.ChunkTransferException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Where a follower of a small job reads every object from: the follower before it in the job's
 * target order, the first follower from the seed. A chain, as the plain {@code socat | tee} relay
 * is: every uplink carries the model once to exactly one reader, every downlink receives it from
 * exactly one sender, and each follower passes an object on as it lands (cut-through), so the job
 * takes about S/B plus a few megabytes of pipeline per hop.
 *
 * <p>Issue 20 (1 seed + 7 followers, 100 Mbit/s links, 256 MiB): the tree of relays that larger
 * jobs use ({@link SourcePlanner}) ran 1.15-1.27 x S/B, its followers' downlinks each shared by up
 * to seven senders and carrying 86-89% of the link where the chain's carry 92%; the same job along
 * this chain ran 1.10-1.18 x. A chain has no slack: a follower that falls behind its predecessor (a
 * hiccup of the machine) stays behind, and so does everyone after it, which is why it is kept to
 * jobs of at most {@link #MAX_FOLLOWERS} followers; larger ones keep the tree, whose followers
 * catch up from several sources.
 *
 * <p>A follower waits for its predecessor to begin receiving an object (it answers "not here" until
 * then) for at most {@link #PATIENCE}; a predecessor that has not begun by then, cannot be reached,
 * or fails a copy takes this node off the chain for the rest of the job: its copies then read from
 * nodes holding the object whole, or from the seed ({@link #readsFromRelays}).
 */
final class RelayChain {
  private RelayChain() {}

  /**
   * The most followers a job may have for them to relay along a chain; the scheduler releases such
   * a job's copies to every follower in file order.
   */
  static final int MAX_FOLLOWERS =
      io.mooncake.dist.scheduler.state.JobEvaluator.CHAIN_MAX_FOLLOWERS;

  /**
   * How long a copy waits for its predecessor to begin sending the object. A chain's copies claim
   * an object about when their predecessor does (each frees a slot when the object before it is
   * through), so a long wait means the predecessor is stuck or no longer on the chain.
   */
  static final Duration PATIENCE = Duration.ofSeconds(10);

  /** How long a copy waiting for its predecessor pauses between two asks. */
  static final Duration STEP = Duration.ofMillis(20);

  /** Where a copy of this node stands towards its job's chain. */
  enum Standing {
    /** The job's shape is not known here (yet): whole holders and the seed only. */
    UNKNOWN,
    /** The job does not relay along a chain: any source, as SourcePlanner orders them. */
    NO_CHAIN,
    /** This node left the job's chain: whole holders and the seed only. */
    LEFT,
    /** This node reads every object of the job from its predecessor. */
    ON
  }

  /** Where a copy stands, and the node it reads from when {@link Standing#ON} (null otherwise). */
  record Place(Standing standing, String predecessor) {
    static final Place UNKNOWN_SHAPE = new Place(Standing.UNKNOWN, null);
    static final Place NO_CHAIN = new Place(Standing.NO_CHAIN, null);
  }

  /**
   * Where a copy of {@code me} stands: {@code followers} is the job's followers in target order
   * when they are few enough for a chain (empty when they are not), null when the job's shape is
   * unknown; {@code left} whether this node has left the job's chain.
   */
  static Place place(String seed, List<String> followers, boolean left, String me) {
    if (followers == null) {
      return Place.UNKNOWN_SHAPE;
    }
    Optional<String> predecessor = predecessor(seed, followers, me);
    if (predecessor.isEmpty()) {
      return Place.NO_CHAIN;
    }
    return left ? new Place(Standing.LEFT, null) : new Place(Standing.ON, predecessor.get());
  }

  /**
   * Whether a copy may read from followers that are still receiving the object. Not in a job that
   * may relay along a chain unless on it: a chain's copies read from their predecessor whenever it
   * began, not only from copies that began before them (the order that keeps the tree's relays from
   * waiting on each other in a circle), so a copy off the chain reads only from nodes that hold the
   * object whole, or from the seed, which never wait on anyone.
   */
  static boolean readsFromRelays(Standing s) {
    return s == Standing.NO_CHAIN;
  }

  /**
   * The node {@code me} reads every object of the job from: the seed for the first of {@code
   * followers} (the job's placements other than the seed's, in target order), the follower before
   * it for every other; empty when the job does not relay along a chain (one follower, more than
   * {@link #MAX_FOLLOWERS}, or {@code me} not among them).
   */
  static Optional<String> predecessor(String seed, List<String> followers, String me) {
    if (followers.size() < 2 || followers.size() > MAX_FOLLOWERS) {
      return Optional.empty();
    }
    int at = followers.indexOf(me);
    if (at < 0) {
      return Optional.empty();
    }
    return Optional.of(at == 0 ? seed : followers.get(at - 1));
  }

  /**
   * Whether a fetch that failed with {@code kind} after storing {@code stored} bytes is asked again
   * after {@link #STEP}: only while nothing has landed, before {@code waitUntil} ({@link
   * System#nanoTime()}; 0 = no waiting), and for the answers of a predecessor that has not begun to
   * receive the object yet: "not here", busy, or a connection closed before any byte (its own first
   * ask ended the arrival it had begun). No connection at all is a predecessor that is gone, and a
   * timeout one that stalled: no wait.
   */
  static boolean waitsFor(ChunkTransferException.Kind kind, long stored, long waitUntil, long now) {
    if (waitUntil == 0 || stored > 0 || now - waitUntil >= 0) {
      return false;
    }
    return switch (kind) {
      case NOT_FOUND, BUSY, SHORT_TRANSFER -> true;
      default -> false;
    };
  }
}
