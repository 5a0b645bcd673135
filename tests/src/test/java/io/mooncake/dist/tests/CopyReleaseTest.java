package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.FilePlan;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.ObjectPlan;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.state.JobEvaluator;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Copies are created when the seed publishes their object (V004): payload-less rows, claimable at
 * once, each follower's stripe first, the payload built by the claim with the digest the seed
 * published; replicas of an earlier download attempt release nothing. A copy that finishes after
 * its lease was rescued is still recorded when nothing took it since (V021).
 */
class CopyReleaseTest {
  private static final String SEED = "10.4.0.0:1";
  private static final int OBJECTS = 7;
  private static final long CHUNK = 1000;
  private static final Duration LEASE = Duration.ofMinutes(5);

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static String objectId(String job, int n) {
    return job + "/m.bin/" + n;
  }

  /** Each job its own followers, so claims of one test never see the other's copies. */
  private static List<String> followers(String job) {
    return followers(job, 3);
  }

  private static List<String> followers(String job, int n) {
    return IntStream.rangeClosed(1, n).mapToObj(i -> job + "-f" + i + ":1").toList();
  }

  private static Replica seedReplica(String job, int n) {
    return seedReplica(job, n, SEED);
  }

  private static Replica seedReplica(String job, int n, String seed) {
    return new Replica(
        objectId(job, n), seed, CHUNK, "sha256:" + job + "-" + n, "/d/m.bin", n * CHUNK);
  }

  private static void createJob(String job) {
    createJob(job, SEED);
  }

  private static void createJob(String job, String seed) {
    createJob(job, seed, followers(job));
  }

  private static void createJob(String job, String seed, List<String> followers) {
    ModelRef model = new ModelRef(job, "r1", "safetensors", "local");
    List<String> ids = IntStream.range(0, OBJECTS).mapToObj(n -> objectId(job, n)).toList();
    ManifestFile file =
        new ManifestFile(
            "m.bin",
            OBJECTS * CHUNK,
            "dummy",
            "/nonexistent/m.bin",
            "k",
            ids,
            new ChunkLayout(CHUNK, OBJECTS, job + "/m.bin"));
    List<String> targets = new java.util.ArrayList<>(List.of(seed));
    targets.addAll(followers);
    JobRequest req =
        new JobRequest(
            job,
            model,
            new Manifest(model, OBJECTS * CHUNK, "v1", List.of(file)),
            seed,
            targets,
            null);
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha-" + job, "{}"));
  }

