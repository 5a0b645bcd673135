package io.mooncake.dist.cli.jobs;

import static io.mooncake.dist.cli.jobs.Snapshots.MIB;
import static io.mooncake.dist.cli.jobs.Snapshots.job;
import static io.mooncake.dist.cli.jobs.Snapshots.placement;
import static io.mooncake.dist.cli.support.FakeMaster.answer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mooncake.dist.cli.support.CliRun;
import io.mooncake.dist.cli.support.FakeMaster;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master-facing subcommands against a fake master: what they send, what they print, how they
 * exit.
 */
class MasterCommandsTest {
  private static final String JOBS = "/api/v1/model-distribution/jobs";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MANIFEST =
      """
      {"model_id": "demo-model", "revision": "r1", "format": "bin", "provider": "local",
       "total_size_bytes": 1048576, "file_manifest_version": "v1", "files": []}""";

  @TempDir Path dir;
  FakeMaster master;

  @BeforeEach
  void startMaster() throws IOException {
    master = new FakeMaster();
  }

  @AfterEach
  void stopMaster() {
    master.close();
  }

  private CliRun cli(String... args) {
    String[] all = new String[args.length + 2];
    all[0] = "--master";
    all[1] = master.url();
    System.arraycopy(args, 0, all, 2, args.length);
    return CliRun.of(all);
  }

  private Path manifestFile() throws IOException {
    return Files.writeString(dir.resolve("manifest.json"), MANIFEST);
  }

  private static String staged(String id, String status, String error) {
    return job(
        id,
        status,
        error,
        MIB,
        placement("127.0.0.1:25001", "seed", "staged", MIB, MIB, true, null),
        placement(
            "127.0.0.1:25002",
            "follower",
            status.equals("completed") ? "staged" : "failed",
            status.equals("completed") ? MIB : 0,
            MIB,
            status.equals("completed"),
            error));
  }

  @Test
  void submitPostsTheRfcCreateRequestAndPrintsTheJobId() throws Exception {
    master.on("POST", JOBS, answer(201, job("job-7", "planned", null, MIB)));

    CliRun run =
        cli(
            "submit",
            "--manifest",
            manifestFile().toString(),
            "--seed",
            "127.0.0.1:25001",
            "--targets",
            "127.0.0.1:25002,127.0.0.1:25003",
            "--job-id",
            "job-7");

    assertEquals(0, run.exitCode(), run.transcript());
    assertEquals("job-7\n", run.out());
    FakeMaster.Request req = master.requests().get(0);
    assertEquals("POST", req.method());
    assertEquals(JOBS, req.path());
    JsonNode body = JSON.readTree(req.body());
    assertEquals("job-7", body.get("job_id").asText());
    assertEquals("demo-model", body.get("model").get("model_id").asText());
    assertEquals(JSON.readTree(MANIFEST), body.get("manifest"));
    assertEquals("127.0.0.1:25001", body.get("seed_node_id").asText());
    assertEquals(
        JSON.readTree("[\"127.0.0.1:25001\", \"127.0.0.1:25002\", \"127.0.0.1:25003\"]"),
        body.get("target_nodes"));
    assertEquals(3, body.get("replica_policy").get("target_replica_count").asInt());
  }

  @Test
  void submitWithFallbackSeedsSendsThemInOrder() throws Exception {
    master.on("POST", JOBS, answer(201, job("job-8", "planned", null, MIB)));

    CliRun run =
        cli(
            "submit",
            "--manifest",
            manifestFile().toString(),
            "--seed",
            "127.0.0.1:25001",
            "--targets",
            "127.0.0.1:25002,127.0.0.1:25003",
            "--fallback-seeds",
            "127.0.0.1:25003,127.0.0.1:25002",
            "--job-id",
            "job-8");

    assertEquals(0, run.exitCode(), run.transcript());
    JsonNode body = JSON.readTree(master.requests().get(0).body());
    assertEquals(
        JSON.readTree("[\"127.0.0.1:25003\", \"127.0.0.1:25002\"]"), body.get("fallback_seeds"));
  }

