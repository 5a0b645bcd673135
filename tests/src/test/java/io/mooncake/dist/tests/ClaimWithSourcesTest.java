package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.loop.ScheduleJob;
import io.mooncake.dist.scheduler.store.ClaimedTask;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.scheduler.store.TaskQueue;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker's claim looks its copies' sources up in the same statement (issue 19: claim, lookup and
 * the source's write were three statements per copy): each claimed copy of a released object
 * carries what the lookup answers on its own, and its row names the first source other than the
 * seed; a copy whose only source is the seed names none (its seed pull is taken on its own); a
 * whole-model task carries no lookup.
 */
class ClaimWithSourcesTest {
  private static final Duration FRESH = Duration.ofSeconds(5);

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  @Test
  void claimedCopiesCarryTheirSourcesAndNameTheFirstPeerInTheirRow() {
    String job = "claim-sources";
    List<String> targets = released(job);
    String seed = targets.get(0);
    String reader = targets.get(1);
    String peer = targets.get(2);
    TaskQueue q = new TaskQueue(dsl());
    // The peer holds the reader's first two objects (in its claim order) with the seed's digest.
    List<String> first =
        dsl()
            .resultQuery(
                "SELECT object_id FROM tasks WHERE job_id = ? AND node_id = ? AND state = 'pending'"
                    + " ORDER BY run_after, task_id LIMIT 4",
                job,
                reader)
            .fetch(0, String.class);
    for (String object : first.subList(0, 2)) {
      dsl()
          .execute(
              "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)"
                  + " SELECT object_id, ?, size_bytes, digest, '/peer/m.bin', file_offset"
                  + " FROM object_replicas WHERE object_id = ? AND node_id = ?",
              peer,
              object,
              seed);
    }

    List<ClaimedTask> claimed =
        q.claimWithSources(reader, reader + "/w", 4, Duration.ofMinutes(5), FRESH);
    assertEquals(first, claimed.stream().map(ClaimedTask::objectId).toList(), "claim order kept");
    ReplicaCatalog catalog = new ReplicaCatalog(dsl());
    Map<Long, String> rowSource =
        dsl()
            .resultQuery(
                "SELECT task_id, source_node_id FROM tasks WHERE job_id = ? AND node_id = ? AND state = 'processing'",
                job,
                reader)
            .fetchMap(r -> r.get(0, Long.class), r -> String.valueOf(r.get(1, String.class)));
    for (int i = 0; i < claimed.size(); i++) {
      ClaimedTask t = claimed.get(i);
      assertNotNull(t.sources(), t.objectId());
      ReplicaCatalog.CopySources alone =
          catalog.sources(
              job,
              t.objectId(),
              t.payload().files().get(0).objects().get(0).digest(),
              reader,
              NodeRegistry.LIVENESS,
              FRESH);
      assertEquals(nodesOf(alone.holders()), nodesOf(t.sources().holders()), t.objectId());
      assertEquals(seed, t.sources().seedNodeId());
      if (i < 2) {
        assertEquals(Set.of(seed, peer), nodesOf(t.sources().holders()));
        assertEquals(peer, t.recordedSource(), "the first peer is named at once");
        assertEquals(peer, rowSource.get(t.taskId()));
      } else {
        assertEquals(Set.of(seed), nodesOf(t.sources().holders()));
        assertNull(t.recordedSource(), "a seed pull is taken on its own");
        assertEquals("null", rowSource.get(t.taskId()));
      }
    }
    // The named source counts as the peer's load for the next lookup.
    ReplicaCatalog.CopySources next =
        catalog.sources(
            job,
            first.get(0),
            claimed.get(0).payload().files().get(0).objects().get(0).digest(),
            targets.get(3),
            NodeRegistry.LIVENESS,
            FRESH);
    assertTrue(
        next.arriving().contains(reader), "the reader relays what it receives from the peer");
    // The other test's nodes are these nodes: leave them nothing to claim.
    dsl().execute("DELETE FROM tasks WHERE job_id = ?", job);
  }

  @Test
  void aSuccessRecordsAndRefillsItsSlotInOneStatement() {
    String job = "succeed-and-claim";
    List<String> targets = released(job);
    String seed = targets.get(0);
    String reader = targets.get(1);
    TaskQueue q = new TaskQueue(dsl());
    List<ClaimedTask> running =
        q.claimWithSources(reader, reader + "/w", 2, Duration.ofMinutes(5), FRESH);
    assertEquals(2, running.size());
    ClaimedTask done = running.get(0);
    Replica mine = new Replica(done.objectId(), reader, 1 << 20, "crc32c:1", "/r/m.bin", 0);
    List<String> next =
        dsl()
            .resultQuery(
                "SELECT object_id FROM tasks WHERE job_id = ? AND node_id = ? AND state = 'pending'"
                    + " ORDER BY run_after, task_id LIMIT 3",
                job,
                reader)
            .fetch(0, String.class);

    TaskQueue.SucceededAndClaimed out =
        q.succeedAndClaim(
            List.of(
                new TaskQueue.Completion(
                    done.taskId(), reader + "/w", 1 << 20, null, List.of(mine)),
                // A lease that is not this owner's: not recorded, and the claim still runs.
                new TaskQueue.Completion(
                    running.get(1).taskId(), "someone-else/w", 1, null, List.of())),
            reader,
            reader + "/w",
            3,
            Duration.ofMinutes(5),
            FRESH);

    assertEquals(Set.of(done.taskId()), out.recorded());
    assertEquals(next, out.claimed().stream().map(ClaimedTask::objectId).toList());
    for (ClaimedTask t : out.claimed()) {
      assertNotNull(t.sources(), "a refill carries its copies' sources: " + t.objectId());
      assertEquals(seed, t.sources().seedNodeId());
    }
    assertEquals(
        "succeeded",
        dsl().fetchOne("SELECT state FROM tasks WHERE task_id = ?", done.taskId()).get(0));
    assertEquals(
        "processing",
        dsl()
            .fetchOne("SELECT state FROM tasks WHERE task_id = ?", running.get(1).taskId())
            .get(0));
    assertEquals(
        1,
        dsl()
            .fetchCount(
                dsl()
                    .selectOne()
                    .from("object_replicas")
                    .where("object_id = ? AND node_id = ?", done.objectId(), reader)),
        "the success published its replica");
    assertEquals(
        4,
        dsl()
            .fetchCount(
                dsl()
                    .selectOne()
                    .from("tasks")
                    .where("job_id = ? AND node_id = ? AND state = 'processing'", job, reader)),
        "the one whose completion was refused, and the three refilled");
    // The other test's nodes are these nodes: leave them nothing to claim.
    dsl().execute("DELETE FROM tasks WHERE job_id = ?", job);
  }

  /**
   * A job whose nodes are registered, whose seed claimed its download (a whole-model task, which
   * carries no lookup) and published every object, and whose copies are released.
   *
   * @return the job's targets, the seed first
   */
  private static List<String> released(String job) {
    List<String> targets = TaskCountsTest.createJob(dsl(), job);
    String seed = targets.get(0);
    NodeRegistry nodes = new NodeRegistry(dsl());
    for (String n : targets) {
      nodes.register(n, n.split(":")[0], 1, "/data", "i-" + n);
    }
    assertTrue(ScheduleJob.run(dsl(), job));
    List<ClaimedTask> download =
        new TaskQueue(dsl()).claimWithSources(seed, seed + "/w", 1, Duration.ofMinutes(5), FRESH);
    assertEquals(1, download.size());
    assertNull(download.get(0).sources(), "a whole-model task carries no lookup");
    TaskCountsTest.publish(dsl(), job, seed, 0, 60);
    assertTrue(ScheduleJob.run(dsl(), job));
    return targets;
  }

  private static Set<String> nodesOf(List<Replica> replicas) {
    return replicas.stream().map(Replica::nodeId).collect(Collectors.toSet());
  }
}
