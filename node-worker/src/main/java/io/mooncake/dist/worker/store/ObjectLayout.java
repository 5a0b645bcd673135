package io.mooncake.dist.worker.store;

import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks that a file's objects tile it exactly (contiguous from byte 0 to {@code size_bytes}, no
 * gaps, no overlaps, unique ids) and returns them in byte order, which is the order a sequential
 * pass meets them. A manifest that breaks this is a master bug no retry can fix, so the failure is
 * permanent and is raised before any byte is written.
 */
final class ObjectLayout {
  private ObjectLayout() {}

  static List<ObjectPlan> inByteOrder(FilePlan file) throws StoreException {
    String where = "manifest objects of " + file.path();
    if (file.sizeBytes() < 0) {
      throw new StoreException(where + ": negative size_bytes " + file.sizeBytes(), false);
    }
    List<ObjectPlan> sorted = new ArrayList<>(file.objects());
    sorted.sort(Comparator.comparingLong(ObjectPlan::offset));
    Set<String> ids = new HashSet<>();
    long next = 0;
    for (ObjectPlan o : sorted) {
      if (o.objectId() == null || !ids.add(o.objectId())) {
        throw new StoreException(where + ": missing or duplicate object id " + o.objectId(), false);
      }
      if (o.length() < 0) {
        throw new StoreException(
            where + ": object " + o.objectId() + " has negative length", false);
      }
      if (o.offset() != next) {
        throw new StoreException(
            where
                + ": object "
                + o.objectId()
                + " starts at byte "
                + o.offset()
                + " but the previous object ends at byte "
                + next,
            false);
      }
      next = o.offset() + o.length();
    }
    if (next != file.sizeBytes()) {
      throw new StoreException(
          where + " cover " + next + " bytes, size_bytes is " + file.sizeBytes(), false);
    }
    return sorted;
  }
}
