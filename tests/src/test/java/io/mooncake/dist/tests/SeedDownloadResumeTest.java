package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.ProcessCluster;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seed SIGKILLed halfway through an HTTP download, then started again (issue 21): it keeps the
 * objects it had made durable, hashes them again, and asks the source only for the rest with a
 * Range request, so the source serves at most one object more than the model in all. A source that
 * ignores ranges is read again from the start and the job still completes.
 *
 * <p>The source sends the first request half the model and half an object, then holds the
 * connection until the test has killed the seed, so the kill lands at the same place every run.
 */
class SeedDownloadResumeTest {
  private static final long MIB = 1024 * 1024;
  private static final long SIZE = 64 * MIB;
  private static final long OBJECT = MIB;

  /** What the first request gets before the source stalls: 32 whole objects and half of one. */
  private static final long CUT = SIZE / 2 + OBJECT / 2;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aSeedKilledHalfwayResumesWithARangeAndTheSourceServesAtMostOneObjectMore() throws Exception {
    Source source = killedHalfway(true);
    assertEquals(
        List.of("-", "bytes=" + SIZE / 2 + "-"),
        source.ranges,
        "the restarted seed asked for the bytes after its 32 kept objects");
    assertEquals(List.of(200, 206), source.statuses);
    long served = source.served.get();
    assertTrue(served <= SIZE + OBJECT, "served " + served + " for a model of " + SIZE);
    assertTrue(served <= SIZE * 102 / 100, "served " + served + " > 1.02 x " + SIZE);
    assertEquals(SIZE + CUT - SIZE / 2, served);
    assertTrue(
        source.seedLog.contains("resuming at byte " + SIZE / 2 + " of " + SIZE), source.seedLog);
  }

  @Test
  void aSourceThatIgnoresRangesIsReadFromTheStartAfterTheRestart() throws Exception {
    Source source = killedHalfway(false);
    assertEquals(List.of("-", "bytes=" + SIZE / 2 + "-"), source.ranges);
    assertEquals(List.of(200, 200), source.statuses);
    assertEquals(CUT + SIZE, source.served.get());
    assertTrue(source.seedLog.contains("with the whole file"), source.seedLog);
  }

  /** What the source saw, and the restarted seed's log. */
  private record Source(
      List<String> ranges, List<Integer> statuses, AtomicLong served, String seedLog) {}

