package io.mooncake.dist.master.validation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The manifest's file paths. They are joined onto a node's staging directory, so each must stay
 * inside it (relative, no traversal, no Windows-isms) and no two files may land on the same place.
 */
final class FilePaths {
  static final int MAX_LENGTH = 4096;
  private static final Pattern DRIVE = Pattern.compile("^[A-Za-z]:.*", Pattern.DOTALL);

  private final Map<String, Integer> firstUse = new HashMap<>();
  private final String filesField;

  /**
   * @param filesField the JSON path of the files array, for naming the other file in a clash
   */
  FilePaths(String filesField) {
    this.filesField = filesField;
  }

  /** Validates {@code path} of file {@code index} and records it; duplicates are reported here. */
  String claim(String path, String field, int index) {
    requireRelative(path, field);
    Integer first = firstUse.putIfAbsent(path, index);
    if (first != null) {
      throw new ValidationException(
          field,
          "duplicate path " + Texts.quote(path) + " (already used by " + pathField(first) + ")");
    }
    return path;
  }

  /**
   * Rejects a file whose path lies under another file's path ("a" and "a/b"): one of them could not
   * be written. Checked once all files are in, because sorting makes it linear instead of
   * quadratic.
   */
  void requireNoFileUnderAnother() {
    List<String> sorted = new ArrayList<>(firstUse.keySet());
    sorted.sort(FilePaths::compareSegmentWise);
    // With '/' ordered before every other character, anything under "a" sorts directly after "a".
    for (int i = 1; i < sorted.size(); i++) {
      String parent = sorted.get(i - 1);
      String child = sorted.get(i);
      if (child.length() > parent.length()
          && child.startsWith(parent)
          && child.charAt(parent.length()) == '/') {
        throw new ValidationException(
            pathField(firstUse.get(child)),
            "path "
                + Texts.quote(child)
                + " lies under "
                + Texts.quote(parent)
                + ", which is itself a file ("
                + pathField(firstUse.get(parent))
                + ")");
      }
    }
  }

  private String pathField(int index) {
    return Fields.index(filesField, index) + ".path";
  }

  private static void requireRelative(String path, String field) {
    Texts.requireLength(path, field, 1, MAX_LENGTH);
    Texts.requirePrintable(path, field);
    if (path.startsWith("/")) {
      throw new ValidationException(field, "must be a relative path, got " + Texts.quote(path));
    }
    if (path.indexOf('\\') >= 0) {
      throw new ValidationException(
          field, "must use '/' as separator, not '\\', got " + Texts.quote(path));
    }
    if (DRIVE.matcher(path).matches()) {
      throw new ValidationException(
          field, "must not start with a drive letter, got " + Texts.quote(path));
    }
    for (String segment : path.split("/", -1)) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw new ValidationException(
            field, "must not contain empty, '.' or '..' segments, got " + Texts.quote(path));
      }
    }
  }

  private static int compareSegmentWise(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      int ca = rank(a.charAt(i));
      int cb = rank(b.charAt(i));
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
    }
    return Integer.compare(a.length(), b.length());
  }

  private static int rank(char c) {
    return c == '/' ? -1 : c;
  }
}
