package io.mooncake.dist.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class PlacementTimesTest {
  private static final long MIB = 1 << 20;
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void eachPlacementIsTimedFromTheFirstPollShowingBytesToTheFirstShowingItStaged()
      throws Exception {
    PlacementTimes times = new PlacementTimes();
    times.observe(snapshot(0, "planned", 0, "planned"), 0.25);
    times.observe(snapshot(16 * MIB, "acquiring", 0, "acquiring"), 1.0);
    times.observe(snapshot(64 * MIB, "acquiring", 16 * MIB, "acquiring"), 2.0);
    times.observe(snapshot(96 * MIB, "staged", 64 * MIB, "acquiring"), 3.0);
    times.observe(snapshot(96 * MIB, "staged", 96 * MIB, "staged"), 3.5);

    PlacementTimes.Phase seed = times.byRole("seed");
    assertEquals(1.0, seed.firstBytesSeconds());
    assertEquals(3.0, seed.stagedSeconds());
    assertEquals(40.0 * MIB, seed.bytesPerSecond(), 1e-6, "80 MiB in 2 s");

    PlacementTimes.Phase follower = times.byRole("follower");
    assertEquals(2.0, follower.firstBytesSeconds());
    assertEquals(3.5, follower.stagedSeconds());
    assertEquals(80.0 * MIB / 1.5, follower.bytesPerSecond(), 1e-6);
  }

  @Test
  void aPlacementStagedBetweenTwoPollsHasNoRate() throws Exception {
    PlacementTimes times = new PlacementTimes();
    times.observe(snapshot(0, "planned", 0, "planned"), 0.25);
    times.observe(snapshot(96 * MIB, "staged", 96 * MIB, "staged"), 0.5);

    assertEquals(0.5, times.byRole("seed").stagedSeconds());
    assertTrue(Double.isNaN(times.byRole("seed").bytesPerSecond()));
  }

  private JsonNode snapshot(long seedBytes, String seedState, long followerBytes, String state)
      throws Exception {
    return json.readTree(
        """
        {"status": "replicating", "total_size_bytes": %d, "placements": [
          {"node_id": "a:1", "role": "seed", "state": "%s", "staged_bytes": %d, "total_bytes": %d},
          {"node_id": "b:1", "role": "follower", "state": "%s", "staged_bytes": %d, "total_bytes": %d}
        ]}
        """
            .formatted(96 * MIB, seedState, seedBytes, 96 * MIB, state, followerBytes, 96 * MIB));
  }
}
