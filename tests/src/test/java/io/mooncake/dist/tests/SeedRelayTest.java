package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static io.mooncake.dist.db.jooq.Tables.TASK_ATTEMPT_LOG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.JobShape;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The database side of the seed's relay rule (the worker's SourcePlanner): whether another follower
 * is pulling an object from the seed right now, and a copy that waits for it going back to the
 * queue without using up an attempt.
 */
class SeedRelayTest {
  private static final String SEED = "10.0.2.1:1";
  private static final String PULLER = "10.0.2.2:1";
  private static final String WAITER = "10.0.2.3:1";

  /** Each test its own reading node, so one test's claims never take another's copies. */
  private static final String DEFERRER = "10.0.2.5:1";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static void jobWithCopies(String job, String... followers) {
    dsl()
        .execute(
            """
        INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                          total_size_bytes, integrity, status)
        VALUES (?, 'x', '{}', 'm', 'r', 'bin', 'local', ?, 8, 'object_digests', 'replicating')""",
            job,
            SEED);
    dsl()
        .execute(
            "INSERT INTO placements (job_id, node_id, ordinal, is_seed, state) VALUES (?, ?, 0, true, 'acquiring')",
            job,
            SEED);
    int ordinal = 1;
    for (String f : followers) {
      dsl()
          .execute(
              "INSERT INTO placements (job_id, node_id, ordinal, is_seed, state) VALUES (?, ?, ?, false, 'acquiring')",
              job,
              f,
              ordinal++);
      dsl()
          .execute(
              """
          INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, bytes_total)
          VALUES (?, ?, 'REPLICA_COPY', ?, '{"model":null,"files":[]}', 8)""",
              job,
              f,
              job + "/o1");
    }
  }

  private static ReplicaCatalog.CopySources sources(
      ReplicaCatalog replicas, String object, String reader) {
    String job = object.substring(0, object.indexOf('/'));
    return replicas.sources(
        job, object, "sha256:aa", reader, Duration.ofSeconds(10), Duration.ofSeconds(5));
  }

  private static boolean busy(ReplicaCatalog replicas, String object, String reader) {
    return sources(replicas, object, reader).seedPullInFlight();
  }