  /**
   * The objects of {@code node}'s next {@code n} claims, one at a time: a batch comes back in task
   * id order, the claim picks by (run_after, task_id).
   */
  private static List<String> claimOrder(TaskQueue q, String node, int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> q.claim(node, node + "/w", 1, Duration.ofMinutes(5)))
        .flatMap(List::stream)
        .map(ClaimedTask::objectId)
        .toList();
  }

  private static List<String> claimedObjects(List<ClaimedTask> claimed) {
    return claimed.stream().map(ClaimedTask::objectId).toList();
  }

  private static int copies(String job) {
    return dsl()
        .fetchOne("SELECT count(*) FROM tasks WHERE job_id = ? AND task_type = 'REPLICA_COPY'", job)
        .get(0, Integer.class);
  }

  @Test
  void publishedObjectsBecomeClaimableCopiesInFileOrderInAChainJobWithTheSeedsDigest() {
    String job = "rel";
    createJob(job);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask download = q.claim(SEED, SEED + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(0, copies(job), "nothing published, nothing released");

    // The seed publishes objects 0..2 while it downloads: copies for those, for every follower.
    assertTrue(
        q.publishWhileLeased(
            download.taskId(),
            SEED + "/w",
            LEASE,
            IntStream.range(0, 3).mapToObj(n -> seedReplica(job, n)).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(3 * 3, copies(job));
    assertEquals(
        0,
        dsl()
            .fetchOne(
                """
        SELECT count(*) FROM tasks
         WHERE job_id = ? AND task_type = 'REPLICA_COPY' AND (payload IS NOT NULL OR run_after > now() OR state <> 'pending')""",
                job)
            .get(0, Integer.class),
        "payload-less, pending and due at once");
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(3 * 3, copies(job), "a pass with nothing newly published creates nothing");

    // Three followers relay along a chain: each takes the objects in file order, the order in which
    // the follower before it receives them.
    String f1 = followers(job).get(1);
    // One at a time: a batch comes back in task id order, the claim picks by (run_after, task_id).
    List<ClaimedTask> first =
        IntStream.range(0, 4)
            .mapToObj(i -> q.claim(f1, f1 + "/w", 1, Duration.ofMinutes(5)))
            .flatMap(List::stream)
            .toList();
    assertEquals(
        List.of(objectId(job, 0), objectId(job, 1), objectId(job, 2)), claimedObjects(first));
    FilePlan file = first.get(0).payload().files().get(0);
    assertEquals("m.bin", file.path());
    assertEquals(OBJECTS * CHUNK, file.sizeBytes());
    assertNull(file.downloadUrl());
    assertEquals(
        new ObjectPlan(objectId(job, 0), 0, 0, CHUNK, "sha256:rel-0"), file.objects().get(0));
    assertEquals(new ModelRef(job, "r1", "safetensors", "local"), first.get(0).payload().model());

    // The rest, then the download succeeds: every object released, each exactly once.
    assertTrue(
        q.succeed(
            download.taskId(),
            SEED + "/w",
            OBJECTS * CHUNK,
            null,
            IntStream.range(0, OBJECTS).mapToObj(n -> seedReplica(job, n)).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(OBJECTS * 3, copies(job));
    assertEquals(
        OBJECTS, dsl().fetchCount(dsl().selectFrom("copy_releases").where("job_id = ?", job)));
    assertEquals(
        List.of(objectId(job, 3), objectId(job, 4), objectId(job, 5), objectId(job, 6)),
        claimOrder(q, f1, 5));
    String f0 = followers(job).get(0);
    // File order across both releases.
    assertEquals(
        IntStream.range(0, OBJECTS).mapToObj(n -> objectId(job, n)).toList(),
        claimOrder(q, f0, OBJECTS));
    assertEquals(
        "replicating",
        dsl().fetchOne("SELECT status FROM jobs WHERE job_id = ?", job).get(0, String.class));
  }

  @Test
  void aJobOfMoreFollowersThanAChainReleasesEachFollowerItsOwnStripeFirst() {
    String job = "wide";
    List<String> followers = followers(job, JobEvaluator.CHAIN_MAX_FOLLOWERS + 1);
    createJob(job, SEED, followers);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask download = q.claim(SEED, SEED + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertTrue(
        q.succeed(
            download.taskId(),
            SEED + "/w",
            OBJECTS * CHUNK,
            null,
            IntStream.range(0, OBJECTS).mapToObj(n -> seedReplica(job, n)).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(OBJECTS * followers.size(), copies(job));
    // Follower 3 of 9 (7 objects: one per stripe) takes object 3 first, then 4, 5, 6, 0, 1, 2.
    String f3 = followers.get(3);
    assertEquals(
        List.of(3, 4, 5, 6, 0, 1, 2).stream().map(n -> objectId(job, n)).toList(),
        claimOrder(q, f3, OBJECTS));
  }

  @Test
  void replicasOfAnEarlierDownloadAttemptReleaseNothing() {
    String job = "old";
    createJob(job);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    // Published before the current attempt was claimed: bytes that attempt rewrites.
    dsl()
        .execute(
            """
        INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset, created_at)
        VALUES (?, ?, ?, 'sha256:stale', '/d/m.bin', 0, now() - interval '1 hour')""",
            objectId(job, 0),
            SEED,
            CHUNK);
    ClaimedTask download = q.claim(SEED, SEED + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(0, copies(job));
    assertTrue(
        q.publishWhileLeased(download.taskId(), SEED + "/w", LEASE, List.of(seedReplica(job, 0))));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(3, copies(job));
    assertEquals(
        "sha256:old-0",
        q.claim(followers(job).get(2), "x/w", 1, Duration.ofMinutes(5))
            .get(0)
            .payload()
            .files()
            .get(0)
            .objects()
            .get(0)
            .digest());
  }

  @Test
  void aPublishWhileRunningRenewsTheLeaseItChecks() {
    String job = "renew";
    // Its own seed: the other tests claim SEED's download.
    String seed = "10.4.0.8:1";
    createJob(job, seed);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    // Claimed with a lease about to lapse, as when the node's heartbeats do not get through.
    ClaimedTask download = q.claim(seed, seed + "/w", 1, Duration.ofSeconds(2)).get(0);
    assertTrue(
        q.publishWhileLeased(
            download.taskId(), seed + "/w", LEASE, List.of(seedReplica(job, 0, seed))));
    assertEquals(
        Boolean.TRUE,
        dsl()
            .fetchValue(
                "SELECT lease_expires_at > now() + interval '4 minutes' FROM tasks WHERE task_id = ?",
                download.taskId()),
        "the publish renewed the lease for the node's lease time");
    assertEquals(0, q.rescueExpiredLeases());

    // Another owner's publish neither publishes nor renews.
    assertFalse(
        q.publishWhileLeased(
            download.taskId(), "someone/else", LEASE, List.of(seedReplica(job, 1, seed))));
    assertEquals(
        0L,
        ((Number)
                dsl()
                    .fetchValue(
                        "SELECT count(*) FROM object_replicas WHERE object_id = ? AND node_id = ?",
                        objectId(job, 1),
                        seed))
            .longValue());
  }

  @Test
  void aCopyFinishingAfterItsLeaseWasRescuedIsRecordedFromItsOwnNodeOnly() {
    String job = "late";
    // Its own seed: the rescued download stays pending, and the other tests claim seed's.
    String seed = "10.4.0.9:1";
    createJob(job, seed);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask download = q.claim(seed, seed + "/w", 1, Duration.ofMinutes(5)).get(0);
    assertTrue(
        q.publishWhileLeased(
            download.taskId(),
            seed + "/w",
            LEASE,
            IntStream.range(0, 2).mapToObj(n -> seedReplica(job, n, seed)).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    String f0 = followers(job).get(0);
    String f1 = followers(job).get(1);
    ClaimedTask copy = q.claim(f0, f0 + "/w", 1, Duration.ofMinutes(5)).get(0);
    ClaimedTask other = q.claim(f1, f1 + "/w", 1, Duration.ofMinutes(5)).get(0);
    // The heartbeats of all three nodes stopped arriving: every lease lapses and is rescued.
    dsl()
        .execute(
            "UPDATE tasks SET lease_expires_at = now() - interval '1 s' WHERE job_id = ? AND state = 'processing'",
            job);
    assertEquals(3, q.rescueExpiredLeases());

    // The download's lease is its only claim to the result: refused, as before.
    assertTrue(
        q.succeedAll(
                List.of(
                    new TaskQueue.Completion(
                        download.taskId(),
                        seed + "/w",
                        CHUNK,
                        null,
                        List.of(seedReplica(job, 0, seed)))))
            .isEmpty());
    // A success naming a replica on another node than the copy's is not the copy's work.
    assertTrue(
        q.succeedAll(
                List.of(
                    new TaskQueue.Completion(
                        other.taskId(), f1 + "/w", CHUNK, null, List.of(replicaOn(copy, f0)))))
            .isEmpty());
    // The copy's own node verified the bytes: recorded, and its replica published.
    assertEquals(
        java.util.Set.of(copy.taskId()),
        q.succeedAll(
            List.of(
                new TaskQueue.Completion(
                    copy.taskId(), f0 + "/w", CHUNK, null, List.of(replicaOn(copy, f0))))));
    assertEquals(
        "succeeded",
        dsl()
            .fetchOne("SELECT state FROM tasks WHERE task_id = ?", copy.taskId())
            .get(0, String.class));
    assertEquals(
        1,
        dsl()
            .fetchCount(
                dsl()
                    .selectFrom("object_replicas")
                    .where("object_id = ? AND node_id = ?", copy.objectId(), f0)));
    assertEquals(
        "pending",
        dsl()
            .fetchOne("SELECT state FROM tasks WHERE task_id = ?", other.taskId())
            .get(0, String.class));

    // Claimed again after the rescue, the copy goes by the new claim's lease: an older run's
    // success with another owner is refused.
    // (A rescued copy is due from the rescue on: after the node's copies never claimed yet.)
    assertTrue(
        q.claim(f1, f1 + "/w2", 2, Duration.ofMinutes(5)).stream()
            .anyMatch(t -> t.taskId() == other.taskId()));
    assertTrue(
        q.succeedAll(
                List.of(
                    new TaskQueue.Completion(
                        other.taskId(), f1 + "/w", CHUNK, null, List.of(replicaOn(other, f1)))))
            .isEmpty());
  }

  private static Replica replicaOn(ClaimedTask copy, String node) {
    ObjectPlan o = copy.payload().files().get(0).objects().get(0);
    return new Replica(o.objectId(), node, o.length(), o.digest(), "/d/m.bin", o.offset());
  }
}
