package io.mooncake.dist.cli.manifest.hub;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.cli.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Reads the hub API's JSON: the revision answer ({@code sha}, {@code private}, {@code gated}) and a
 * page of the tree listing ({@code type}, {@code path}, {@code size}, {@code oid}, {@code lfs}).
 * Anything the manifest depends on is checked, so a malformed answer fails here, naming the field,
 * instead of turning into a manifest no seed can satisfy.
 */
final class HubJson {
  private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
  private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

  private HubJson() {}

  static HubRevision revision(String body, String what) throws HubException {
    JsonNode root = parse(body, what);
    String sha = root.path("sha").asText("").toLowerCase(Locale.ROOT);
    if (!COMMIT.matcher(sha).matches()) {
      throw inconsistent(what + ": 'sha' is not a 40-hex commit hash: '" + shorten(sha) + "'");
    }
    JsonNode gated = root.path("gated");
    // "gated" is false, or the gating mode ("auto", "manual").
    boolean isGated = !gated.isMissingNode() && !gated.isNull() && !gated.asText().equals("false");
    boolean isPrivate = root.path("private").asBoolean(false);
    return new HubRevision(sha, isGated || isPrivate);
  }

  /** The files of one page of {@code tree?recursive=true}; folders are left out. */
  static List<HubEntry> treePage(String body, String what) throws HubException {
    JsonNode root = parse(body, what);
    if (!root.isArray()) {
      throw inconsistent(what + ": expected a JSON array of entries");
    }
    List<HubEntry> files = new ArrayList<>();
    for (JsonNode e : root) {
      String type = e.path("type").asText("");
      if (type.equals("directory")) {
        continue;
      }
      String path = e.path("path").asText("");
      String where = what + ": entry '" + shorten(path) + "'";
      if (!type.equals("file")) {
        throw inconsistent(where + " has type '" + shorten(type) + "', expected file or directory");
      }
      requireRelative(path, where);
      JsonNode size = e.path("size");
      if (!size.canConvertToLong() || size.asLong() < 0) {
        throw inconsistent(where + " has no size");
      }
      String oid = e.path("oid").asText(null);
      JsonNode lfs = e.path("lfs");
      String sha256 = null;
      if (lfs.isObject()) {
        sha256 = lfs.path("oid").asText("").toLowerCase(Locale.ROOT);
        if (!SHA256.matcher(sha256).matches()) {
          throw inconsistent(where + ": lfs.oid is not a SHA-256: '" + shorten(sha256) + "'");
        }
        JsonNode lfsSize = lfs.path("size");
        if (lfsSize.canConvertToLong() && lfsSize.asLong() != size.asLong()) {
          throw inconsistent(
              where + " has size " + size.asLong() + " but lfs.size " + lfsSize.asLong());
        }
      }
      files.add(new HubEntry(path, size.asLong(), oid, sha256));
    }
    return files;
  }

  // The manifest's paths come from here: no absolute path, no empty or dot segment, no
  // backslash or control character may reach a seed's disk layout.
  private static void requireRelative(String path, String where) throws HubException {
    boolean ok = !path.isEmpty() && !path.startsWith("/") && !path.contains("\\");
    if (ok) {
      for (String segment : path.split("/", -1)) {
        if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
          ok = false;
        }
      }
      ok = ok && path.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
    }
    if (!ok) {
      throw inconsistent(where + " is not a relative file path");
    }
  }

  private static JsonNode parse(String body, String what) throws HubException {
    try {
      return Json.MAPPER.readTree(body);
    } catch (IOException e) {
      throw inconsistent(
          what + ": the answer is not JSON: " + HubJson.shorten(String.valueOf(e.getMessage())));
    }
  }

  private static HubException inconsistent(String message) {
    return new HubException(HubException.Kind.INCONSISTENT, message);
  }

  static String shorten(String s) {
    String printable = s.replaceAll("[^\\x20-\\x7e]", "?");
    return printable.length() <= 80 ? printable : printable.substring(0, 80) + "...";
  }
}
