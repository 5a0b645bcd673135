package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.ChunkLayout;
import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.JobSnapshot;
import io.mooncake.dist.scheduler.domain.Manifest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.domain.PlacementSnapshot;
import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.CreateResult;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the scheduler writes when a fallback seed takes over (V011): the job's seed and replaced
 * seeds, the releases of objects only the failed seed held withdrawn with their open copies, the
 * new seed's download carrying what live nodes hold, its copies of everything else canceled, and
 * the objects it then publishes released again to the followers, not to itself.
 */
class SeedFailoverReleaseTest {
  private static final int OBJECTS = 6;
  private static final long CHUNK = 1000;
  private static final Duration LEASE = Duration.ofMinutes(5);

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  private static String objectId(String job, int n) {
    return job + "/m.bin/" + n;
  }

  private static String node(String job, int i) {
    return job + "-n" + i + ":1";
  }

  private static Replica replica(String job, int n, String node, String digestOf) {
    return new Replica(
        objectId(job, n), node, CHUNK, "sha256:" + digestOf + "-" + n, "/d/m.bin", n * CHUNK);
  }

  /** Seed n0, followers n1..n3, fallback seeds n1 then n2; every node registered and live. */
  private static void createJob(String job) {
    ModelRef model = new ModelRef(job, "r1", "safetensors", "local");
    List<String> ids = IntStream.range(0, OBJECTS).mapToObj(n -> objectId(job, n)).toList();
    ManifestFile file =
        new ManifestFile(
            "m.bin",
            OBJECTS * CHUNK,
            "dummy",
            "http://127.0.0.1:9/m.bin",
            "k",
            ids,
            new ChunkLayout(CHUNK, OBJECTS, job + "/m.bin"));
    List<String> targets = IntStream.range(0, 4).mapToObj(i -> node(job, i)).toList();
    JobRequest req =
        new JobRequest(
            job,
            model,
            new Manifest(model, OBJECTS * CHUNK, "v1", List.of(file)),
            node(job, 0),
            targets,
            null,
            List.of(node(job, 1), node(job, 2)));
    assertEquals(CreateResult.CREATED, new JobStore(dsl()).create(req, "sha-" + job, "{}"));
    NodeRegistry nodes = new NodeRegistry(dsl());
    for (String n : targets) {
      nodes.register(n, n.substring(0, n.indexOf(':')), 1, "/data/" + n, "i-" + n);
    }
  }

  private static Set<String> openCopies(String job, String node) {
    return dsl()
        .fetch(
            """
            SELECT object_id FROM tasks
             WHERE job_id = ? AND node_id = ? AND task_type = 'REPLICA_COPY'
               AND state IN ('pending', 'processing')""",
            job,
            node)
        .stream()
        .map(r -> r.get(0, String.class))
        .collect(Collectors.toSet());
  }

  private static Set<String> released(String job) {
    return dsl().fetch("SELECT object_id FROM copy_releases WHERE job_id = ?", job).stream()
        .map(r -> r.get(0, String.class))
        .collect(Collectors.toSet());
  }

  /** Claims this node's copy of object n: the others are made not due meanwhile. */
  private static ClaimedTask claimCopy(TaskQueue q, String job, String node, int n) {
    dsl()
        .execute(
            """
            UPDATE tasks SET run_after = CASE WHEN object_id = ? THEN now() - interval '1 hour'
                                              ELSE now() + interval '1 hour' END
             WHERE job_id = ? AND node_id = ? AND state = 'pending'""",
            objectId(job, n),
            job,
            node);
    ClaimedTask t = q.claim(node, node + "/w", 1, LEASE).get(0);
    assertEquals(objectId(job, n), t.objectId());
    dsl()
        .execute(
            "UPDATE tasks SET run_after = now() WHERE job_id = ? AND node_id = ? AND state = 'pending'",
            job,
            node);
    return t;
  }

