package io.mooncake.dist.tests;

import static io.mooncake.dist.db.jooq.Tables.ARTIFACT_DELETIONS;
import static io.mooncake.dist.db.jooq.Tables.JOB_OBJECTS;
import static io.mooncake.dist.db.jooq.Tables.OBJECT_REPLICAS;
import static io.mooncake.dist.db.jooq.Tables.TASKS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.tests.support.Api;
import io.mooncake.dist.tests.support.InProcessCluster;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import io.mooncake.dist.tests.support.Requests;
import io.mooncake.dist.tests.support.Requests.FileSpec;
import io.mooncake.dist.tests.support.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code DELETE /api/v1/model-distribution/artifacts}: the nodes free the model directory and their
 * replica rows, a later job downloads again; refused while a job is active, 404 for an unknown
 * model, 400 naming a missing parameter.
 */
class ArtifactDeletionTest {
  private static final long MIB = 1024 * 1024;
  private static final String PATH = "/api/v1/model-distribution/artifacts";

  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  @TempDir static Path tmp;

  static InProcessCluster cluster;
  static Api api;
  static String seed;
  static String follower;

  @BeforeAll
  static void start() throws Exception {
    cluster = new InProcessCluster(pg.database());
    api = cluster.api();
    seed = cluster.addNode(tmp.resolve("seed"));
    follower = cluster.addNode(tmp.resolve("follower"));
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static Api.Reply delete(String query) {
    return api.delete(PATH + query);
  }

  private static String query(String modelId) {
    return "?model_id=" + modelId + "&revision=r1&format=bin&provider=local";
  }

  private static Path modelDir(String node, String modelId) {
    return tmp.resolve(node.equals(seed) ? "seed" : "follower")
        .resolve("models/local")
        .resolve(modelId)
        .resolve("r1/bin");
  }

  private static String body(
      String jobId, String modelId, String seedNode, List<String> targets, Path src) {
    return Requests.job(
        jobId,
        modelId,
        "r1",
        List.of(
            new FileSpec(
                "w.bin",
                2 * MIB + 777,
                MIB,
                "sha256:" + TestFiles.sha256(src),
                src.toUri().toString())),
        seedNode,
        targets);
  }

  private static void runToCompletion(String body, String jobId) {
    Api.Reply r = api.post("/api/v1/model-distribution/jobs", body);
    assertEquals(201, r.status(), String.valueOf(r.json()));
    JsonNode job = api.awaitTerminal(jobId);
    assertEquals("completed", job.get("status").asText(), job.toString());
  }

  private static int replicaRows(String jobId) {
    return pg.database()
        .dsl()
        .fetchCount(
            OBJECT_REPLICAS,
            OBJECT_REPLICAS.OBJECT_ID.in(
                pg.database()
                    .dsl()
                    .select(JOB_OBJECTS.OBJECT_ID)
                    .from(JOB_OBJECTS)
                    .where(JOB_OBJECTS.JOB_ID.eq(jobId))));
  }

  @Test
  void theNodesFreeTheModelAndALaterJobDownloadsItAgain() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/del/w.bin"), 2 * MIB + 777, 7);
    runToCompletion(body("del-1", "model-del", seed, List.of(seed, follower), src), "del-1");
    for (String node : List.of(seed, follower)) {
      assertTrue(TestFiles.sameBytes(src, modelDir(node, "model-del").resolve("w.bin")));
    }
    assertEquals(6, replicaRows("del-1"));

    Api.Reply r = delete(query("model-del"));
    assertEquals(202, r.status(), String.valueOf(r.json()));
    assertEquals("model-del", r.json().at("/model/model_id").asText());
    assertEquals("local", r.json().at("/model/provider").asText());
    assertEquals(
        List.of(seed, follower).stream().sorted().toList(),
        java.util.stream.StreamSupport.stream(r.json().get("nodes").spliterator(), false)
            .map(JsonNode::asText)
            .sorted()
            .toList());
    assertTrue(r.json().get("deletion_id").canConvertToLong(), r.json().toString());

    Processes.await(
        "both model directories, their replica rows and the deletions are gone/done",
        Duration.ofSeconds(30),
        () ->
            !Files.exists(modelDir(seed, "model-del"))
                && !Files.exists(modelDir(follower, "model-del"))
                && replicaRows("del-1") == 0
                && pg.database()
                        .dsl()
                        .fetchCount(
                            ARTIFACT_DELETIONS,
                            ARTIFACT_DELETIONS
                                .MODEL_ID
                                .eq("model-del")
                                .and(ARTIFACT_DELETIONS.STATE.eq("done")))
                    == 2);
    assertTrue(Files.isDirectory(tmp.resolve("seed/models")), "the data dir itself stays");

    runToCompletion(body("del-2", "model-del", seed, List.of(seed, follower), src), "del-2");
    assertEquals(
        1,
        pg.database()
            .dsl()
            .fetchCount(TASKS, TASKS.JOB_ID.eq("del-2").and(TASKS.TASK_TYPE.eq("MODEL_DOWNLOAD"))));
    for (String node : List.of(seed, follower)) {
      assertTrue(TestFiles.sameBytes(src, modelDir(node, "model-del").resolve("w.bin")));
    }
  }

