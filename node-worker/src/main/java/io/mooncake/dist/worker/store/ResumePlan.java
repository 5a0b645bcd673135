package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.transfer.ObjectDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Which objects of an interrupted download a new attempt may keep, from what its journal recorded
 * (pure; the bytes themselves are then hashed again by {@link KeptPrefix} before anything is
 * trusted). An attempt keeps the longest run of objects from byte 0 that the journal lists exactly
 * as the manifest lays them out (offset, length, id) with a digest in the algorithm this store
 * publishes, provided the journal is about the same file, size, manifest sha256 and source URL, and
 * something will show that the source still serves the same bytes: the manifest's sha256 (checked
 * over the whole file at the end) or a validator from the source to send as {@code If-Range}. The
 * last object is never kept, so a resumed attempt always reads something from the source and the
 * file's end is always checked against it.
 *
 * <p>A seed that took over from a failed one (seed failover) has a second rule, {@link #toFetch}:
 * objects live nodes already hold (it copies them from those nodes, or has them already) are not
 * read from the source at all; the rest are read as runs of adjacent objects, one range request per
 * run.
 */
final class ResumePlan {
  private ResumePlan() {}

  /**
   * @param kept the journal lines to re-check, a prefix of the file's objects in byte order (empty
   *     to read the whole file)
   * @param validator what to send as {@code If-Range}, or null
   * @param why why nothing is kept, or how much is, in words for the log
   */
  record Decision(List<DownloadJournal.Line> kept, String validator, String why) {
    static Decision fromZero(String why) {
      return new Decision(List.of(), null, why);
    }

    /** The byte the source is read from: the end of the last kept object. */
    long from() {
      if (kept.isEmpty()) {
        return 0;
      }
      DownloadJournal.Line last = kept.get(kept.size() - 1);
      return last.offset() + last.length();
    }
  }

  static Decision decide(
      Optional<DownloadJournal.Recorded> journal,
      DownloadJournal.Header current,
      List<ObjectPlan> inByteOrder,
      ObjectDigest.Algorithm publishes) {
    if (journal.isEmpty()) {
      return Decision.fromZero("no earlier attempt recorded");
    }
    DownloadJournal.Header was = journal.get().header();
    if (!was.path().equals(current.path())
        || was.size() != current.size()
        || !Objects.equals(was.sha256(), current.sha256())) {
      return Decision.fromZero("the earlier attempt was for another version of the file");
    }
    if (!was.source().equals(current.source())) {
      return Decision.fromZero("the earlier attempt read another source URL");
    }
    if (current.sha256() == null && was.validator() == null) {
      return Decision.fromZero(
          "the manifest gives no sha256 and the source no ETag or Last-Modified, so nothing would"
              + " show it still serves the bytes kept");
    }
    List<DownloadJournal.Line> kept = new ArrayList<>();
    List<DownloadJournal.Line> lines = journal.get().objects();
    for (int i = 0; i < lines.size() && i < inByteOrder.size() - 1; i++) {
      DownloadJournal.Line l = lines.get(i);
      ObjectPlan o = inByteOrder.get(i);
      if (l.offset() != o.offset()
          || l.length() != o.length()
          || !l.objectId().equals(o.objectId())
          || !digestIn(l.digest(), publishes)) {
        break;
      }
      kept.add(l);
    }
    if (kept.isEmpty()) {
      return Decision.fromZero("no object of the earlier attempt can be kept");
    }
    return new Decision(
        List.copyOf(kept),
        was.validator(),
        kept.size() + " of " + inByteOrder.size() + " object(s) recorded by the earlier attempt");
  }

  /**
   * A run of adjacent objects to read from the source in one request: bytes {@code from()} to
   * {@code end()} of the file.
   */
  record Run(List<ObjectPlan> objects) {
    Run {
      objects = List.copyOf(objects);
    }

    long from() {
      return objects.get(0).offset();
    }

    long end() {
      ObjectPlan last = objects.get(objects.size() - 1);
      return last.offset() + last.length();
    }
  }

  /**
   * The held rule (seed failover): the objects of one file, in byte order, that a new seed must
   * read from the source because no live node holds them, as maximal runs of adjacent objects. An
   * object in {@code held} is skipped; a run ends before it. Empty objects are never fetched.
   *
   * @param inByteOrder the file's objects, tiling it from byte 0 ({@link ObjectLayout})
   * @param held object ids live nodes hold with the released digest
   */
  static List<Run> toFetch(List<ObjectPlan> inByteOrder, Set<String> held) {
    List<Run> runs = new ArrayList<>();
    List<ObjectPlan> current = new ArrayList<>();
    for (ObjectPlan o : inByteOrder) {
      if (held.contains(o.objectId()) || o.length() == 0) {
        if (!current.isEmpty()) {
          runs.add(new Run(current));
          current = new ArrayList<>();
        }
        continue;
      }
      current.add(o);
    }
    if (!current.isEmpty()) {
      runs.add(new Run(current));
    }
    return List.copyOf(runs);
  }

  private static boolean digestIn(String digest, ObjectDigest.Algorithm algorithm) {
    try {
      return ObjectDigest.Algorithm.of(digest) == algorithm;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
