package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mooncake.dist.scheduler.domain.Json;
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
 * A seed SIGKILLed mid-download and never restarted (issue 21, seed failover): with {@code
 * fallback_seeds} the first fallback takes over once the seed is gone past the node grace, reads
 * from the source only what no live node holds, and the job completes with identical bytes on the
 * two surviving nodes; without the field the RFC's rule stands and the job fails.
 *
 * <p>Real master and three real clients; an HTTP source that sends the first request (the seed's)
 * half the model and half an object, then holds the connection until the test has killed the seed,
 * so the kill lands at the same place every run.
 */
class SeedFailoverTest {
  private static final long MIB = 1024 * 1024;
  private static final long SIZE = 32 * MIB;
  private static final long OBJECT = MIB;

  /** What the seed gets before the source stalls: 16 whole objects and half of one. */
  private static final long CUT = SIZE / 2 + OBJECT / 2;

  private static final int GRACE_SECONDS = 5;

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir Path tmp;

  @Test
  void aSeedKilledMidDownloadIsReplacedByItsFallbackAndTheJobCompletes() throws Exception {
    Run run = seedKilled("failover", true);
    JsonNode job = run.job();
    assertEquals("completed", job.get("status").asText(), job + "\n" + run.newSeedLog());
    assertTrue(job.get("last_error").isNull(), job.toString());
    assertEquals(run.f1(), job.get("seed_node_id").asText());
    assertEquals(List.of(run.seed(), run.f1()), strings(job.get("seed_history")));
    assertEquals(List.of(run.f1(), run.f2()), strings(job.get("fallback_seeds")));

    JsonNode former = job.get("placements").get(0);
    assertEquals(run.seed(), former.get("node_id").asText());
    assertEquals("former_seed", former.get("role").asText());
    assertEquals("failed", former.get("state").asText());
    assertTrue(
        former.get("last_error").asText().contains("gone for more than " + GRACE_SECONDS + " s"),
        former.toString());
    List<String> roles = new ArrayList<>();
    for (JsonNode p : job.get("placements")) {
      roles.add(p.get("role").asText());
      if (p == former) {
        continue;
      }
      assertEquals("staged", p.get("state").asText(), p.toString());
      assertTrue(p.get("checksum_verified").asBoolean(), p.toString());
      assertTrue(
          TestFiles.sameBytes(
              run.model(), Path.of(p.get("local_path").asText()).resolve("model.bin")),
          p.toString());
    }
    assertEquals(List.of("former_seed", "seed", "follower"), roles);

    // Both followers held the 16 objects the seed had published: the new seed asked the source
    // only for the other 16, with one range request.
    assertEquals(List.of("-", "bytes=" + SIZE / 2 + "-"), run.ranges());
    assertEquals(CUT + SIZE / 2, run.served().get());
    assertTrue(
        run.newSeedLog().contains("fetching bytes " + SIZE / 2 + "-" + (SIZE - 1)),
        run.newSeedLog());
  }

  @Test
  void withoutFallbackSeedsTheSeedsFailureFailsTheJobAsTheRfcSays() throws Exception {
    Run run = seedKilled("no-failover", false);
    JsonNode job = run.job();
    assertEquals("failed", job.get("status").asText(), job.toString());
    assertEquals(
        "seed "
            + run.seed()
            + " failed: node "
            + run.seed()
            + " gone for more than "
            + GRACE_SECONDS
            + " s",
        job.get("last_error").asText());
    assertEquals(List.of(run.seed()), strings(job.get("seed_history")));
    assertEquals(List.of(), strings(job.get("fallback_seeds")));
    for (JsonNode p : job.get("placements")) {
      assertEquals("failed", p.get("state").asText(), p.toString());
    }
    assertEquals(List.of("-"), run.ranges(), "nobody else read the source");
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private record Run(
      JsonNode job,
      String seed,
      String f1,
      String f2,
      Path model,
      List<String> ranges,
      AtomicLong served,
      String newSeedLog) {}

  /**
   * Runs a job on a seed and two followers whose HTTP source stalls after {@link #CUT} bytes of the
   * first request; once both followers hold every object the seed published, SIGKILLs the seed for
   * good and waits for the job to end.
   */
  private Run seedKilled(String jobId, boolean fallbacks) throws Exception {
    Path model = TestFiles.random(tmp.resolve("src/model.bin"), SIZE, 43);
    byte[] bytes = Files.readAllBytes(model);
    List<String> ranges = Collections.synchronizedList(new ArrayList<>());
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
            if (range != null && range.matches("bytes=\\d+-")) {
              from = Long.parseLong(range.substring(6, range.length() - 1));
              exchange
                  .getResponseHeaders()
                  .add("Content-Range", "bytes " + from + "-" + (SIZE - 1) + "/" + SIZE);
            }
            exchange.sendResponseHeaders(from > 0 ? 206 : 200, SIZE - from);
            send(exchange, bytes, from, first ? CUT : SIZE, served);
            if (first) {
              // Stall (a hang guard bounds it) until the seed is gone; the body stays short.
              killed.await(180, TimeUnit.SECONDS);
            }
          } catch (IOException | InterruptedException e) {
            // the reader went away mid-body: what it was sent is counted already
          }
        });
    http.start();
    String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/models/model.bin";
    int[] ports = {TestFiles.freePort(), TestFiles.freePort(), TestFiles.freePort()};
    String seed = "127.0.0.1:" + ports[0];
    String f1 = "127.0.0.1:" + ports[1];
    String f2 = "127.0.0.1:" + ports[2];
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
          "--node-grace-seconds",
          String.valueOf(GRACE_SECONDS),
          "--no-auth");
      Api api = new Api("http://127.0.0.1:" + httpPort);
      Processes.await(
          "master /health", Duration.ofSeconds(60), () -> api.get("/health").status() == 200);
      startClient(procs, "seed", ports[0]);
      startClient(procs, "f1", ports[1]);
      startClient(procs, "f2", ports[2]);
      // A target that has not heartbeated within the grace of the job's creation never came up.
      Processes.await(
          "3 live nodes",
          Duration.ofSeconds(120),
          () -> {
            int live = 0;
            for (JsonNode node : api.get("/api/v1/nodes").json().get("nodes")) {
              live += node.get("live").asBoolean() ? 1 : 0;
            }
            return live >= 3;
          });
      ObjectNode body =
          (ObjectNode)
              Json.MAPPER.readTree(
                  Requests.job(
                      jobId,
                      jobId,
                      "r1",
                      List.of(
                          new FileSpec(
                              "model.bin", SIZE, OBJECT, "sha256:" + TestFiles.sha256(model), url)),
                      seed,
                      List.of(seed, f1, f2)));
      if (fallbacks) {
        ArrayNode list = body.putArray("fallback_seeds");
        list.add(f1).add(f2);
      }
      assertEquals(201, api.post("/api/v1/model-distribution/jobs", Json.write(body)).status());

      long published = SIZE / 2 / OBJECT;
      Processes.await(
          "the source to stall at " + CUT, Duration.ofSeconds(180), () -> served.get() >= CUT);
      Processes.await(
          "both followers to hold the " + published + " objects the seed published",
          Duration.ofSeconds(180),
          () ->
              replicas(f1) >= published
                  && replicas(f2) >= published
                  && replicas(seed) >= published);
      procs.kill("seed");
      killed.countDown();

      JsonNode job =
          api.awaitJob(
              jobId,
              j -> j.get("status").asText().matches("completed|failed"),
              Duration.ofSeconds(240));
      return new Run(job, seed, f1, f2, model, List.copyOf(ranges), served, procs.log("f1"));
    } finally {
      killed.countDown();
      http.stop(0);
      pool.shutdownNow();
    }
  }

  private static int replicas(String node) {
    return pg.database().dsl().fetchCount(OBJECT_REPLICAS, OBJECT_REPLICAS.NODE_ID.eq(node));
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

  private void startClient(Processes procs, String name, int port) {
    new ProcessCluster(procs, pg).startClient(name, "127.0.0.1:" + port, tmp.resolve(name));
  }
}