  @Test
  void submitWithoutAJobIdSendsARandomUuidAndJsonPrintsTheSnapshot() throws Exception {
    master.on("POST", JOBS, answer(200, job("from-master", "replicating", null, MIB)));

    CliRun run =
        cli(
            "submit",
            "--manifest",
            manifestFile().toString(),
            "--seed",
            "a:1",
            "--targets",
            "a:1",
            "--json");

    assertEquals(0, run.exitCode(), run.transcript());
    assertEquals("replicating", JSON.readTree(run.out()).get("status").asText());
    UUID.fromString(JSON.readTree(master.requests().get(0).body()).get("job_id").asText());
  }

  @Test
  void aSubmitTheMasterRejectsExitsThreeWithItsMessage() throws Exception {
    master.on(
        "POST",
        JOBS,
        answer(
            409,
            """
        {"success": false, "error_code": 409, "error_message": "job_id 'job-7' already exists with a different request body", "field": "job_id"}"""));

    CliRun run =
        cli(
            "submit",
            "--manifest",
            manifestFile().toString(),
            "--seed",
            "a:1",
            "--targets",
            "b:1",
            "--job-id",
            "job-7");

    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(
        run.err().contains("already exists with a different request body"), run.transcript());
  }

  @Test
  void submitWithAMissingManifestIsAUsageErrorAndSendsNothing() {
    CliRun run =
        cli(
            "submit",
            "--manifest",
            dir.resolve("none.json").toString(),
            "--seed",
            "a:1",
            "--targets",
            "b:1");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("--manifest"), run.transcript());
    assertEquals(List.of(), master.requests());
  }

  @Test
  void statusPrintsTheJobAndItsPlacementsAndQueriesByJobId() {
    master.on("GET", JOBS, answer(200, staged("job-1", "completed", null)));

    CliRun run = cli("status", "job-1");

    assertEquals(0, run.exitCode(), run.transcript());
    assertTrue(run.out().contains("status      completed"), run.transcript());
    assertTrue(run.out().contains("127.0.0.1:25002  follower  staged"), run.transcript());
    assertEquals("job_id=job-1", master.requests().get(0).query());
  }

  @Test
  void statusOfAnUnknownJobExitsThree() {
    master.on(
        "GET",
        JOBS,
        answer(
            404,
            """
        {"success": false, "error_code": 404, "error_message": "no distribution job with job_id 'nope'", "field": "job_id"}"""));

    CliRun run = cli("status", "nope");

    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("no distribution job with job_id 'nope'"), run.transcript());
  }

  @Test
  void statusExitsZeroForAFailedJobToo() {
    master.on("GET", JOBS, answer(200, staged("job-1", "failed", "copy failed")));
    assertEquals(0, cli("status", "job-1").exitCode());
  }

  @Test
  void watchPollsUntilTheJobCompletesAndExitsZero() {
    master.on(
        "GET",
        JOBS,
        answer(
            200,
            job(
                "job-1",
                "replicating",
                null,
                MIB,
                placement("127.0.0.1:25001", "seed", "staged", MIB, MIB, true, null),
                placement("127.0.0.1:25002", "follower", "acquiring", MIB / 4, MIB, false, null))),
        answer(200, staged("job-1", "completed", null)));

    CliRun run = cli("watch", "job-1", "--interval", "1ms");

    assertEquals(0, run.exitCode(), run.transcript());
    assertTrue(run.out().contains("127.0.0.1:25002 acquiring  25.0%"), run.transcript());
    assertTrue(run.out().contains("job job-1 completed"), run.transcript());
    assertTrue(run.out().contains("job job-1 completed: 2/2 placements staged"), run.transcript());
    assertEquals(2, master.requests().size());
  }

  @Test
  void watchOfAFailedJobExitsOneAndPrintsTheErrors() {
    master.on(
        "GET", JOBS, answer(200, staged("job-1", "failed", "source file not found: /m/model.bin")));

    CliRun run = cli("watch", "job-1", "--interval", "1ms");

    assertEquals(1, run.exitCode(), run.transcript());
    assertTrue(run.out().contains("job job-1 failed after"), run.transcript());
    assertTrue(
        run.out()
            .contains("  127.0.0.1:25002 (follower) failed: source file not found: /m/model.bin"),
        run.transcript());
  }

  @Test
  void watchOfACanceledJobExitsOne() {
    master.on("GET", JOBS, answer(200, job("job-1", "canceled", "canceled by operator", MIB)));
    assertEquals(1, cli("watch", "job-1", "--interval", "1ms").exitCode());
  }

  @Test
  void watchOfAnUnknownJobExitsThree() {
    master.on(
        "GET", JOBS, answer(404, "{\"error_message\": \"no distribution job with job_id 'x'\"}"));
    assertEquals(3, cli("watch", "x").exitCode());
  }

  @Test
  void cancelPostsTheJobIdAndExitsZeroOnSuccess() {
    master.on("POST", JOBS + "/cancel", answer(200, job("job-1", "canceled", null, MIB)));

    CliRun run = cli("cancel", "job-1");

    assertEquals(0, run.exitCode(), run.transcript());
    FakeMaster.Request req = master.requests().get(0);
    assertEquals("POST", req.method());
    assertEquals("job_id=job-1", req.query());
    assertTrue(run.out().contains("status canceled"), run.transcript());
  }

  @Test
  void cancellingAFinishedJobIsAConflictExitingFiveWithTheMastersMessage() {
    master.on(
        "POST",
        JOBS + "/cancel",
        answer(
            409,
            """
        {"success": false, "error_code": 409, "error_message": "job 'job-1' is already completed", "field": "job_id"}"""));

    CliRun run = cli("cancel", "job-1");

    assertEquals(5, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("job 'job-1' is already completed"), run.transcript());
  }

  @Test
  void cancellingAnUnknownJobExitsThree() {
    master.on("POST", JOBS + "/cancel", answer(404, "{\"error_message\": \"no job\"}"));
    assertEquals(3, cli("cancel", "nope").exitCode());
  }

  private static String jobsPage(String next, String... ids) {
    StringBuilder jobs = new StringBuilder();
    for (String id : ids) {
      jobs.append(jobs.isEmpty() ? "" : ",")
          .append(
              """
          {"job_id": "%s", "status": "failed", "model": {"model_id": "m", "revision": "r1", "format": "bin",
           "provider": "local"}, "seed_node_id": "a:1", "total_size_bytes": %d, "target_count": 2,
           "placements_staged": 1, "placements_failed": 1, "created_at": "2025-12-01T05:00:02Z"}"""
                  .formatted(id, id.length() * 3145728L));
    }
    return "{\"jobs\": ["
        + jobs
        + "], \"next\": "
        + (next == null ? "null" : "\"" + next + "\"")
        + "}";
  }

  @Test
  void jobsListsTheFirstPageWithoutAJobIdAndSaysWhenThereIsMore() {
    master.on("GET", JOBS, answer(200, jobsPage("cursor-1", "j-22", "j-1")));

    CliRun run = cli("jobs");

    assertEquals(0, run.exitCode(), run.transcript());
    List<String> lines = run.out().lines().toList();
    assertEquals(3, lines.size(), run.transcript());
    assertTrue(lines.get(0).startsWith("JOB_ID  STATUS  MODEL"), run.transcript());
    assertTrue(
        lines.get(1).contains("12.0 MiB") && lines.get(2).contains("9.0 MiB"), run.transcript());
    assertEquals(
        lines.get(1).indexOf("MiB"), lines.get(2).indexOf("MiB"), "sizes are right-aligned");
    assertTrue(lines.get(1).contains("  1/2  "), run.transcript());
    assertEquals(null, master.requests().get(0).query());
    assertTrue(run.err().contains("more jobs exist"), run.transcript());
  }

  @Test
  void jobsWithALimitPassesStateAndFollowsPagesUntilItHasEnough() {
    master.on(
        "GET",
        JOBS,
        answer(200, jobsPage("cursor-1", "j-4", "j-3")),
        answer(200, jobsPage(null, "j-2", "j-1")));

    CliRun run = cli("jobs", "--state", "failed", "--limit", "3");

    assertEquals(0, run.exitCode(), run.transcript());
    assertEquals(4, run.out().lines().count(), run.transcript());
    assertEquals(
        List.of("state=failed&limit=3", "state=failed&limit=1&after=cursor-1"),
        master.requests().stream().map(FakeMaster.Request::query).toList());
  }

  @Test
  void jobsWithAStateTheMasterRejectsExitsThreeWithItsMessage() {
    master.on(
        "GET",
        JOBS,
        answer(
            400,
            """
        {"success": false, "error_code": 400, "error_message": "state: must be one of planned, seeding", "field": "state"}"""));
    CliRun run = cli("jobs", "--state", "done");
    assertEquals(3, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("state: must be one of"), run.transcript());
  }

  @Test
  void nodesListsEveryNodeWithLiveness() {
    master.on(
        "GET",
        "/api/v1/nodes",
        answer(
            200,
            """
        {"nodes": [{"node_id": "127.0.0.1:25001", "host": "127.0.0.1", "port": 25001, "data_dir": "/var/lib/mc/n1",
                    "instance_id": "i-1", "started_at": "2025-12-01T05:00:00Z", "heartbeat_at": "2025-12-01T05:01:00Z",
                    "live": true, "capacity_bytes": 107374182400, "free_bytes": 53687091200,
                    "held_bytes": 16106127360,
                    "models": [{"model": {"model_id": "qwen", "revision": "r2", "format": "bin", "provider": "hf"},
                                "bytes": 16106127360, "last_used_at": "2025-12-01T05:00:00Z", "pinned": true}]}]}"""));

    CliRun run = cli("nodes");

    assertEquals(0, run.exitCode(), run.transcript());
    List<String> lines = run.out().lines().toList();
    assertTrue(
        lines
            .get(0)
            .matches("NODE_ID +HOST +PORT +LIVE +CAPACITY +FREE +HELD +MODELS +HEARTBEAT_AT.*"),
        run.transcript());
    assertTrue(lines.get(1).startsWith("127.0.0.1:25001  127.0.0.1  25001  yes"), run.transcript());
    assertTrue(lines.get(1).contains("100.0 GiB"), run.transcript());
    assertTrue(lines.get(1).contains("qwen@r2 (pinned)"), run.transcript());
  }

  @Test
  void pinAndUnpinSendTheModelAndNodesAndPinsListsThem() {
    master.on(
        "POST",
        "/api/v1/model-distribution/pins",
        answer(200, "{\"nodes\": [\"10.0.0.1:7001\"], \"pinned\": true}"));
    master.on(
        "DELETE",
        "/api/v1/model-distribution/pins",
        answer(200, "{\"nodes\": [], \"pinned\": false}"));
    master.on(
        "GET",
        "/api/v1/model-distribution/pins",
        answer(
            200,
            """
        {"pins": [{"node_id": "10.0.0.1:7001", "pinned_by": "ops", "pinned_at": "2025-12-01T05:00:00Z",
                   "model": {"model_id": "qwen", "revision": "r2", "format": "bin", "provider": "hf"}}]}"""));
    String[] model = {
      "--model-id",
      "qwen",
      "--revision",
      "r2",
      "--format",
      "bin",
      "--provider",
      "hf",
      "--nodes",
      "10.0.0.1:7001"
    };
    CliRun pin = cli(concat("pin", model));
    assertEquals(0, pin.exitCode(), pin.transcript());
    assertEquals("pinned hf/qwen@r2 (bin) on 10.0.0.1:7001", pin.out().strip(), pin.transcript());
    FakeMaster.Request sent = master.requests().get(0);
    assertEquals("POST", sent.method());
    assertEquals(
        "model_id=qwen&revision=r2&format=bin&provider=hf&nodes=10.0.0.1%3A7001", sent.query());
    CliRun unpin = cli(concat("unpin", model));
    assertEquals(0, unpin.exitCode(), unpin.transcript());
    assertEquals("unpinned hf/qwen@r2 (bin) on no node", unpin.out().strip());
    CliRun pins = cli("pins");
    assertEquals(0, pins.exitCode(), pins.transcript());
    assertTrue(
        pins.out().lines().toList().get(1).startsWith("10.0.0.1:7001  hf"), pins.transcript());
    CliRun missing = cli("pin", "--model-id", "qwen");
    assertEquals(2, missing.exitCode(), missing.transcript());
  }

  private static String[] concat(String first, String... rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  @Test
  void aTokenFileIsSentAsBearerAndA401SaysWhatToSet() throws Exception {
    master.on("GET", "/api/v1/nodes", answer(200, "{\"nodes\": []}"));
    Path token = java.nio.file.Files.writeString(dir.resolve("token"), "tok-0123456789abcdef\n");

    CliRun run = cli("nodes", "--token-file", token.toString());

    assertEquals(0, run.exitCode(), run.transcript());
    assertEquals("Bearer tok-0123456789abcdef", master.requests().get(0).authorization());

    master.on(
        "GET",
        "/api/v1/nodes",
        answer(
            401,
            """
        {"success": false, "error_code": 401, "error_message": "authentication required"}"""));
    CliRun refused = cli("nodes");
    assertEquals(3, refused.exitCode(), refused.transcript());
    assertTrue(
        refused.err().contains("authentication required")
            && refused.err().contains("set MOONCAKE_API_TOKEN or pass --token-file"),
        refused.transcript());

    CliRun missing = cli("nodes", "--token-file", dir.resolve("none").toString());
    assertEquals(2, missing.exitCode(), missing.transcript());
    assertTrue(missing.err().contains("--token-file"), missing.transcript());
  }

  @Test
  void anUnreachableMasterExitsFourForEveryCommand() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String url = "http://127.0.0.1:" + closedPort;
    for (List<String> args :
        List.of(
            List.of("status", "j"),
            List.of("watch", "j"),
            List.of("cancel", "j"),
            List.of("jobs"),
            List.of("nodes"),
            List.of(
                "submit",
                "--manifest",
                manifestFile().toString(),
                "--seed",
                "a:1",
                "--targets",
                "b:1"))) {
      String[] all = new String[args.size() + 2];
      all[0] = "--master";
      all[1] = url;
      for (int i = 0; i < args.size(); i++) {
        all[i + 2] = args.get(i);
      }
      CliRun run = CliRun.of(all);
      assertEquals(4, run.exitCode(), args + "\n" + run.transcript());
      assertTrue(run.err().contains("cannot reach the master at " + url), run.transcript());
    }
  }

  @Test
  void aMasterAnswering503ExitsFour() {
    master.on("GET", JOBS, answer(503, "{\"error_message\": \"database unavailable\"}"));
    CliRun run = cli("status", "j");
    assertEquals(4, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("database unavailable"), run.transcript());
  }

  @Test
  void theGlobalMasterOptionMayAlsoFollowTheSubcommand() {
    master.on("GET", JOBS, answer(200, staged("job-1", "completed", null)));
    CliRun run = CliRun.of("status", "job-1", "--master", master.url());
    assertEquals(0, run.exitCode(), run.transcript());
    assertNotNull(master.requests().get(0));
  }

  @Test
  void aMasterUrlThatIsNotHttpIsAUsageError() {
    CliRun run = CliRun.of("--master", "ftp://x", "nodes");
    assertEquals(2, run.exitCode(), run.transcript());
    assertTrue(run.err().contains("--master"), run.transcript());
  }
}
