package io.mooncake.dist.cli.jobs;

import static io.mooncake.dist.cli.jobs.Snapshots.MIB;
import static io.mooncake.dist.cli.jobs.Snapshots.job;
import static io.mooncake.dist.cli.jobs.Snapshots.placement;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.cli.master.JobView;
import java.util.List;
import org.junit.jupiter.api.Test;

class StatusViewTest {

  @Test
  void statusShowsTheJobThenAnAlignedPlacementTable() throws Exception {
    JobView job =
        JobView.of(
            new ObjectMapper()
                .readTree(
                    job(
                        "019d3ca8",
                        "replicating",
                        null,
                        MIB,
                        placement("127.0.0.1:25001", "seed", "staged", MIB, MIB, true, null),
                        placement(
                            "127.0.0.1:25002",
                            "follower",
                            "acquiring",
                            256 * 1024,
                            MIB,
                            false,
                            null))));
    assertEquals(
        List.of(
            "job         019d3ca8",
            "status      replicating",
            "model       demo-model r1 (bin, local), 1.0 MiB",
            "seed        127.0.0.1:25001",
            "last_error  -",
            "",
            "NODE             ROLE      STATE           STAGED / TOTAL     PCT  VERIFIED  LAST_ERROR",
            "127.0.0.1:25001  seed      staged       1.0 MiB / 1.0 MiB  100.0%  yes       -",
            "127.0.0.1:25002  follower  acquiring  256.0 KiB / 1.0 MiB   25.0%  no        -"),
        StatusView.render(job));
  }
}
