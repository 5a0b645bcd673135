package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.mooncake.dist.master.MasterRouting;
import io.mooncake.dist.scheduler.domain.NodeId;
import io.mooncake.dist.scheduler.loop.SchedulerLoop;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import io.mooncake.dist.worker.NodeWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Wake-ups: new and unblocked work reaches the right worker through LISTEN/NOTIFY, and when
 * notifications are lost (triggers silenced, listener connections killed as in a database restart)
 * polling alone still carries a job to the end.
 */
class QueueWakeupTest {
  private static final Duration HOUR = Duration.ofHours(1);

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  /** A master (scheduler + HTTP) and two workers in this JVM, with the given poll intervals. */
  private static final class Rig implements AutoCloseable {
    final SchedulerLoop scheduler;
    final WebServer server;
    final Api api;
    final List<NodeWorker> workers = new ArrayList<>();
    final String seed;
    final String follower;

    Rig(Path dir, Duration schedulerTick, Duration workerPoll) throws InterruptedException {
      scheduler =
          new SchedulerLoop(
                  pg.database(),
                  new SchedulerLoop.Settings(
                      schedulerTick,
                      SchedulerLoop.Settings.DEFAULT_NODE_GRACE,
                      SchedulerLoop.Settings.DEFAULT_RETENTION,
                      HOUR))
              .start();
      server =
          WebServer.builder()
              .host("127.0.0.1")
              .port(0)
              .routing(r -> MasterRouting.routing(r, pg.database(), scheduler::wake))
              .build()
              .start();
      api = new Api("http://127.0.0.1:" + server.port());
      seed = addWorker(dir.resolve("seed"), workerPoll);
      follower = addWorker(dir.resolve("follower"), workerPoll);
    }

    private String addWorker(Path dataDir, Duration poll) throws InterruptedException {
      NodeId id = new NodeId("127.0.0.1", TestFiles.freePort());
      workers.add(
          new NodeWorker(
                  new NodeWorker.Settings(
                      id,
                      dataDir,
                      "127.0.0.1",
                      4,
                      Duration.ofMillis(500),
                      Duration.ofSeconds(10),
                      poll),
                  pg.database())
              .start());
      return id.toString();
    }

    JsonNode distribute(String jobId, Path dir) {
      Path model = TestFiles.random(dir.resolve(jobId + ".bin"), 3 * 65536 + 17, jobId.hashCode());
      String body =
          Requests.job(
              jobId,
              "wake-" + jobId,
              "r1",
              List.of(
                  new FileSpec(
                      "model.bin",
                      3 * 65536 + 17,
                      65536,
                      "sha256:" + TestFiles.sha256(model),
                      model.toString())),
              seed,
              List.of(seed, follower));
      assertEquals(201, api.post("/api/v1/model-distribution/jobs", body).status());
      return api.awaitTerminal(jobId);
    }

    @Override
    public void close() {
      workers.forEach(NodeWorker::close);
      server.stop();
      scheduler.close();
    }
  }

  @Test
  void notificationsAloneCarryAJobWhenEveryPollIsAnHourAway(@TempDir Path dir) throws Exception {
    try (Rig rig = new Rig(dir, HOUR, HOUR)) {
      JsonNode done = rig.distribute("notified", dir);
      assertEquals("completed", done.get("status").asText(), done.toString());
    }
  }

  @Test
  void pollingCarriesAJobWhenNotificationsAreLost(@TempDir Path dir) throws Exception {
    var dsl = pg.database().dsl();
    try (Rig rig = new Rig(dir, Duration.ofMillis(200), Duration.ofMillis(300))) {
      dsl.execute("ALTER TABLE tasks DISABLE TRIGGER tasks_notify_insert");
      dsl.execute("ALTER TABLE tasks DISABLE TRIGGER tasks_notify_update");
      dsl.execute("ALTER TABLE object_replicas DISABLE TRIGGER object_replicas_notify");
      dsl.execute("ALTER TABLE object_replicas DISABLE TRIGGER object_replicas_notify_update");
      // And the listeners' sessions die, as in a database restart; they reconnect on their own.
      // The three listeners (master, two workers) connect in the background: wait for them first.
      String listening =
          "FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()";
      for (int i = 0;
          i < 600 && dsl.resultQuery("SELECT count(*) " + listening).fetchOne(0, Integer.class) < 3;
          i++) {
        Thread.sleep(50);
      }
      int killed =
          dsl.resultQuery("SELECT count(pg_terminate_backend(pid)) " + listening)
              .fetchOne(0, Integer.class);
      assertTrue(killed >= 3, "the master's and both workers' listeners: " + killed);
      JsonNode done = rig.distribute("polled", dir);
      assertEquals("completed", done.get("status").asText(), done.toString());
    } finally {
      dsl.execute("ALTER TABLE tasks ENABLE TRIGGER tasks_notify_insert");
      dsl.execute("ALTER TABLE tasks ENABLE TRIGGER tasks_notify_update");
      dsl.execute("ALTER TABLE object_replicas ENABLE TRIGGER object_replicas_notify");
      dsl.execute("ALTER TABLE object_replicas ENABLE TRIGGER object_replicas_notify_update");
    }
  }
}