  /**
   * Runs a job (seed and one follower) whose HTTP source stalls after {@link #CUT} bytes of the
   * first request; SIGKILLs the seed once it has published the objects it received, starts it again
   * on the same data directory, and checks that the job completes with identical bytes.
   */
  private Source killedHalfway(boolean honorRanges) throws Exception {
    Path model = TestFiles.random(tmp.resolve("src/model.bin"), SIZE, 41);
    byte[] bytes = Files.readAllBytes(model);
    List<String> ranges = Collections.synchronizedList(new ArrayList<>());
    List<Integer> statuses = Collections.synchronizedList(new ArrayList<>());
    AtomicLong served = new AtomicLong();
    AtomicInteger requests = new AtomicInteger();
    CountDownLatch killed = new CountDownLatch(1);
    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    ExecutorService pool = Executors.newCachedThreadPool();
    http.setExecutor(pool);
    http.createContext(
        "/models/model.bin",
        exchange -> {
          try (exchange) {
            boolean first = requests.incrementAndGet() == 1;
            String range = exchange.getRequestHeaders().getFirst("Range");
            ranges.add(range == null ? "-" : range);
            long from = 0;
            if (honorRanges && range != null && range.matches("bytes=\\d+-")) {
              from = Long.parseLong(range.substring(6, range.length() - 1));
              exchange
                  .getResponseHeaders()
                  .add("Content-Range", "bytes " + from + "-" + (SIZE - 1) + "/" + SIZE);
            }
            int status = from > 0 ? 206 : 200;
            statuses.add(status);
            exchange.sendResponseHeaders(status, SIZE - from);
            send(exchange, bytes, from, first ? CUT : SIZE, served);
            if (first) {
              // Stall (a hang guard bounds it) until the seed is gone; the body stays short.
              killed.await(120, TimeUnit.SECONDS);
            }
          } catch (IOException | InterruptedException e) {
            // the seed went away mid-body: what it was sent is counted already
          }
        });
    http.start();
    String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/models/model.bin";
    int seedPort = TestFiles.freePort();
    int followerPort = TestFiles.freePort();
    String seed = "127.0.0.1:" + seedPort;
    String follower = "127.0.0.1:" + followerPort;
    try (Processes procs = new Processes(tmp.resolve("logs"))) {
      int httpPort = TestFiles.freePort();
      procs.start(
          "master",
          "mooncake_master",
          "--http-port",
          String.valueOf(httpPort),
          "--allow-any-source",
          "--db-url",
          pg.url(),
          "--scheduler-tick-ms",
          "200",
          "--no-auth");
      Api api = new Api("http://127.0.0.1:" + httpPort);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      startClient(procs, "seed", seedPort, tmp.resolve("seed"));
      startClient(procs, "follower", followerPort, tmp.resolve("follower"));
      String jobId = honorRanges ? "resume-range" : "resume-no-range";
      assertEquals(
          201,
          api.post(
                  "/api/v1/model-distribution/jobs",
                  Requests.job(
                      jobId,
                      "resumed",
                      "r1",
                      List.of(
                          new FileSpec(
                              "model.bin", SIZE, OBJECT, "sha256:" + TestFiles.sha256(model), url)),
                      seed,
                      List.of(seed, follower)))
              .status());

      // Every whole object the seed received is durable and published: kill it there.
      Processes.await(
          "the source to stall at " + CUT, Duration.ofSeconds(120), () -> served.get() >= CUT);
      Processes.await(
          "the seed to publish the 32 objects it received",
          Duration.ofSeconds(120),
          () ->
              pg.database().dsl().fetchCount(OBJECT_REPLICAS, OBJECT_REPLICAS.NODE_ID.eq(seed))
                  >= SIZE / 2 / OBJECT);
      procs.kill("seed");
      killed.countDown();
      startClient(procs, "seed-restarted", seedPort, tmp.resolve("seed"));

      JsonNode job =
          api.awaitJob(
              jobId,
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(180));
      String seedLog = procs.log("seed-restarted");
      assertEquals(
          "completed", job.get("status").asText(), job + "\n" + unfinishedTasks(jobId) + seedLog);
      for (JsonNode p : job.get("placements")) {
        assertTrue(
            TestFiles.sameBytes(model, Path.of(p.get("local_path").asText()).resolve("model.bin")),
            p.toString());
      }
      return new Source(List.copyOf(ranges), List.copyOf(statuses), served, seedLog);
    } finally {
      killed.countDown();
      http.stop(0);
      pool.shutdownNow();
    }
  }

  /** The job's tasks that have not succeeded, one line each, for a failure message. */
  private static String unfinishedTasks(String jobId) {
    StringBuilder out = new StringBuilder();
    pg.database()
        .dsl()
        .selectFrom(TASKS)
        .where(TASKS.JOB_ID.eq(jobId), TASKS.STATE.ne("succeeded"))
        .forEach(
            t ->
                out.append(
                    String.format(
                        "task %d %s %s on %s: %s, attempt %d of %d, run after %s, updated %s,"
                            + " source %s, last error %s%n",
                        t.getTaskId(),
                        t.getTaskType(),
                        t.getObjectId(),
                        t.getNodeId(),
                        t.getState(),
                        t.getAttempts(),
                        t.getMaxAttempts(),
                        t.getRunAfter(),
                        t.getUpdatedAt(),
                        t.getSourceNodeId(),
                        t.getLastError())));
    return out.toString();
  }

  /** Sends bytes {@code [from, to)} in 64 KiB writes, counting each once it is written. */
  private static void send(
      HttpExchange exchange, byte[] bytes, long from, long to, AtomicLong served)
      throws IOException {
    OutputStream out = exchange.getResponseBody();
    for (long pos = from; pos < to; ) {
      int n = (int) Math.min(64 * 1024, to - pos);
      out.write(bytes, (int) pos, n);
      served.addAndGet(n);
      pos += n;
    }
    out.flush();
  }

  private void startClient(Processes procs, String name, int port, Path dir) {
    new ProcessCluster(procs, pg).startClient(name, "127.0.0.1:" + port, dir);
  }
}
