package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.state.JobTransitions;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scheduler writes a job's status and its placements' states only through {@link
 * JobTransitions}: a change the table forbids is refused (the pass rolls back and the row keeps its
 * state), whatever the evaluator computed. The rows are pushed into a state the evaluator would
 * leave by a forbidden edge, as a bug elsewhere could.
 */
class StateWritesFollowTransitionsTest {
  private static final String SEED = "10.5.0.0:1";
  private static final String FOLLOWER = "10.5.0.1:1";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static void createJob(String job) {
    ModelRef model = new ModelRef(job, "r1", "safetensors", "local");
    ManifestFile file =
        new ManifestFile(
            "m.bin",
            2000,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            List.of(job + "/m.bin/0", job + "/m.bin/1"),
            new ChunkLayout(1000, 2, job + "/m.bin"));
    JobRequest req =
        new JobRequest(
            job,
            model,
            new Manifest(model, 2000, "v1", List.of(file)),
            SEED,
            List.of(SEED, FOLLOWER),
            null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha-" + job, "{}"));
  }

  private static String jobStatus(String job) {
    return dsl().fetchValue("SELECT status FROM jobs WHERE job_id = ?", job).toString();
  }

  private static String placementState(String job, String node) {
    return dsl()
        .fetchValue("SELECT state FROM placements WHERE job_id = ? AND node_id = ?", job, node)
        .toString();
  }

  @Test
  void allowedChangesAreWritten() {
    createJob("ok");
    assertTrue(ScheduleJob.run(dsl(), "ok"));
    assertEquals("seeding", jobStatus("ok"));
    assertEquals("acquiring", placementState("ok", SEED));
  }

  @Test
  void aStagedPlacementIsNeverWrittenBackToAcquiring() {
    createJob("staged");
    assertTrue(ScheduleJob.run(dsl(), "staged"));
    // The seed's download is still pending, so the evaluator says acquiring: STAGED -> ACQUIRING.
    dsl()
        .execute(
            "UPDATE placements SET state = 'staged' WHERE job_id = ? AND node_id = ?",
            "staged",
            SEED);

    var refused =
        assertThrows(
            JobTransitions.IllegalTransition.class, () -> ScheduleJob.run(dsl(), "staged"));
    assertTrue(refused.getMessage().contains("STAGED -> ACQUIRING"), refused.getMessage());
    assertEquals("staged", placementState("staged", SEED));
  }

  @Test
  void aReplicatingJobIsNeverWrittenBackToSeeding() {
    createJob("back");
    assertTrue(ScheduleJob.run(dsl(), "back"));
    // The seed is still downloading, so the evaluator says seeding: REPLICATING -> SEEDING.
    dsl().execute("UPDATE jobs SET status = 'replicating' WHERE job_id = ?", "back");

    var refused =
        assertThrows(JobTransitions.IllegalTransition.class, () -> ScheduleJob.run(dsl(), "back"));
    assertTrue(refused.getMessage().contains("REPLICATING -> SEEDING"), refused.getMessage());
    assertEquals("replicating", jobStatus("back"));
  }
}