  private static ClaimedTask claim(String node) {
    List<ClaimedTask> claimed =
        new TaskQueue(dsl()).claim(node, node + "/w", 1, Duration.ofSeconds(30));
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
    dsl()
        .execute("UPDATE tasks SET source_node_id = '10.0.2.9:1' WHERE task_id = ?", pull.taskId());
    assertFalse(busy(replicas, object, WAITER), "a pull from another holder leaves the seed free");
    dsl().execute("UPDATE tasks SET source_node_id = ? WHERE task_id = ?", SEED, pull.taskId());
    assertTrue(busy(replicas, object, WAITER));

    // A pull whose row has not moved for longer than the freshness window holds nobody back.
    dsl()
        .execute(
            "UPDATE tasks SET updated_at = now() - interval '10 seconds' WHERE task_id = ?",
            pull.taskId());
    assertFalse(busy(replicas, object, WAITER));
    // Nor does one that finished.
    dsl()
        .execute(
            "UPDATE tasks SET updated_at = now(), state = 'succeeded' WHERE task_id = ?",
            pull.taskId());
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
    dsl()
        .execute("UPDATE jobs SET status = 'failed', finished_at = now() WHERE job_id = 'relay-3'");
    dsl().execute("UPDATE placements SET state = 'failed' WHERE job_id = 'relay-3'");
    assertTrue(queue.defer(copy.taskId(), late + "/w", Duration.ofMillis(100)));
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(copy.taskId())).fetchOne();
    assertEquals(
        "canceled",
        row.getState(),
        "nobody would ever claim or cancel a pending task of a failed job");
    assertTrue(row.getFinishedAt() != null);
  }

  @Test
  void aRetryableFailureAfterItsPlacementFailedFailsForGoodInsteadOfWaitingForARetry() {
    String late = "10.0.2.6:1";
    jobWithCopies("relay-4", late);
    ClaimedTask copy = claim(late);
    assertEquals("relay-4", copy.jobId());
    dsl()
        .execute(
            "UPDATE placements SET state = 'failed' WHERE job_id = 'relay-4' AND node_id = ?",
            late);
    assertEquals(
        "failed",
        new TaskQueue(dsl())
            .fail(copy.taskId(), late + "/w", "no live node holds object relay-4/o1", true));
  }

  @Test
  void aDeferredCopyIsPendingAgainLaterWithoutUsingAnAttemptAndOnlyItsLeaseHolderCanDeferIt() {
    jobWithCopies("relay-2", DEFERRER);
    TaskQueue queue = new TaskQueue(dsl());
    ClaimedTask first = claim(DEFERRER);
    assertEquals(1, first.attempt());
    assertTrue(queue.progress(first.taskId(), DEFERRER + "/w", 0, SEED));

    assertFalse(
        queue.defer(first.taskId(), "someone-else", Duration.ofMillis(100)),
        "a lost lease cannot defer");
    assertTrue(queue.defer(first.taskId(), DEFERRER + "/w", Duration.ofMinutes(1)));
    var row = dsl().selectFrom(TASKS).where(TASKS.TASK_ID.eq(first.taskId())).fetchOne();
    assertEquals("pending", row.getState());
    assertEquals(0, row.getAttempts(), "a wait is not an attempt");
    assertEquals(null, row.getLeaseOwner());
    assertEquals(null, row.getSourceNodeId(), "no longer counted as load on the seed");
    assertTrue(
        queue.claim(DEFERRER, DEFERRER + "/w", 1, Duration.ofSeconds(30)).isEmpty(),
        "claimable only once due");
    assertFalse(
        queue.defer(first.taskId(), DEFERRER + "/w", Duration.ofMillis(100)), "not held any more");

    dsl().execute("UPDATE tasks SET run_after = now() WHERE task_id = ?", first.taskId());
    ClaimedTask again = claim(DEFERRER);
    assertEquals(first.taskId(), again.taskId());
    assertEquals(1, again.attempt(), "the first real attempt is still attempt 1");
    assertEquals(
        0,
        dsl().fetchCount(TASK_ATTEMPT_LOG, TASK_ATTEMPT_LOG.TASK_ID.eq(first.taskId())),
        "no attempt recorded");
  }

  private static void register(String... nodes) {
    var registry = new io.mooncake.dist.scheduler.store.NodeRegistry(dsl());
    for (String n : nodes) {
      registry.register(n, n.split(":")[0], 1, "/data", "i-" + n);
    }
  }

  private static void replica(String object, String node) {
    dsl()
        .execute(
            "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset) "
                + "VALUES (?, ?, 8, 'sha256:aa', '/data/f', 0)",
            object,
            node);
  }

  @Test
  void aFollowerReceivingAnObjectIsASourceForCopiesThatStartedAfterIt() {
    String first = "10.0.3.2:1";
    String second = "10.0.3.3:1";
    String reader = "10.0.3.4:1";
    register(SEED, first, second, reader);
    jobWithCopies("relay-5", first, second, reader);
    String object = "relay-5/o1";
    replica(object, SEED);
    ReplicaCatalog replicas = new ReplicaCatalog(dsl());
    TaskQueue queue = new TaskQueue(dsl());
    assertEquals(List.of(SEED), nodesOf(sources(replicas, object, reader)));

    ClaimedTask pull = claim(first);
    assertTrue(queue.progress(pull.taskId(), first + "/w", 0, SEED));
    ReplicaCatalog.CopySources found = sources(replicas, object, reader);
    assertEquals(java.util.Set.of(first), found.arriving());
    assertEquals(
        List.of(first, SEED),
        nodesOf(found),
        "the arriving follower is less busy than the seed it pulls from");
    assertEquals(
        null, found.holders().get(0).filePath(), "an arriving source publishes no file yet");

    // A follower relaying from the arriving one is a source too (V022: relays of relays), for
    // copies that start after it; never for one that started before it, which may be feeding
    // it, so no two copies can ever wait on each other.
    ClaimedTask relay = claim(second);
    assertTrue(queue.progress(relay.taskId(), second + "/w", 0, first));
    assertEquals(java.util.Set.of(first, second), sources(replicas, object, reader).arriving());
    assertEquals(
        java.util.Set.of(first),
        sources(replicas, object, second).arriving(),
        "none for itself, the one it relays from is");
    assertEquals(
        java.util.Set.of(),
        sources(replicas, object, first).arriving(),
        "a copy that started after the asking one's is not, nor is a node its own source");

    // A pull that stopped moving stops counting, as does a node gone silent.
    dsl()
        .execute(
            "UPDATE tasks SET updated_at = now() - interval '10 seconds' WHERE task_id = ?",
            pull.taskId());
    assertEquals(java.util.Set.of(second), sources(replicas, object, reader).arriving());
    dsl().execute("UPDATE tasks SET updated_at = now() WHERE task_id = ?", pull.taskId());
    dsl()
        .execute(
            "UPDATE nodes SET heartbeat_at = now() - interval '1 hour' WHERE node_id = ?", first);
    assertEquals(java.util.Set.of(second), sources(replicas, object, reader).arriving());
    dsl().execute("UPDATE nodes SET heartbeat_at = now() WHERE node_id = ?", first);

    // Once it holds the object it is listed once, as a holder.
    replica(object, first);
    found = sources(replicas, object, reader);
    assertEquals(java.util.Set.of(second), found.arriving(), "now second relays from a holder");
    assertTrue(nodesOf(found).containsAll(List.of(SEED, first, second)));
    assertEquals(3, found.holders().size());

    // What the copy needs to know without asking again: whether it holds the object itself, and
    // which sources have strikes a good copy would clear.
    assertFalse(found.heldHere());
    assertEquals(java.util.Set.of(), found.struck());
    replicas.holderFailed(first, "test strike");
    assertEquals(java.util.Set.of(first), sources(replicas, object, reader).struck());
    replica(object, reader);
    assertTrue(sources(replicas, object, reader).heldHere());
  }

  /**
   * {@code count} running copies of {@code object} on made-up nodes, reading from {@code source}.
   */
  private static void readers(String object, String source, int count, String tag) {
    String job = object.substring(0, object.indexOf('/'));
    dsl()
        .execute(
            """
        INSERT INTO tasks (job_id, node_id, task_type, object_id, bytes_total, state, source_node_id,
                           started_at, updated_at, lease_owner, lease_expires_at)
        SELECT ?, ? || g || ':1', 'REPLICA_COPY', ?, 8, 'processing', ?, now(), now(), 'w',
               now() + interval '1 minute'
          FROM generate_series(1, ?) g""",
            job,
            "10.9." + tag + ".",
            object,
            source,
            count);
  }

  @Test
  void aSourceAlreadyFeedingTheObjectToEightCopiesIsPassedOverAndWhenEveryOneIsTheSeedAlone() {
    String reader = "10.0.7.1:1";
    String holder = "10.0.7.2:1";
    register(SEED, reader, holder);
    jobWithCopies("relay-cap", reader);
    String object = "relay-cap/o1";
    replica(object, SEED);
    replica(object, holder);
    ReplicaCatalog replicas = new ReplicaCatalog(dsl());

    readers(object, holder, 7, "1");
    assertEquals(
        java.util.Set.of(holder, SEED),
        java.util.Set.copyOf(nodesOf(sources(replicas, object, reader))));
    readers("relay-cap/o2", holder, 5, "2");
    assertEquals(
        java.util.Set.of(holder, SEED),
        java.util.Set.copyOf(nodesOf(sources(replicas, object, reader))),
        "copies of other objects count toward its load, not toward the cap");
    readers(object, holder, 1, "3");
    assertEquals(
        List.of(SEED),
        nodesOf(sources(replicas, object, reader)),
        "an eighth copy of the object: passed over");

    // More holders than a lookup samples (the seed is then not among them), each feeding the
    // object to eight copies: the seed alone is offered, never nothing.
    for (int i = 3; i <= 3 + ReplicaCatalog.SAMPLE; i++) {
      String h = "10.0.7." + i + ":1";
      register(h);
      replica(object, h);
      readers(object, h, 8, "1" + i);
    }
    ReplicaCatalog.CopySources found = sources(replicas, object, reader);
    assertEquals(List.of(SEED), nodesOf(found));
    assertEquals(SEED, found.seedNodeId());
    dsl()
        .execute(
            "DELETE FROM tasks WHERE node_id LIKE '10.9.14.%' AND source_node_id = '10.0.7.4:1'");
    assertEquals(
        "10.0.7.4:1",
        nodesOf(sources(replicas, object, reader)).get(0),
        "one with room again: it alone, the seed not being in the sample");
  }

  /** One copy of the job's object claimed by each of two followers. */
  private record TwoCopies(ClaimedTask first, ClaimedTask second) {}

  private static TwoCopies twoClaimedCopies(String job, String a, String b) {
    jobWithCopies(job, a, b);
    return new TwoCopies(claim(a), claim(b));
  }

  @Test
  void onlyOneFollowerAtATimeTakesAnObjectFromTheSeed() {
    String a = "10.0.4.2:1";
    String b = "10.0.4.3:1";
    TwoCopies copies = twoClaimedCopies("relay-6", a, b);
    ClaimedTask first = copies.first();
    ClaimedTask second = copies.second();
    TaskQueue queue = new TaskQueue(dsl());
    Duration fresh = Duration.ofSeconds(5);
    assertTrue(queue.takeSeedPull(first.taskId(), a + "/w", "relay-6", "relay-6/o1", SEED, fresh));
    assertFalse(
        queue.takeSeedPull(second.taskId(), b + "/w", "relay-6", "relay-6/o1", SEED, fresh),
        "the other follower relays it instead");
    assertTrue(
        queue.takeSeedPull(first.taskId(), a + "/w", "relay-6", "relay-6/o1", SEED, fresh),
        "taking it again for the same copy is fine");
    assertFalse(
        queue.takeSeedPull(first.taskId(), "lost-lease", "relay-6", "relay-6/o1", SEED, fresh));
    // The first pull stalls (its row stops moving): the seed is free again.
    dsl()
        .execute(
            "UPDATE tasks SET updated_at = now() - interval '10 seconds' WHERE task_id = ?",
            first.taskId());
    assertTrue(queue.takeSeedPull(second.taskId(), b + "/w", "relay-6", "relay-6/o1", SEED, fresh));
    assertEquals(
        SEED,
        dsl()
            .selectFrom(TASKS)
            .where(TASKS.TASK_ID.eq(second.taskId()))
            .fetchOne()
            .getSourceNodeId());
  }

  @Test
  void aFollowerThatFindsTheSeedPullBeingDecidedDoesNotWaitForIt() throws Exception {
    String a = "10.0.4.8:1";
    String b = "10.0.4.9:1";
    TwoCopies copies = twoClaimedCopies("relay-9", a, b);
    ClaimedTask first = copies.first();
    ClaimedTask second = copies.second();
    TaskQueue queue = new TaskQueue(dsl());
    Duration fresh = Duration.ofSeconds(5);
    // Another follower's transaction is deciding the seed pull of this object right now.
    try (java.sql.Connection deciding = pg.database().dataSource().getConnection()) {
      deciding.setAutoCommit(false);
      try (var st =
          deciding.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 7))")) {
        st.setString(1, "relay-9\nrelay-9/o1");
        st.execute();
      }
      java.util.concurrent.CompletableFuture<Boolean> taken =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () ->
                  queue.takeSeedPull(
                      first.taskId(), a + "/w", "relay-9", "relay-9/o1", SEED, fresh));
      // A hang guard, not a speed limit: waiting for the lock would block until the rollback.
      assertFalse(
          taken.get(60, java.util.concurrent.TimeUnit.SECONDS),
          "the deciding follower takes it: this one looks for that copy instead");
      deciding.rollback();
    }
    assertTrue(queue.takeSeedPull(second.taskId(), b + "/w", "relay-9", "relay-9/o1", SEED, fresh));
  }

  @Test
  void aJobsShapeCountsItsObjectsAndItsFollowersButNotTheSeedAndOrdersFewFollowersAsTargeted() {
    jobWithCopies("shape-1", "10.0.6.4:1", "10.0.6.2:1", "10.0.6.3:1");
    for (int i = 0; i < 7; i++) {
      dsl()
          .execute(
              """
          INSERT INTO job_objects (job_id, object_id, file_index, chunk_index, offset_bytes, length_bytes)
          VALUES ('shape-1', ?, 0, ?, ?, 8)""",
              "shape-1/c" + i,
              i,
              8L * i);
    }
    JobShape shape = JobShape.read(dsl(), "shape-1", 8);
    assertEquals(
        new JobShape(7, 3, List.of("10.0.6.4:1", "10.0.6.2:1", "10.0.6.3:1")),
        shape,
        "the followers in target order, not node-id order: the chain the caller asked for");
    assertEquals(3, shape.share(), "7 objects over 3 followers: at most 3 from the seed each");
    assertEquals(
        new JobShape(7, 3), JobShape.read(dsl(), "shape-1", 2), "more followers than a chain");
    assertEquals(new JobShape(0, 0), JobShape.read(dsl(), "no-such-job", 8));
  }

  @Test
  void progressOfSeveralTasksIsOneStatementGuardedByEachLease() {
    String a = "10.0.5.2:1";
    String b = "10.0.5.3:1";
    jobWithCopies("relay-7", a, b);
    TaskQueue queue = new TaskQueue(dsl());
    ClaimedTask first = claim(a);
    ClaimedTask second = claim(b);
    assertTrue(queue.progress(first.taskId(), a + "/w", 0, SEED));
    queue.progressAll(
        new long[] {first.taskId(), second.taskId()},
        new String[] {a + "/w", "not-the-owner"},
        new long[] {5, 6});
    var rows =
        dsl()
            .selectFrom(TASKS)
            .where(TASKS.TASK_ID.in(first.taskId(), second.taskId()))
            .orderBy(TASKS.TASK_ID)
            .fetch();
    assertEquals(5, rows.get(0).getBytesDone());
    assertEquals(SEED, rows.get(0).getSourceNodeId(), "the source stays as recorded");
    assertEquals(0, rows.get(1).getBytesDone(), "a lease held by someone else is not written");
    assertEquals(
        5L,
        dsl()
            .fetchValue(
                "SELECT staged_bytes FROM placement_bytes WHERE job_id = 'relay-7' AND node_id = ?",
                a),
        "the placement's byte count follows");
  }

  private static List<String> nodesOf(ReplicaCatalog.CopySources found) {
    return found.holders().stream().map(io.mooncake.dist.scheduler.store.Replica::nodeId).toList();
  }
}