  @Test
  void deletingAModelNeverDeletesAnotherWhoseIdExtendsItsPath() throws Exception {
    // The review's case: (local, demo-nest, r1, bin) and (local, demo-nest/r1, bin, bin). With the
    // model id's '/' as a directory separator the second model's directory sat inside the first's,
    // and deleting the first removed the second's files too.
    Path src = TestFiles.random(tmp.resolve("src/nest/w.bin"), 2 * MIB + 777, 11);
    runToCompletion(body("nest-outer", "demo-nest", seed, List.of(seed), src), "nest-outer");
    String innerBody =
        body("nest-inner", "demo-nest/r1", seed, List.of(seed), src)
            .replace("\"revision\":\"r1\"", "\"revision\":\"bin\"");
    runToCompletion(innerBody, "nest-inner");
    Path inner =
        Path.of(api.job("nest-inner").json().at("/placements/0/local_path").asText())
            .resolve("w.bin");
    Path outer = modelDir(seed, "demo-nest");
    assertFalse(inner.startsWith(outer), inner + " lies inside " + outer);
    assertTrue(TestFiles.sameBytes(src, inner));

    Api.Reply r = delete(query("demo-nest"));
    assertEquals(202, r.status(), String.valueOf(r.json()));
    Processes.await(
        "the outer model's directory is gone",
        Duration.ofSeconds(30),
        () -> !Files.exists(outer) && replicaRows("nest-outer") == 0);
    assertTrue(TestFiles.sameBytes(src, inner), "the other model's file must stay");
    assertEquals(3, replicaRows("nest-inner"));
  }

  @Test
  void anActiveJobOfTheModelRefusesTheDeletionAndNothingIsDeleted() throws Exception {
    Path src = TestFiles.random(tmp.resolve("src/busy/w.bin"), 2 * MIB + 777, 8);
    runToCompletion(body("busy-1", "model-busy", seed, List.of(seed, follower), src), "busy-1");
    // A seed that never runs: the job stays active.
    String ghost = "127.0.0.1:" + TestFiles.freePort();
    Api.Reply created =
        api.post(
            "/api/v1/model-distribution/jobs",
            body("busy-2", "model-busy", ghost, List.of(ghost, follower), src));
    assertEquals(201, created.status(), String.valueOf(created.json()));

    Api.Reply r = delete(query("model-busy"));
    assertEquals(409, r.status(), String.valueOf(r.json()));
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(409, r.json().get("error_code").asInt());
    assertTrue(r.json().get("error_message").asText().contains("busy-2"), r.json().toString());
    assertFalse(r.json().get("error_message").asText().contains("busy-1"), r.json().toString());
    assertEquals(
        0,
        pg.database()
            .dsl()
            .fetchCount(ARTIFACT_DELETIONS, ARTIFACT_DELETIONS.MODEL_ID.eq("model-busy")));
    // Nothing to wait for but time: give a deletion that should not happen the chance to.
    Thread.sleep(500);
    for (String node : List.of(seed, follower)) {
      assertTrue(TestFiles.sameBytes(src, modelDir(node, "model-busy").resolve("w.bin")));
    }
    assertEquals(
        200,
        api.post("/api/v1/model-distribution/jobs/cancel?job_id=busy-2", new byte[0]).status());
  }

  @Test
  void anUnknownModelIs404AndAMissingOrInvalidParameterIs400NamingIt() throws Exception {
    Api.Reply r = delete(query("never-distributed"));
    assertEquals(404, r.status(), String.valueOf(r.json()));
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(404, r.json().get("error_code").asInt());

    r = delete("?model_id=m&revision=r1&format=bin");
    assertEquals(400, r.status(), String.valueOf(r.json()));
    assertFalse(r.json().get("success").asBoolean());
    assertEquals(400, r.json().get("error_code").asInt());
    assertEquals("provider", r.json().get("field").asText());
    assertTrue(
        r.json().get("error_message").asText().startsWith("provider: "), r.json().toString());

    r = delete("?model_id=a/../b&revision=r1&format=bin&provider=local");
    assertEquals(400, r.status(), String.valueOf(r.json()));
    assertEquals("model_id", r.json().get("field").asText());
  }
}
