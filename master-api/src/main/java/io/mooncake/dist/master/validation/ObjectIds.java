package io.mooncake.dist.master.validation;

import java.util.HashMap;
import java.util.Map;

/**
 * Object ids across the whole manifest. An id names one chunk in Mooncake Store, so two chunks
 * sharing one would silently overwrite each other; hence uniqueness across files, not only within.
 */
final class ObjectIds {
  static final int MAX_TOTAL = 1_000_000;
  static final int MAX_LENGTH = 1024;

  private final Map<String, String> firstUse = new HashMap<>();
  private long total;

  /**
   * Counts {@code count} more objects against the manifest-wide cap before they are looked at, so a
   * huge manifest is refused without first indexing a million ids.
   */
  void reserve(long count, String field) {
    if (count > MAX_TOTAL - total) {
      throw new ValidationException(
          field,
          "the manifest may hold at most "
              + MAX_TOTAL
              + " objects in total; this file would bring it to "
              + (total + count));
    }
    total += count;
  }

  void claim(String id, String prefix, String field) {
    Texts.requireLength(id, field, 1, MAX_LENGTH);
    Texts.requirePrintable(id, field);
    if (!id.startsWith(prefix)) {
      throw new ValidationException(
          field,
          "must start with chunk_layout.object_prefix "
              + Texts.quote(prefix)
              + ", got "
              + Texts.quote(id));
    }
    String first = firstUse.putIfAbsent(id, field);
    if (first != null) {
      throw new ValidationException(
          field, "duplicate object id " + Texts.quote(id) + " (already used by " + first + ")");
    }
  }
}
