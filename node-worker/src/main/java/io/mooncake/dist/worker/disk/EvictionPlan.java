package io.mooncake.dist.worker.disk;

import io.mooncake.dist.scheduler.domain.ModelRef;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The pure decisions behind eviction and admission: candidates in, victims out. No I/O; the keeper
 * gathers the facts (bytes per model, last use, pins, use by active jobs) and applies the answer.
 *
 * <p>Rules: only whole models are evicted, least recently used first (ties: the larger first, so
 * fewer models go; then by name, so the answer is stable). A pinned model or one an active job uses
 * is never a victim. Victims are taken until the bytes asked for are freed; when even every
 * evictable model is not enough, nothing is evicted (a watermark pass still frees what it can: see
 * {@link #toFree}).
 */
public final class EvictionPlan {
  private EvictionPlan() {}

  /** A model a node holds, with what decides whether and when it may go. */
  public record Candidate(
      ModelRef model, long bytes, Instant lastUsed, boolean pinned, boolean inUse) {
    public boolean evictable() {
      return !pinned && !inUse;
    }
  }

  /** The victims chosen, in eviction order, and the bytes they free. */
  public record Victims(List<Candidate> models, long bytes) {
    public boolean isEmpty() {
      return models.isEmpty();
    }
  }

  static final Comparator<Candidate> LEAST_RECENTLY_USED_FIRST =
      Comparator.comparing(Candidate::lastUsed)
          .thenComparing(Comparator.comparingLong(Candidate::bytes).reversed())
          .thenComparing(c -> c.model().describe());

  /**
   * The least recently used evictable models that together free at least {@code bytesToFree}; every
   * evictable model when they do not add up to it (a watermark pass frees what it can).
   */
  public static Victims choose(List<Candidate> candidates, long bytesToFree) {
    List<Candidate> chosen = new ArrayList<>();
    long freed = 0;
    if (bytesToFree <= 0) {
      return new Victims(List.of(), 0);
    }
    for (Candidate c : candidates.stream().sorted(LEAST_RECENTLY_USED_FIRST).toList()) {
      if (freed >= bytesToFree) {
        break;
      }
      if (c.evictable() && c.bytes() > 0) {
        chosen.add(c);
        freed += c.bytes();
      }
    }
    return new Victims(List.copyOf(chosen), freed);
  }

  /** Bytes eviction could free at most: every model neither pinned nor in use. */
  public static long evictable(List<Candidate> candidates) {
    return candidates.stream().filter(Candidate::evictable).mapToLong(Candidate::bytes).sum();
  }

  /**
   * Bytes a watermark pass should free: none while the used share of the disk is at or below {@code
   * highPct}; above it, enough to bring it to {@code lowPct}.
   */
  public static long toFree(long capacity, long free, int highPct, int lowPct) {
    if (capacity <= 0) {
      return 0;
    }
    long used = capacity - free;
    if (used * 100 <= capacity * (long) highPct) {
      return 0;
    }
    long target = Math.floorDiv(capacity * (long) lowPct, 100);
    return Math.max(0, used - target);
  }

  /** Whether a model needing {@code needed} more bytes fits, and what must go for it. */
  public sealed interface Admission {
    /** It fits once {@code victims} are evicted (none when it fits as it is). */
    record Fits(Victims victims) implements Admission {}

    /** It does not fit even after every evictable model went: nothing is evicted. */
    record TooBig(
        long needed, long free, long evictable, List<Candidate> pinned, List<Candidate> inUse)
        implements Admission {
      /** The placement's {@code last_error}: the figures and what holds the rest of the disk. */
      public String message(String nodeId, ModelRef model) {
        StringBuilder m =
            new StringBuilder("not enough disk on node ")
                .append(nodeId)
                .append(" for ")
                .append(model.describe())
                .append(": needs ")
                .append(needed)
                .append(" bytes, ")
                .append(free)
                .append(" free, ")
                .append(evictable)
                .append(" evictable");
        if (!pinned.isEmpty()) {
          m.append("; pinned: ").append(list(pinned));
        }
        if (!inUse.isEmpty()) {
          m.append("; in use by active jobs: ").append(list(inUse));
        }
        return m.toString();
      }
    }
  }

  /**
   * Whether {@code needed} more bytes fit in {@code free} bytes, evicting the least recently used
   * of {@code others} (the models on the node other than the one being admitted) as needed.
   */
  public static Admission admit(long needed, long free, List<Candidate> others) {
    if (needed <= free) {
      return new Admission.Fits(new Victims(List.of(), 0));
    }
    long evictable = evictable(others);
    if (needed > free + evictable) {
      return new Admission.TooBig(
          needed,
          Math.max(0, free),
          evictable,
          others.stream().filter(Candidate::pinned).toList(),
          others.stream().filter(c -> c.inUse() && !c.pinned()).toList());
    }
    return new Admission.Fits(choose(others, needed - free));
  }

  private static String list(List<Candidate> cs) {
    return String.join(
        ", ",
        cs.stream()
            .map(c -> c.model().describe() + " (" + c.bytes() + " bytes)")
            .sorted()
            .toList());
  }
}