  @Test
  void aFallbackSeedTakesOverDownloadingOnlyWhatNoLiveNodeHolds() {
    String job = "fo";
    createJob(job);
    String seed = node(job, 0);
    String n1 = node(job, 1);
    String n2 = node(job, 2);
    String n3 = node(job, 3);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask download = q.claim(seed, seed + "/w", 1, LEASE).get(0);
    // The seed publishes objects 0..3 and they are released: 4 copies for each of 3 followers.
    assertTrue(
        q.publishWhileLeased(
            download.taskId(),
            seed + "/w",
            LEASE,
            IntStream.range(0, 4).mapToObj(n -> replica(job, n, seed, "old")).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertEquals(4, released(job).size());

    // n1 copies object 0, n2 object 1; n1 is receiving object 2 when the seed dies.
    ClaimedTask c0 = claimCopy(q, job, n1, 0);
    assertTrue(q.succeed(c0.taskId(), n1 + "/w", CHUNK, null, List.of(replica(job, 0, n1, "old"))));
    ClaimedTask c1 = claimCopy(q, job, n2, 1);
    assertTrue(q.succeed(c1.taskId(), n2 + "/w", CHUNK, null, List.of(replica(job, 1, n2, "old"))));
    ClaimedTask receiving = claimCopy(q, job, n1, 2);
    dsl()
        .execute(
            "UPDATE tasks SET state = 'failed', last_error = ?, finished_at = now()"
                + " WHERE task_id = ?",
            "node " + seed + " gone for more than 5 s",
            download.taskId());

    assertTrue(ScheduleJob.run(dsl(), job));

    var row =
        dsl()
            .fetchOne(
                "SELECT seed_node_id, replaced_seeds, status FROM jobs WHERE job_id = ?", job);
    assertEquals(n1, row.get(0, String.class));
    assertEquals("[\"" + seed + "\"]", row.get(1, String.class));
    assertEquals("seeding", row.get(2, String.class));
    // Objects 2 and 3 were held by the failed seed alone: released again once the new seed has
    // them. Their open copies are canceled, the one n1 was receiving too.
    assertEquals(Set.of(objectId(job, 0), objectId(job, 1)), released(job));
    assertEquals(
        "canceled",
        dsl()
            .fetchOne("SELECT state FROM tasks WHERE task_id = ?", receiving.taskId())
            .get(0, String.class));
    assertEquals(Set.of(objectId(job, 0), objectId(job, 1)), openCopies(job, n3));
    // n1 still copies object 1 from n2; it downloads everything else itself.
    assertEquals(Set.of(objectId(job, 1)), openCopies(job, n1));
    ClaimedTask fill =
        q.claim(n1, n1 + "/w", 2, LEASE).stream()
            .filter(t -> t.type() == io.mooncake.dist.scheduler.domain.TaskType.MODEL_DOWNLOAD)
            .findFirst()
            .orElseThrow();
    assertEquals(Set.of(objectId(job, 0), objectId(job, 1)), Set.copyOf(fill.payload().held()));
    assertEquals(
        (OBJECTS - 2) * CHUNK,
        dsl()
            .fetchOne("SELECT bytes_total FROM tasks WHERE task_id = ?", fill.taskId())
            .get(0, Long.class));

    // The new seed publishes object 2 (its own digest): released again, to n2 and n3 only.
    assertTrue(
        q.publishWhileLeased(fill.taskId(), n1 + "/w", LEASE, List.of(replica(job, 2, n1, "new"))));
    assertTrue(ScheduleJob.run(dsl(), job));
    assertTrue(released(job).contains(objectId(job, 2)));
    assertEquals(
        "sha256:new-2",
        dsl()
            .fetchOne(
                "SELECT digest FROM copy_releases WHERE job_id = ? AND object_id = ?",
                job,
                objectId(job, 2))
            .get(0, String.class));
    assertTrue(openCopies(job, n2).contains(objectId(job, 2)));
    assertTrue(openCopies(job, n3).contains(objectId(job, 2)));
    assertEquals(Set.of(objectId(job, 1)), openCopies(job, n1), "the seed copies nothing it reads");

    JobSnapshot s = new JobStore(dsl()).snapshot(job).orElseThrow();
    assertEquals(List.of(seed, n1), s.seedHistory());
    assertEquals(List.of(n1, n2), s.fallbackSeeds());
    assertEquals(n1, s.seedNodeId());
    assertEquals(
        List.of("former_seed", "seed", "follower", "follower"),
        s.placements().stream().map(PlacementSnapshot::role).toList());
    assertEquals("failed", s.placements().get(0).state());
    assertEquals("node " + seed + " gone for more than 5 s", s.placements().get(0).lastError());
  }

  @Test
  void anObjectHeldOnlyByANodeThatIsNotLiveIsDownloadedButItsReleaseStays() {
    String job = "fo-dead";
    createJob(job);
    String seed = node(job, 0);
    String n1 = node(job, 1);
    String n2 = node(job, 2);
    TaskQueue q = new TaskQueue(dsl());
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask download = q.claim(seed, seed + "/w", 1, LEASE).get(0);
    assertTrue(
        q.publishWhileLeased(
            download.taskId(),
            seed + "/w",
            LEASE,
            IntStream.range(0, 2).mapToObj(n -> replica(job, n, seed, "old")).toList()));
    assertTrue(ScheduleJob.run(dsl(), job));
    ClaimedTask c1 = claimCopy(q, job, n2, 1);
    assertTrue(q.succeed(c1.taskId(), n2 + "/w", CHUNK, null, List.of(replica(job, 1, n2, "old"))));
    // n2 stops heartbeating (not yet past the grace), and the seed's download fails.
    dsl()
        .execute(
            "UPDATE nodes SET heartbeat_at = now() - interval '1 minute' WHERE node_id = ?", n2);
    dsl()
        .execute(
            "UPDATE tasks SET state = 'failed', last_error = 'HTTP 503', finished_at = now()"
                + " WHERE task_id = ?",
            download.taskId());

    assertTrue(ScheduleJob.run(dsl(), job));

    // Object 1 keeps its release (n2 may come back and serve it to the others); n1 reads it from
    // the source rather than wait for n2.
    assertEquals(Set.of(objectId(job, 1)), released(job));
    assertEquals(Set.of(), openCopies(job, n1));
    ClaimedTask fill = q.claim(n1, n1 + "/w", 1, LEASE).get(0);
    assertEquals(List.of(), fill.payload().held());
  }
}
