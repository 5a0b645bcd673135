package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.JOBS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.db.jooq.tables.records.TasksRecord;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /api/v1/model-distribution/jobs/cancel}: a seeding job whose source never finishes, a
 * replicating job with staged placements, a completed job and an unknown one, with real workers. A
 * third target ("ghost") has no worker, so its copy tasks stay pending until the cancel.
 */
class JobCancelApiTest {
  private static final String JOBS_API = "/api/v1/model-distribution/jobs";
  private static final int CHUNK = 64 * 1024;
  private static final int SIZE = 4 * CHUNK;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  static String follower;
  static String ghost;
  static HttpServer http;

  /** Holds the rest of every /stalled/ download until the class ends. */
  static final CountDownLatch release = new CountDownLatch(1);

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
    follower = cluster.addNode(tmp.resolve("follower"));
    ghost = "127.0.0.1:" + TestFiles.freePort();
    byte[] model = new byte[SIZE];
    new Random(7).nextBytes(model);
    http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.setExecutor(Executors.newCachedThreadPool());
    // Sends the headers and the first object, then nothing until the test class ends: the seed
    // publishes that object (so copies get enqueued) and its download stays in flight.
    http.createContext(
        "/stalled/",
        ex -> {
          ex.sendResponseHeaders(200, model.length);
          try (var out = ex.getResponseBody()) {
            out.write(model, 0, CHUNK);
            out.flush();
            release.await(5, TimeUnit.MINUTES);
            out.write(model, CHUNK, model.length - CHUNK);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    http.start();
  }

  /**
   * Releases the stalled source and lets the canceled job's download end before the workers stop:
   * its lease-guarded writes still land on its own task row, and stopping mid-write would only log
   * errors about a closed pool.
   */
  @AfterAll
  static void stop() throws InterruptedException {
    release.countDown();
    try {
      await(
          "the released download of the canceled job to end",
          () -> tasks("cancel-seeding").stream().noneMatch(t -> t.getState().equals("processing")));
      assertEquals("canceled", api.job("cancel-seeding").json().get("status").asText());
    } finally {
      http.stop(0);
      cluster.close();
    }
  }

  private static String job(String jobId, String url, List<String> targets) {
    return Requests.job(
        jobId,
        "model-" + jobId,
        "r1",
        List.of(new FileSpec("m.bin", SIZE, CHUNK, "dummy", url)),
        seed,
        targets);
  }

  private static String fileSource(String name) {
    return TestFiles.random(tmp.resolve("src").resolve(name), SIZE, name.hashCode())
        .toUri()
        .toString();
  }

  private static Api.Reply cancel(String jobId) {
    return api.post(JOBS_API + "/cancel?job_id=" + jobId, "");
  }

  private static List<TasksRecord> tasks(String jobId) {
    return pg.database().dsl().selectFrom(TASKS).where(TASKS.JOB_ID.eq(jobId)).fetch();
  }

  private static long pending(String jobId) {
    return tasks(jobId).stream().filter(t -> t.getState().equals("pending")).count();
  }

  /** Polls {@code condition} until it holds; fails naming {@code what} after a hang guard. */
  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (!condition.getAsBoolean()) {
      assertTrue(Instant.now().isBefore(deadline), "timed out waiting for " + what);
      TimeUnit.MILLISECONDS.sleep(50);
    }
  }

  private static JsonNode placement(JsonNode snapshot, String node) {
    for (JsonNode p : snapshot.get("placements")) {
      if (p.get("node_id").asText().equals(node)) {
        return p;
      }
    }
    throw new AssertionError("no placement for " + node + " in " + snapshot);
  }

  private static List<String> stateAndError(JsonNode snapshot) {
    List<String> out = new java.util.ArrayList<>();
    snapshot
        .get("placements")
        .forEach(
            p ->
                out.add(
                    p.get("node_id").asText()
                        + " "
                        + p.get("state").asText()
                        + " "
                        + p.get("last_error").asText()));
    return out;
  }

  @Test
  void cancelingASeedingJobCancelsItsPendingTasksAndFailsEveryUnstagedPlacement() throws Exception {
    String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/stalled/m.bin";
    assertEquals(
        201,
        api.post(JOBS_API, job("cancel-seeding", url, List.of(seed, follower, ghost))).status());
    await(
        "a copy task queued for the ghost while the seed still downloads",
        () ->
            tasks("cancel-seeding").stream()
                .anyMatch(t -> t.getNodeId().equals(ghost) && t.getState().equals("pending")));
    TasksRecord download =
        tasks("cancel-seeding").stream()
            .filter(t -> t.getTaskType().equals("MODEL_DOWNLOAD"))
            .findFirst()
            .orElseThrow();
    assertEquals(
        "processing", download.getState(), "the stalled source keeps the download running");

    Api.Reply r = cancel("cancel-seeding");
    assertEquals(200, r.status(), String.valueOf(r.json()));
    assertEquals("canceled", r.json().get("status").asText());
    assertEquals("canceled by request", r.json().get("last_error").asText());
    for (JsonNode p : r.json().get("placements")) {
      assertEquals("failed", p.get("state").asText(), p.toString());
      assertEquals("canceled before staging", p.get("last_error").asText(), p.toString());
      assertFalse(p.get("checksum_verified").asBoolean());
    }
    assertEquals(0, pending("cancel-seeding"));
    assertTrue(
        tasks("cancel-seeding").stream()
            .anyMatch(t -> t.getNodeId().equals(ghost) && t.getState().equals("canceled")));
    assertNotNull(
        pg.database()
            .dsl()
            .select(JOBS.FINISHED_AT)
            .from(JOBS)
            .where(JOBS.JOB_ID.eq("cancel-seeding"))
            .fetchOne()
            .value1());
    TasksRecord running =
        pg.database()
            .dsl()
            .selectFrom(TASKS)
            .where(TASKS.TASK_ID.eq(download.getTaskId()))
            .fetchOne();
    assertEquals("processing", running.getState(), "a running task is not interrupted");
    assertEquals(running.getAttempts(), running.getMaxAttempts(), "but its attempt is its last");

    // The scheduler evaluates active jobs only: passes after the cancel change nothing.
    cluster.scheduler().pass();
    cluster.scheduler().pass();
    JsonNode after = api.job("cancel-seeding").json();
    assertEquals("canceled", after.get("status").asText());
    // States and errors stay as the cancel left them (bytes of a copy already running may still
    // land).
    assertEquals(stateAndError(r.json()), stateAndError(after));
    assertEquals(0, pending("cancel-seeding"));

    Api.Reply again = cancel("cancel-seeding");
    assertEquals(409, again.status());
    assertTrue(
        again.json().get("error_message").asText().contains("already canceled"),
        again.json().toString());
  }

  @Test
  void cancelingAReplicatingJobKeepsStagedPlacementsStaged() throws Exception {
    assertEquals(
        201,
        api.post(
                JOBS_API,
                job(
                    "cancel-replicating",
                    fileSource("replicating.bin"),
                    List.of(seed, follower, ghost)))
            .status());
    JsonNode before =
        api.awaitJob(
            "cancel-replicating",
            j ->
                placement(j, seed).get("state").asText().equals("staged")
                    && placement(j, follower).get("state").asText().equals("staged"),
            Duration.ofSeconds(60));
    assertEquals(
        "replicating",
        before.get("status").asText(),
        "the ghost never stages, so the job cannot complete");
    assertTrue(pending("cancel-replicating") > 0, "the ghost's copies wait in the queue");

    Api.Reply r = cancel("cancel-replicating");
    assertEquals(200, r.status(), String.valueOf(r.json()));
    assertEquals("canceled", r.json().get("status").asText());
    for (String node : List.of(seed, follower)) {
      JsonNode p = placement(r.json(), node);
      assertEquals("staged", p.get("state").asText(), p.toString());
      assertEquals(SIZE, p.get("staged_bytes").asLong());
      assertTrue(p.get("checksum_verified").asBoolean());
      assertTrue(p.get("local_path").isTextual());
      assertTrue(p.get("last_error").isNull());
    }
    JsonNode g = placement(r.json(), ghost);
    assertEquals("failed", g.get("state").asText());
    assertEquals("canceled before staging", g.get("last_error").asText());
    assertEquals(0, pending("cancel-replicating"));
  }

  @Test
  void cancelingACompletedJobIs409NamingItsState() {
    assertEquals(
        201,
        api.post(
                JOBS_API,
                job("cancel-completed", fileSource("completed.bin"), List.of(seed, follower)))
            .status());
    assertEquals("completed", api.awaitTerminal("cancel-completed").get("status").asText());
    Api.Reply r = cancel("cancel-completed");
    assertEquals(409, r.status());
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(409, r.json().get("error_code").asInt());
    assertEquals("job_id", r.json().get("field").asText());
    assertTrue(
        r.json().get("error_message").asText().contains("already completed"), r.json().toString());
    assertEquals("completed", api.job("cancel-completed").json().get("status").asText());
  }

  @Test
  void cancelingAnUnknownJobIs404AndWithoutJobIdIs400() {
    Api.Reply unknown = cancel("no-such-job");
    assertEquals(404, unknown.status());
    assertFalse(unknown.json().get("success").asBoolean());
    assertTrue(unknown.json().get("error_message").asText().contains("no-such-job"));
    Api.Reply missing = api.post(JOBS_API + "/cancel", "");
    assertEquals(400, missing.status());
    assertEquals("job_id", missing.json().get("field").asText());
  }
}
