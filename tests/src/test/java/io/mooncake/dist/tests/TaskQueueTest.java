package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.PLACEMENTS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPTS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPT_LOG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CompletionBatcher;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.DefaultExecuteListenerProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The queue's guarantees against a real Postgres: claims, leases, rescue, batched and lost-lease
 * writes, retries, node grace, one driver per job (also when a master dies holding it).
 */
class TaskQueueTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** Creates a job and lets the scheduler enqueue its MODEL_DOWNLOAD on the seed. */
  private static void jobWithDownload(String jobId, String seed) {
    ModelRef model = new ModelRef("q-" + jobId, "r1", "bin", "local");
    ManifestFile f =
        new ManifestFile(
            "m.bin",
            8,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            List.of("q/" + jobId + "/0"),
            new ChunkLayout(8, 1, "q/"));
    JobRequest req =
        new JobRequest(
            jobId, model, new Manifest(model, 8, "v1", List.of(f)), seed, List.of(seed), null);
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
    assertTrue(
        q.claim("10.0.0.1:1", "10.0.0.1:1/w2", 10, Duration.ofSeconds(30)).isEmpty(),
        "claimed twice");
  }

  @Test
  void anExpiredLeaseIsRescuedAndTheOldOwnerCanNoLongerWrite() {
    jobWithDownload("lease-1", "10.0.0.3:1");
    TaskQueue q = new TaskQueue(dsl());
    ClaimedTask t = q.claim("10.0.0.3:1", "old-owner", 1, Duration.ofMillis(1)).get(0);
    dsl()
        .update(TASKS)
        .set(TASKS.LEASE_EXPIRES_AT, DSL.currentOffsetDateTime().minus(10))
        .where(TASKS.TASK_ID.eq(t.taskId()))
        .execute();
    assertEquals(1, q.rescueExpiredLeases());
    assertEquals(
        "pending",
        dsl()
            .select(TASKS.STATE)
            .from(TASKS)
            .where(TASKS.TASK_ID.eq(t.taskId()))
            .fetchOne()
            .value1());

    ClaimedTask again = q.claim("10.0.0.3:1", "new-owner", 1, Duration.ofSeconds(30)).get(0);
    assertEquals(2, again.attempt());
    assertFalse(
        q.succeed(t.taskId(), "old-owner", 8, null, List.of()),
        "a lost lease must not complete the task");
    assertNull(q.fail(t.taskId(), "old-owner", "late failure", false));
    assertTrue(q.succeed(t.taskId(), "new-owner", 8, null, List.of()));
    List<String> outcomes =
        dsl()
            .select(TASK_ATTEMPT_LOG.OUTCOME)
            .from(TASK_ATTEMPT_LOG)
            .where(TASK_ATTEMPT_LOG.TASK_ID.eq(t.taskId()))
            .orderBy(TASK_ATTEMPT_LOG.ATTEMPT)
            .fetch(TASK_ATTEMPT_LOG.OUTCOME);
    assertEquals(List.of("lease_expired", "succeeded"), outcomes);
  }

  @Test
  void aRetryableFailureIsRetriedWithBackoffUntilTheCapThenFails() {
    jobWithDownload("retry-1", "10.0.0.4:1");
    TaskQueue q = new TaskQueue(dsl());
    long id = -1;
    for (int attempt = 1; attempt <= 3; attempt++) {
      // Backoff delays the next attempt; make it due now so the test needs no waiting.
      dsl()
          .update(TASKS)
          .set(TASKS.RUN_AFTER, DSL.currentOffsetDateTime())
          .where(TASKS.JOB_ID.eq("retry-1"))
          .execute();
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
    assertEquals(
        "failed",
        dsl().select(JOBS.STATUS).from(JOBS).where(JOBS.JOB_ID.eq("retry-1")).fetchOne().value1());
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
    CompletableFuture<Void> holder =
        CompletableFuture.runAsync(
            () ->
                dsl()
                    .transaction(
                        cfg -> {
                          cfg.dsl()
                              .selectFrom(JOBS)
                              .where(JOBS.JOB_ID.eq("two-masters"))
                              .forUpdate()
                              .fetch();
                          locked.countDown();
                          release.await(30, TimeUnit.SECONDS);
                        }));
    assertTrue(locked.await(30, TimeUnit.SECONDS));
    assertFalse(
        ScheduleJob.run(dsl(), "two-masters"),
        "the second master must skip a job another one holds");
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

  @Test
  void aBatchOfSuccessesIsRecordedInOneGoAndALostLeaseInItIsRefused() {
    jobWithDownload("batch-a", "10.0.0.8:1");
    jobWithDownload("batch-b", "10.0.0.8:1");
    jobWithDownload("batch-c", "10.0.0.8:1");
    TaskQueue q = new TaskQueue(dsl());
    List<ClaimedTask> held = q.claim("10.0.0.8:1", "w-new", 3, Duration.ofSeconds(30));
    assertEquals(3, held.size());
    // The third task's lease went to another owner (it was rescued and claimed again).
    long stolen = held.get(2).taskId();
    dsl().update(TASKS).set(TASKS.LEASE_OWNER, "w-other").where(TASKS.TASK_ID.eq(stolen)).execute();

    Set<Long> recorded =
        q.succeedAll(
            held.stream()
                .map(t -> new TaskQueue.Completion(t.taskId(), "w-new", 8, "{\"n\": 1}", List.of()))
                .toList());
    assertEquals(Set.of(held.get(0).taskId(), held.get(1).taskId()), recorded);
    assertEquals(
        "processing",
        dsl().select(TASKS.STATE).from(TASKS).where(TASKS.TASK_ID.eq(stolen)).fetchOne().value1());
    assertEquals(
        2,
        dsl()
            .fetchCount(
                TASK_ATTEMPT_LOG,
                TASK_ATTEMPT_LOG
                    .TASK_ID
                    .in(recorded)
                    .and(TASK_ATTEMPT_LOG.OUTCOME.eq("succeeded"))));
    assertEquals(0, dsl().fetchCount(TASK_ATTEMPT_LOG, TASK_ATTEMPT_LOG.TASK_ID.eq(stolen)));
    assertEquals(
        0,
        dsl().fetchCount(TASK_ATTEMPTS, TASK_ATTEMPTS.TASK_ID.in(recorded)),
        "a success writes the task row only");
    assertTrue(
        q.succeedAll(
                List.of(
                    new TaskQueue.Completion(held.get(0).taskId(), "w-new", 8, null, List.of())))
            .isEmpty(),
        "a task cannot succeed twice");
  }

  @Test
  void tasksFinishingTogetherAreGroupCommittedAndEachCallerLearnsItsOwnOutcome() throws Exception {
    for (int i = 0; i < 16; i++) {
      jobWithDownload("group-" + i, "10.0.0.9:1");
    }
    TaskQueue q = new TaskQueue(dsl());
    List<ClaimedTask> held = q.claim("10.0.0.9:1", "w", 16, Duration.ofSeconds(30));
    assertEquals(16, held.size());
    CompletionBatcher batcher = new CompletionBatcher(q, 4);
    List<CompletableFuture<Boolean>> outcomes =
        held.stream()
            .map(
                t ->
                    CompletableFuture.supplyAsync(
                        () ->
                            batcher.succeed(
                                new TaskQueue.Completion(
                                    t.taskId(),
                                    t.taskId() % 5 == 0 ? "not-the-owner" : "w",
                                    8,
                                    null,
                                    List.of()))))
            .toList();
    for (int i = 0; i < held.size(); i++) {
      assertEquals(
          held.get(i).taskId() % 5 != 0,
          outcomes.get(i).get(30, TimeUnit.SECONDS),
          "task " + held.get(i).taskId());
    }
    long notOwned = held.stream().filter(t -> t.taskId() % 5 == 0).count();
    assertEquals(
        16 - notOwned,
        dsl().fetchCount(TASKS, TASKS.JOB_ID.like("group-%").and(TASKS.STATE.eq("succeeded"))));
  }

  @Test
  void theOpenTasksOfANodeGoneLongerThanTheGraceFailAndThePlacementWithThem() {
    String gone = "10.0.0.10:1";
    String alive = "10.0.0.11:1";
    NodeRegistry nodes = new NodeRegistry(dsl());
    nodes.register(gone, "10.0.0.10", 1, "/data", "i1");
    nodes.register(alive, "10.0.0.11", 1, "/data", "i2");
    jobWithDownload("grace-gone", gone);
    jobWithDownload("grace-alive", alive);
    TaskQueue q = new TaskQueue(dsl());
    ClaimedTask running = q.claim(gone, gone + "/i1", 1, Duration.ofSeconds(30)).get(0);
    dsl()
        .execute(
            "UPDATE nodes SET heartbeat_at = now() - interval '15 minutes' WHERE node_id = ?",
            gone);

    assertEquals(1, q.failTasksOfGoneNodes(Duration.ofSeconds(60)));
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(running.taskId())).fetchOne();
    assertEquals("failed", row.getState());
    assertEquals("node " + gone + " gone for more than 60 s", row.getLastError());
    assertFalse(
        q.succeed(running.taskId(), gone + "/i1", 8, null, List.of()),
        "the gone node's late success is refused");
    assertEquals(
        List.of("failed"),
        dsl()
            .select(TASK_ATTEMPTS.OUTCOME)
            .from(TASK_ATTEMPTS)
            .where(TASK_ATTEMPTS.TASK_ID.eq(running.taskId()))
            .fetch(TASK_ATTEMPTS.OUTCOME));

    assertTrue(ScheduleJob.run(dsl(), "grace-gone"));
    assertEquals(
        "failed",
        dsl()
            .select(JOBS.STATUS)
            .from(JOBS)
            .where(JOBS.JOB_ID.eq("grace-gone"))
            .fetchOne()
            .value1());
    assertEquals(
        "node " + gone + " gone for more than 60 s",
        dsl()
            .select(PLACEMENTS.LAST_ERROR)
            .from(PLACEMENTS)
            .where(PLACEMENTS.JOB_ID.eq("grace-gone"))
            .fetchOne()
            .value1());
    assertEquals(
        "pending",
        dsl()
            .select(TASKS.STATE)
            .from(TASKS)
            .where(TASKS.JOB_ID.eq("grace-alive"))
            .fetchOne()
            .value1(),
        "a node that heartbeats keeps its work");
  }

  @Test
  void aMasterKilledWhileItHoldsAJobReleasesItAndAnotherMasterDrivesIt() throws Exception {
    jobWithDownload("killed-master", "10.0.0.12:1");
    dsl().update(JOBS).set(JOBS.STATUS, "planned").where(JOBS.JOB_ID.eq("killed-master")).execute();
    dsl().deleteFrom(TASKS).where(TASKS.JOB_ID.eq("killed-master")).execute();
    CountDownLatch locked = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    // Master A evaluates on its own connection and stalls right after locking the job's row.
    Connection a = DriverManager.getConnection(pg.url());
    int pidA =
        DSL.using(a, SQLDialect.POSTGRES)
            .resultQuery("SELECT pg_backend_pid()")
            .fetchOne(0, Integer.class);
    ExecuteListener stallAfterLock =
        new ExecuteListener() {
          @Override
          public void executeEnd(ExecuteContext ctx) {
            if (ctx.sql() != null
                && ctx.sql().contains("skip locked")
                && ctx.sql().contains("jobs")) {
              locked.countDown();
              try {
                never.await(60, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        };
    DSLContext masterA =
        DSL.using(
            new DefaultConfiguration()
                .set(a)
                .set(SQLDialect.POSTGRES)
                .set(new DefaultExecuteListenerProvider(stallAfterLock)));
    CompletableFuture<Boolean> runA =
        CompletableFuture.supplyAsync(() -> ScheduleJob.run(masterA, "killed-master"));
    assertTrue(locked.await(30, TimeUnit.SECONDS));
    assertFalse(ScheduleJob.run(dsl(), "killed-master"), "while A holds the job, B skips it");

    // A dies as under SIGKILL: its backend goes away with the transaction and the row lock.
    assertTrue(
        dsl().resultQuery("SELECT pg_terminate_backend(?)", pidA).fetchOne(0, Boolean.class));
    never.countDown();
    ExecutionException died =
        assertThrows(ExecutionException.class, () -> runA.get(30, TimeUnit.SECONDS));
    assertTrue(died.getCause() instanceof RuntimeException, died.toString());
    a.close();

    assertTrue(ScheduleJob.run(dsl(), "killed-master"), "B drives the job once A is gone");
    assertEquals(
        1,
        dsl().fetchCount(TASKS, TASKS.JOB_ID.eq("killed-master")),
        "A's half-done pass left nothing behind");
    assertEquals(
        "seeding",
        dsl()
            .select(JOBS.STATUS)
            .from(JOBS)
            .where(JOBS.JOB_ID.eq("killed-master"))
            .fetchOne()
            .value1());
  }

  @Test
  void aLeaseThatLapsesOnTheLastAttemptFailsTheTaskAndEveryLapseIsRecordedWithItsOwner() {
    jobWithDownload("lapse-cap", "10.0.0.13:1");
    TaskQueue q = new TaskQueue(dsl());
    for (int attempt = 1; attempt <= 3; attempt++) {
      ClaimedTask t = q.claim("10.0.0.13:1", "owner-" + attempt, 1, Duration.ofSeconds(30)).get(0);
      assertEquals(attempt, t.attempt());
      dsl()
          .execute(
              "UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE task_id = ?",
              t.taskId());
      assertEquals(1, q.rescueExpiredLeases());
    }
    var row = dsl().selectFrom(TASKS).where(TASKS.JOB_ID.eq("lapse-cap")).fetchOne();
    assertEquals("failed", row.getState(), "download tasks allow 3 attempts");
    assertEquals(
        "lease expired: node 10.0.0.13:1 stopped renewing it during attempt 3", row.getLastError());
    assertEquals(
        List.of("owner-1", "owner-2", "owner-3"),
        dsl()
            .select(TASK_ATTEMPTS.LEASE_OWNER)
            .from(TASK_ATTEMPTS)
            .where(TASK_ATTEMPTS.TASK_ID.eq(row.getTaskId()))
            .and(TASK_ATTEMPTS.OUTCOME.eq("lease_expired"))
            .orderBy(TASK_ATTEMPTS.ATTEMPT)
            .fetch(TASK_ATTEMPTS.LEASE_OWNER));
    assertTrue(q.claim("10.0.0.13:1", "owner-4", 1, Duration.ofSeconds(30)).isEmpty());
  }

  /**
   * Lapsed leases are rescued a bounded batch per statement, each committed before the next, until
   * none is left: one statement holding thousands of rows for a minute stalled the nodes' writes to
   * them at 1,000 simulated nodes (issue 19).
   */
  @Test
  void lapsedLeasesAreRescuedInBoundedStatementsUntilNoneIsLeft() {
    int n = 2 * TaskQueue.RESCUE_BATCH + 3;
    for (int i = 0; i < n; i++) {
      jobWithDownload("rescue-bulk-" + i, "10.0.0.14:1");
    }
    List<String> statements = new CopyOnWriteArrayList<>();
    ExecuteListener counting =
        new ExecuteListener() {
          @Override
          public void executeEnd(ExecuteContext ctx) {
            statements.add(ctx.sql());
          }
        };
    DSLContext counted =
        DSL.using(
            new DefaultConfiguration()
                .set(pg.database().dataSource())
                .set(SQLDialect.POSTGRES)
                .set(new DefaultExecuteListenerProvider(counting)));
    TaskQueue q = new TaskQueue(counted);
    assertEquals(n, q.claim("10.0.0.14:1", "bulk-owner", n, Duration.ofSeconds(30)).size());
    dsl()
        .execute(
            "UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE lease_owner = ?",
            "bulk-owner");
    statements.clear();

    assertEquals(n, q.rescueExpiredLeases());
    assertEquals(3, statements.size(), "two full batches and the rest");
    assertEquals(
        n,
        dsl()
            .fetchCount(
                TASKS, TASKS.JOB_ID.startsWith("rescue-bulk-").and(TASKS.STATE.eq("pending"))));
    assertEquals(0, q.rescueExpiredLeases());
  }

  /**
   * A master's batch of node heartbeats skips rows other transactions hold instead of waiting for
   * them (issue 19: one node's open outcome transaction on its task row, waited for, kept every
   * node of the batch from looking alive): the node whose row is held is reported busy, not
   * replaced; the lease of a held task row is left as it is; a replaced instance is in neither
   * answer.
   */
  @Test
  void aBatchOfHeartbeatsSkipsRowsOthersHoldInsteadOfWaitingForThem() throws Exception {
    String a = "10.0.0.20:1";
    String b = "10.0.0.21:1";
    String c = "10.0.0.22:1";
    jobWithDownload("hb-1", a);
    NodeRegistry nodes = new NodeRegistry(dsl());
    for (String n : List.of(a, b, c)) {
      nodes.register(n, n.split(":")[0], 1, "/data", "i-" + n);
    }
    ClaimedTask t = new TaskQueue(dsl()).claim(a, "owner-a", 1, Duration.ofSeconds(30)).get(0);
    java.time.OffsetDateTime leaseBefore = lease(t.taskId());
    List<NodeRegistry.Beat> beats =
        List.of(
            new NodeRegistry.Beat(a, "i-" + a, "owner-a", List.of(t.taskId()), Duration.ofHours(1)),
            new NodeRegistry.Beat(b, "i-" + b, "owner-b", List.of(), Duration.ofHours(1)),
            new NodeRegistry.Beat(
                c, "an-older-instance", "owner-c", List.of(), Duration.ofHours(1)));

    try (Connection other = DriverManager.getConnection(pg.url())) {
      other.setAutoCommit(false);
      try (var st = other.createStatement()) {
        st.execute("SELECT 1 FROM tasks WHERE task_id = " + t.taskId() + " FOR UPDATE");
        st.execute("SELECT 1 FROM nodes WHERE node_id = '" + b + "' FOR UPDATE");
      }
      // The guard only turns a regression (waiting for the locks) into a failure, not a hang.
      NodeRegistry.Beaten held =
          CompletableFuture.supplyAsync(() -> nodes.heartbeatAll(beats)).get(60, TimeUnit.SECONDS);
      assertEquals(Set.of(a), held.recorded());
      assertEquals(Set.of(b), held.busy(), "held, not replaced: it must not stop");
      assertEquals(leaseBefore, lease(t.taskId()), "a held task row is not waited for");
      other.rollback();
    }

    NodeRegistry.Beaten free = nodes.heartbeatAll(beats);
    assertEquals(Set.of(a, b), free.recorded());
    assertTrue(free.busy().isEmpty());
    assertTrue(lease(t.taskId()).isAfter(leaseBefore.plusMinutes(30)), "renewed for the hour");
  }

  /**
   * Progress rides on the lease renewal (issue 19), through a master's batch and through a node's
   * own heartbeat: a moved count is written with {@code updated_at}; -1 (unchanged) leaves both
   * alone, so a stalled transfer's row still ages; a task whose lease another owner holds is not
   * written; a count list that does not match the tasks is refused.
   */
  @Test
  void heartbeatsCarryTheProgressOfRunningTasksAndLeaveStalledOnesAging() throws Exception {
    String a = "10.0.0.30:1";
    String b = "10.0.0.31:1";
    jobWithDownload("hb-progress-a", a);
    jobWithDownload("hb-progress-b", b);
    NodeRegistry nodes = new NodeRegistry(dsl());
    nodes.register(a, "10.0.0.30", 1, "/data", "i-a");
    nodes.register(b, "10.0.0.31", 1, "/data", "i-b");
    TaskQueue q = new TaskQueue(dsl());
    long ta = q.claim(a, "owner-a", 1, Duration.ofSeconds(30)).get(0).taskId();
    long tb = q.claim(b, "owner-b", 1, Duration.ofSeconds(30)).get(0).taskId();
    dsl()
        .execute(
            "UPDATE tasks SET updated_at = now() - interval '1 minute' WHERE task_id IN (?, ?)",
            ta,
            tb);
    java.time.OffsetDateTime aged = updatedAt(ta);

    NodeRegistry.Beaten beaten =
        nodes.heartbeatAll(
            List.of(
                new NodeRegistry.Beat(
                    a, "i-a", "owner-a", List.of(ta), Duration.ofHours(1), null, List.of(4096L)),
                new NodeRegistry.Beat(
                    b, "i-b", "owner-b", List.of(tb), Duration.ofHours(1), null, List.of(-1L))));
    assertEquals(Set.of(a, b), beaten.recorded());
    assertEquals(4096L, bytesDone(ta));
    assertTrue(updatedAt(ta).isAfter(aged.plusSeconds(30)), "a moved count refreshes the row");
    assertEquals(0L, bytesDone(tb));
    assertEquals(aged, updatedAt(tb), "an unchanged count leaves the row aging");
    assertTrue(lease(tb).isAfter(java.time.OffsetDateTime.now().plusMinutes(30)), "renewed");

    // A node's own heartbeat, and a count under a lease owner that no longer holds the task.
    assertTrue(
        nodes.heartbeat(
            a, "i-a", "owner-a", List.of(ta), List.of(8192L), Duration.ofHours(1), null));
    assertEquals(8192L, bytesDone(ta));
    assertTrue(
        nodes.heartbeat(
            b, "i-b", "not-owner", List.of(tb), List.of(99L), Duration.ofHours(1), null));
    assertEquals(0L, bytesDone(tb), "only the lease owner's counts are written");
    assertEquals(
        8192L,
        dsl()
            .resultQuery(
                "SELECT staged_bytes FROM placement_bytes WHERE job_id = 'hb-progress-a' AND node_id = ?",
                a)
            .fetchOne(0, Long.class),
        "the snapshot's byte counter follows");
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new NodeRegistry.Beat(
                a, "i-a", "owner-a", List.of(ta), Duration.ofHours(1), null, List.of()));
  }

  private static long bytesDone(long taskId) {
    return dsl()
        .select(TASKS.BYTES_DONE)
        .from(TASKS)
        .where(TASKS.TASK_ID.eq(taskId))
        .fetchOne()
        .value1();
  }

  private static java.time.OffsetDateTime updatedAt(long taskId) {
    return dsl()
        .select(TASKS.UPDATED_AT)
        .from(TASKS)
        .where(TASKS.TASK_ID.eq(taskId))
        .fetchOne()
        .value1();
  }

  private static java.time.OffsetDateTime lease(long taskId) {
    return dsl()
        .select(TASKS.LEASE_EXPIRES_AT)
        .from(TASKS)
        .where(TASKS.TASK_ID.eq(taskId))
        .fetchOne()
        .value1();
  }
}
