package io.mooncake.dist.cli.jobs;

import static io.mooncake.dist.cli.jobs.Snapshots.MIB;
import static io.mooncake.dist.cli.jobs.Snapshots.job;
import static io.mooncake.dist.cli.jobs.Snapshots.placement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.cli.master.JobView;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchViewTest {
  private static final long SECOND = 1_000_000_000L;
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JobView view(String json) throws Exception {
    return JobView.of(JSON.readTree(json));
  }

  private static JobView replicating(long followerBytes) throws Exception {
    return view(
        job(
            "j1",
            "replicating",
            null,
            100 * MIB,
            placement("127.0.0.1:25001", "seed", "staged", 100 * MIB, 100 * MIB, true, null),
            placement(
                "127.0.0.1:25002",
                "follower",
                "acquiring",
                followerBytes,
                100 * MIB,
                false,
                null)));
  }

  @Test
  void theFirstPollShowsEveryNodeWithoutARateBecauseThereIsNoEarlierSample() throws Exception {
    WatchView.Frame frame = new WatchView(0).update(replicating(20 * MIB), SECOND);

    assertEquals(
        List.of(
            "[   1.0s] job j1 replicating",
            "[   1.0s] 127.0.0.1:25001 staged  100.0%  100.0 MiB / 100.0 MiB",
            "[   1.0s] 127.0.0.1:25002 acquiring  20.0%  20.0 MiB / 100.0 MiB"),
        frame.changes());
    assertEquals("job j1  replicating  1.0s", frame.screen().get(0));
    assertTrue(frame.screen().get(1).startsWith("NODE "), frame.screen().toString());
    assertTrue(
        frame.screen().get(3).contains("[######........................]   20.0%"),
        frame.screen().toString());
  }

  @Test
  void theNextPollShowsTheRateOverTheLastIntervalAndTheEta() throws Exception {
    WatchView watch = new WatchView(0);
    watch.update(replicating(20 * MIB), SECOND);
    WatchView.Frame frame = watch.update(replicating(60 * MIB), 3 * SECOND);

    // 40 MiB in 2 s is 20 MiB/s; 40 MiB left takes 2 s more.
    assertEquals(
        List.of(
            "[   3.0s] 127.0.0.1:25002 acquiring  60.0%  60.0 MiB / 100.0 MiB  20.0 MiB/s  ETA 2s"),
        frame.changes());
    String follower = frame.screen().get(3);
    assertTrue(follower.contains("20.0 MiB/s") && follower.endsWith("2s  -"), follower);
  }

  @Test
  void theRateIsTakenOverTheLastTenSecondsSoObjectSizedStepsReadAsASteadyRate() throws Exception {
    // A 10 MiB object lands every 2 s while the watch polls every second: over one interval the
    // rate would read 10 MiB/s and 0 B/s in turn; over the window it stays within 10% of 5 MiB/s.
    WatchView watch = new WatchView(0);
    for (int t = 1; t <= 16; t++) {
      String follower = watch.update(replicating((t / 2) * 10 * MIB), t * SECOND).screen().get(3);
      if (t >= 12) {
        double rate = Double.parseDouble(follower.replaceAll(".*?(\\S+) MiB/s.*", "$1"));
        assertTrue(rate >= 4.5 && rate <= 5.5, "at " + t + " s: " + follower);
      }
    }
  }

  @Test
  void aPollWithNothingChangedAddsNoLine() throws Exception {
    WatchView watch = new WatchView(0);
    watch.update(replicating(20 * MIB), SECOND);
    assertEquals(List.of(), watch.update(replicating(20 * MIB), 2 * SECOND).changes());
  }

  @Test
  void aStalledCopyHasZeroRateAndNoEta() throws Exception {
    WatchView watch = new WatchView(0);
    watch.update(replicating(20 * MIB), SECOND);
    String follower = watch.update(replicating(20 * MIB), 2 * SECOND).screen().get(3);
    assertTrue(follower.contains("0 B/s") && follower.endsWith("-  -"), follower);
  }

  @Test
  void redrawnRowsStayAlignedUnderTheirHeaders() throws Exception {
    List<String> screen = new WatchView(0).update(replicating(20 * MIB), SECOND).screen();
    int pct = screen.get(1).indexOf("PCT") + 3;
    assertEquals("%", screen.get(2).substring(pct - 1, pct));
    assertEquals("%", screen.get(3).substring(pct - 1, pct));
  }

  @Test
  void aFailedJobsOutcomeNamesTheJobErrorAndEachFailedPlacement() throws Exception {
    JobView failed =
        view(
            job(
                "j2",
                "failed",
                "seed failed: source file not found: /m/model.bin",
                100 * MIB,
                placement(
                    "127.0.0.1:25001",
                    "seed",
                    "failed",
                    0,
                    100 * MIB,
                    false,
                    "source file not found: /m/model.bin"),
                placement("127.0.0.1:25002", "follower", "planned", 0, 100 * MIB, false, null)));
    assertEquals(
        List.of(
            "job j2 failed after 2.5s: seed failed: source file not found: /m/model.bin",
            "  127.0.0.1:25001 (seed) failed: source file not found: /m/model.bin",
            "  127.0.0.1:25002 (follower) planned: -"),
        WatchView.outcome(failed, 2_500_000_000L));
  }

  @Test
  void aCompletedJobsOutcomeCountsStagedPlacements() throws Exception {
    JobView done =
        view(
            job(
                "j3",
                "completed",
                null,
                MIB,
                placement("a:1", "seed", "staged", MIB, MIB, true, null),
                placement("b:1", "follower", "staged", MIB, MIB, true, null)));
    assertEquals(
        List.of("job j3 completed: 2/2 placements staged after 1.0s"),
        WatchView.outcome(done, SECOND));
  }
}
