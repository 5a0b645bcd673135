package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The queue's guarantees against a real Postgres: claims, leases, rescue, retries, one driver per job. */
class TaskQueueTest {
  @RegisterExtension
  static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** Creates a job and lets the scheduler enqueue its MODEL_DOWNLOAD on the seed. */
  private static void jobWithDownload(String jobId, String seed) {
    ModelRef model = new ModelRef("q-" + jobId, "r1", "bin", "local");
    ManifestFile f = new ManifestFile("m.bin", 8, "dummy", "/nonexistent/m.bin", "k", List.of("q/" + jobId + "/0"),
        new ChunkLayout(8, 1, "q/"));
    JobRequest req = new JobRequest(jobId, model, new Manifest(model, 8, "v1", List.of(f)), seed, List.of(seed), null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha-" + jobId, "{}"));
    assertTrue(ScheduleJob.run(dsl(), jobId));
  }

  @Test
  void aWorkerClaimsOnlyItsOwnNodesTasksAndEachTaskOnce() {
    jobWithDownload("claim-a", "10.0.0.1:1");
    jobWithDownload("claim-b", "10.0.0.2:1");
    TaskQueue q = new TaskQueue(dsl());
    List<ClaimedTask> mine = q.claim("10.0.0.1:1", "10.0.0.1:1/w1", 10, Duration.ofSeconds(30));
    assertEquals(1, mine.size());
    assertEquals("claim-a", mine.get(0).jobId());
    assertEquals(1, mine.get(0).attempt());
    assertTrue(q.claim("10.0.0.1:1", "10.0.0.1:1/w2", 10, Duration.ofSeconds(30)).isEmpty(), "claimed twice");
  }

  @Test
  void anExpiredLeaseIsRescuedAndTheOldOwnerCanNoLongerWrite() {
    jobWithDownload("lease-1", "10.0.0.3:1");
    TaskQueue q = new TaskQueue(dsl());
    ClaimedTask t = q.claim("10.0.0.3:1", "old-owner", 1, Duration.ofMillis(1)).get(0);
    dsl().update(TASKS).set(TASKS.LEASE_EXPIRES_AT, DSL.currentOffsetDateTime().minus(10))
        .where(TASKS.TASK_ID.eq(t.taskId())).execute();
    assertEquals(1, q.rescueExpiredLeases());
    assertEquals("pending", dsl().select(TASKS.STATE).from(TASKS).where(TASKS.TASK_ID.eq(t.taskId())).fetchOne().value1());

    ClaimedTask again = q.claim("10.0.0.3:1", "new-owner", 1, Duration.ofSeconds(30)).get(0);
    assertEquals(2, again.attempt());
    assertFalse(q.succeed(t.taskId(), "old-owner", 8, null, List.of()), "a lost lease must not complete the task");
    assertNull(q.fail(t.taskId(), "old-owner", "late failure", false));
    assertTrue(q.succeed(t.taskId(), "new-owner", 8, null, List.of()));
    List<String> outcomes = dsl().select(TASK_ATTEMPTS.OUTCOME).from(TASK_ATTEMPTS)
        .where(TASK_ATTEMPTS.TASK_ID.eq(t.taskId())).orderBy(TASK_ATTEMPTS.ATTEMPT).fetch(TASK_ATTEMPTS.OUTCOME);
    assertEquals(List.of("lease_expired", "succeeded"), outcomes);
  }

  @Test
  void aRetryableFailureIsRetriedWithBackoffUntilTheCapThenFails() {
    jobWithDownload("retry-1", "10.0.0.4:1");
    TaskQueue q = new TaskQueue(dsl());
    long id = -1;
    for (int attempt = 1; attempt <= 3; attempt++) {
      // Backoff delays the next attempt; make it due now so the test needs no waiting.
      dsl().update(TASKS).set(TASKS.RUN_AFTER, DSL.currentOffsetDateTime()).where(TASKS.JOB_ID.eq("retry-1")).execute();
      ClaimedTask t = q.claim("10.0.0.4:1", "w", 1, Duration.ofSeconds(30)).get(0);
      id = t.taskId();
      assertEquals(attempt, t.attempt());
      String state = q.fail(t.taskId(), "w", "connection reset (attempt " + attempt + ")", true);
      assertEquals(attempt < 3 ? "pending" : "failed", state, "download tasks allow 3 attempts");
    }
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(id)).fetchOne();
    assertEquals("connection reset (attempt 3)", row.getLastError());
    assertEquals(3, dsl().fetchCount(TASK_ATTEMPTS, TASK_ATTEMPTS.TASK_ID.eq(id)));
    assertTrue(ScheduleJob.run(dsl(), "retry-1"));
    assertEquals("failed", dsl().select(JOBS.STATUS).from(JOBS).where(JOBS.JOB_ID.eq("retry-1")).fetchOne().value1());
  }

  @Test
  void aPendingRetryIsNotClaimedBeforeItsBackoffEnds() {
    jobWithDownload("backoff-1", "10.0.0.5:1");
    TaskQueue q = new TaskQueue(dsl());
    ClaimedTask t = q.claim("10.0.0.5:1", "w", 1, Duration.ofSeconds(30)).get(0);
    assertEquals("pending", q.fail(t.taskId(), "w", "transient", true));
    assertTrue(q.claim("10.0.0.5:1", "w", 1, Duration.ofSeconds(30)).isEmpty());
  }

  @Test
  void whileOneMasterEvaluatesAJobAnotherSkipsIt() throws Exception {
    jobWithDownload("two-masters", "10.0.0.6:1");
    CountDownLatch locked = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> dsl().transaction(cfg -> {
      cfg.dsl().selectFrom(JOBS).where(JOBS.JOB_ID.eq("two-masters")).forUpdate().fetch();
      locked.countDown();
      release.await(30, TimeUnit.SECONDS);
    }));
    assertTrue(locked.await(30, TimeUnit.SECONDS));
    assertFalse(ScheduleJob.run(dsl(), "two-masters"), "the second master must skip a job another one holds");
    release.countDown();
    holder.get(30, TimeUnit.SECONDS);
    assertTrue(ScheduleJob.run(dsl(), "two-masters"));
  }

  @Test
  void enqueueingTwiceCreatesEachTaskOnce() {
    jobWithDownload("idem-enqueue", "10.0.0.7:1");
    dsl().update(JOBS).set(JOBS.STATUS, "planned").where(JOBS.JOB_ID.eq("idem-enqueue")).execute();
    ScheduleJob.run(dsl(), "idem-enqueue");
    assertEquals(1, dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("idem-enqueue")));
  }
}
