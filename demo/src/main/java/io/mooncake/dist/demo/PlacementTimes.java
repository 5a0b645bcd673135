package io.mooncake.dist.demo;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * When each placement's bytes started and finished moving, as seen in the polled snapshots (so to
 * within one poll interval), and the rate in between. The job's total time mixes two different
 * things, the seed's first download from the source and the follower's copy from the seed; these
 * times let the demo report each on its own.
 */
final class PlacementTimes {
  /** One placement's observations; times are seconds since the job was created. */
  record Phase(
      String nodeId,
      String role,
      long totalBytes,
      double firstBytesSeconds,
      long firstBytes,
      double stagedSeconds) {

    /**
     * Bytes per second between the first poll that showed bytes and the one that showed staged; NaN
     * when no poll caught the placement in between.
     */
    double bytesPerSecond() {
      double seconds = stagedSeconds - firstBytesSeconds;
      return seconds <= 0 ? Double.NaN : (totalBytes - firstBytes) / seconds;
    }
  }

  private final Map<String, Phase> phases = new LinkedHashMap<>();

  /** Records what {@code snapshot}, polled {@code seconds} after the job was created, shows. */
  void observe(JsonNode snapshot, double seconds) {
    long jobTotal = snapshot.path("total_size_bytes").asLong(0);
    for (JsonNode p : snapshot.path("placements")) {
      String node = p.path("node_id").asText();
      long total = p.path("total_bytes").asLong(jobTotal);
      long staged = p.path("staged_bytes").asLong(0);
      boolean done = "staged".equals(p.path("state").asText());
      Phase was = phases.get(node);
      double first = was != null ? was.firstBytesSeconds() : Double.NaN;
      long firstBytes = was != null ? was.firstBytes() : 0;
      if (Double.isNaN(first) && staged > 0 && !done) {
        first = seconds;
        firstBytes = staged;
      }
      double stagedAt = was != null ? was.stagedSeconds() : Double.NaN;
      if (Double.isNaN(stagedAt) && done) {
        stagedAt =
            seconds; // staged with no partial poll seen: too fast to time, the rate stays NaN
      }
      phases.put(
          node, new Phase(node, p.path("role").asText("?"), total, first, firstBytes, stagedAt));
    }
  }

  Phase byRole(String role) {
    return phases.values().stream().filter(p -> role.equals(p.role())).findFirst().orElse(null);
  }
}
