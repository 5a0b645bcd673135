package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPT_LOG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The database side of the seed's relay rule (the worker's CopySources): whether another follower
 * is pulling an object from the seed right now, and a copy that waits for it going back to the
 * queue without using up an attempt.
 */
class SeedRelayTest {
  private static final String SEED = "10.0.2.1:1";
  private static final String PULLER = "10.0.2.2:1";
  private static final String WAITER = "10.0.2.3:1";
  /** Each test its own reading node, so one test's claims never take another's copies. */
  private static final String DEFERRER = "10.0.2.5:1";

  @RegisterExtension
  static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static void jobWithCopies(String job, String... followers) {
    dsl().execute("""
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES (?, 'x', '{}', 'm', 'r', 'bin', 'local', ?, 8, 'object_digests', 'replicating')""", job, SEED);
    dsl().execute("INSERT INTO placements (job_id, node_id, ordinal, is_seed, state) VALUES (?, ?, 0, true, 'acquiring')",
        job, SEED);
    int ordinal = 1;
    for (String f : followers) {
      dsl().execute("INSERT INTO placements (job_id, node_id, ordinal, is_seed, state) VALUES (?, ?, ?, false, 'acquiring')",
          job, f, ordinal++);
      dsl().execute("""
          INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total)
          VALUES (?, ?, 'REPLICA_COPY', ?, '{"model":null,"files":[]}', 8)""", job, f, job + "/o1");
    }
  }

  private static ReplicaCatalog.CopySources sources(ReplicaCatalog replicas, String object, String reader) {
    String job = object.substring(0, object.indexOf('/'));
    return replicas.sources(job, object, "sha256:aa", reader, Duration.ofSeconds(10), Duration.ofSeconds(5));
  }

  private static boolean busy(ReplicaCatalog replicas, String object, String reader) {
    return sources(replicas, object, reader).seedPullInFlight();
  }

  private static ClaimedTask claim(String node) {
    List<ClaimedTask> claimed = new TaskQueue(dsl()).claim(node, node + "/w", 1, Duration.ofSeconds(30));
    assertEquals(1, claimed.size(), "nothing claimable for " + node);
    return claimed.get(0);
  }

  @Test
  void aPullFromTheSeedCountsWhileItIsRunningAndFreshAndNotForThePullerItself() {
    jobWithCopies("relay-1", PULLER, WAITER);
    ReplicaCatalog replicas = new ReplicaCatalog(dsl());
    String object = "relay-1/o1";
    assertEquals(SEED, sources(replicas, object, WAITER).seedNodeId());
    assertFalse(busy(replicas, object, WAITER), "nothing claimed yet");

    ClaimedTask pull = claim(PULLER);
    assertFalse(busy(replicas, object, WAITER), "claimed, but no source chosen yet");
    assertTrue(new TaskQueue(dsl()).progress(pull.taskId(), PULLER + "/w", 0, SEED));
    assertTrue(busy(replicas, object, WAITER));
    assertFalse(busy(replicas, object, PULLER), "a node does not wait for itself");
    dsl().execute("UPDATE tasks SET source_node_id = '10.0.2.9:1' WHERE task_id = ?", pull.taskId());
    assertFalse(busy(replicas, object, WAITER), "a pull from another holder leaves the seed free");
    dsl().execute("UPDATE tasks SET source_node_id = ? WHERE task_id = ?", SEED, pull.taskId());
    assertTrue(busy(replicas, object, WAITER));

    // A pull whose row has not moved for longer than the freshness window holds nobody back.
    dsl().execute("UPDATE tasks SET updated_at = now() - interval '10 seconds' WHERE task_id = ?", pull.taskId());
    assertFalse(busy(replicas, object, WAITER));
    // Nor does one that finished.
    dsl().execute("UPDATE tasks SET updated_at = now(), state = 'succeeded' WHERE task_id = ?", pull.taskId());
    assertFalse(busy(replicas, object, WAITER));
  }

  @Test
  void aCopyHandedBackAfterItsPlacementFailedIsCanceledNotLeftPending() {
    String late = "10.0.2.4:1";
    jobWithCopies("relay-3", late);
    TaskQueue queue = new TaskQueue(dsl());
    ClaimedTask copy = claim(late);
    assertEquals("relay-3", copy.jobId());
    // Meanwhile the seed failed: the scheduler failed the job and the placements and canceled what
    // was pending, but this copy was running.
    dsl().execute("UPDATE jobs SET status = 'failed', finished_at = now() WHERE job_id = 'relay-3'");
    dsl().execute("UPDATE placements SET state = 'failed' WHERE job_id = 'relay-3'");
    assertTrue(queue.defer(copy.taskId(), late + "/w", Duration.ofMillis(100)));
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(copy.taskId())).fetchOne();
    assertEquals("canceled", row.getState(), "nobody would ever claim or cancel a pending task of a failed job");
    assertTrue(row.getFinishedAt() != null);
  }

  @Test
  void aRetryableFailureAfterItsPlacementFailedFailsForGoodInsteadOfWaitingForARetry() {
    String late = "10.0.2.6:1";
    jobWithCopies("relay-4", late);
    ClaimedTask copy = claim(late);
    assertEquals("relay-4", copy.jobId());
    dsl().execute("UPDATE placements SET state = 'failed' WHERE job_id = 'relay-4' AND node_id = ?", late);
    assertEquals("failed", new TaskQueue(dsl()).fail(copy.taskId(), late + "/w", "no live node holds object relay-4/o1", true));
  }

  @Test
  void aDeferredCopyIsPendingAgainLaterWithoutUsingAnAttemptAndOnlyItsLeaseHolderCanDeferIt() {
    jobWithCopies("relay-2", DEFERRER);
    TaskQueue queue = new TaskQueue(dsl());
    ClaimedTask first = claim(DEFERRER);
    assertEquals(1, first.attempt());
    assertTrue(queue.progress(first.taskId(), DEFERRER + "/w", 0, SEED));

    assertFalse(queue.defer(first.taskId(), "someone-else", Duration.ofMillis(100)), "a lost lease cannot defer");
    assertTrue(queue.defer(first.taskId(), DEFERRER + "/w", Duration.ofMillis(300)));
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(first.taskId())).fetchOne();
    assertEquals("pending", row.getState());
    assertEquals(0, row.getAttempts(), "a wait is not an attempt");
    assertEquals(null, row.getLeaseOwner());
    assertEquals(null, row.getSourceNodeId(), "no longer counted as load on the seed");
    assertTrue(queue.claim(DEFERRER, DEFERRER + "/w", 1, Duration.ofSeconds(30)).isEmpty(), "claimable only once due");
    assertFalse(queue.defer(first.taskId(), DEFERRER + "/w", Duration.ofMillis(100)), "not held any more");

    dsl().execute("UPDATE tasks SET run_after = now() WHERE task_id = ?", first.taskId());
    ClaimedTask again = claim(DEFERRER);
    assertEquals(first.taskId(), again.taskId());
    assertEquals(1, again.attempt(), "the first real attempt is still attempt 1");
    assertEquals(0, dsl().fetchCount(TASK_ATTEMPT_LOG, TASK_ATTEMPT_LOG.TASK_ID.eq(first.taskId())), "no attempt recorded");
  }
}
