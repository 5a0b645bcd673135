package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.ops.Reports;
import io.mooncake.dist.tests.support.PostgresDatabase;
import io.mooncake.dist.tests.support.Processes;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.types.YearToSecond;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator reports over a database holding a known situation: every report's numbers are
 * checked, through Java and, for every file, through the real psql binary.
 *
 * <p>Three nodes (10.0.0.3 with a stale heartbeat); completed jobs of every size bucket with known
 * durations, two failed, one canceled, three active; tasks in every state with known bytes and
 * times; attempts with known errors. Times are offsets from the insert's now(), so an age reads as
 * that offset plus the few seconds the class takes to run.
 */
class OpsReportsTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static final String N1 = "10.0.0.1:7001";
  private static final String N2 = "10.0.0.2:7001";
  private static final String N3 = "10.0.0.3:7001";
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;

  private static final String FIXTURE =
      """
      INSERT INTO nodes (node_id, host, port, data_dir, instance_id, started_at, heartbeat_at)
      VALUES
          ('10.0.0.1:7001', '10.0.0.1', 7001, '/data', 'i1', now() - interval '1 day', now()),
          ('10.0.0.2:7001', '10.0.0.2', 7001, '/data', 'i2', now() - interval '1 day', now() - interval '1 second'),
          ('10.0.0.3:7001', '10.0.0.3', 7001, '/data', 'i3', now() - interval '1 day', now() - interval '5 minutes');

      INSERT INTO jobs (job_id, request_sha256, request, model_id, revision, format, provider, seed_node_id,
                        total_size_bytes, integrity, status, created_at, finished_at)
      SELECT v.id, 'sha-' || v.id, '{}', v.model, 'r1', 'safetensors', 'hf', v.seed,
             v.size, 'object_digests', v.status, now() - v.created_ago::interval,
             now() - v.created_ago::interval + v.ran_for::interval
      FROM (VALUES
          ('c1', 'llama',    '10.0.0.1:7001', 100 * 1048576::bigint,       'completed',   '5 hours',    '1 minute'),
          ('c2', 'llama',    '10.0.0.1:7001', 200 * 1048576::bigint,       'completed',   '5 hours',    '2 minutes'),
          ('c3', 'llama',    '10.0.0.1:7001', 300 * 1048576::bigint,       'completed',   '5 hours',    '3 minutes'),
          ('c4', 'qwen',     '10.0.0.2:7001', 400 * 1048576::bigint,       'completed',   '5 hours',    '4 minutes'),
          ('c5', 'qwen',     '10.0.0.2:7001', 500 * 1048576::bigint,       'completed',   '5 hours',    '5 minutes'),
          ('c6', 'mistral',  '10.0.0.1:7001', 1073741824::bigint,          'completed',   '5 hours',    '10 minutes'),
          ('c7', 'mistral',  '10.0.0.1:7001', 5 * 1073741824::bigint,      'completed',   '5 hours',    '30 minutes'),
          ('c8', 'deepseek', '10.0.0.2:7001', 200 * 1073741824::bigint,    'completed',   '5 hours',    '2 hours'),
          ('f1', 'mixtral',  '10.0.0.3:7001', 50 * 1073741824::bigint,     'failed',      '5 hours',    '20 minutes'),
          ('f2', 'phi',      '10.0.0.3:7001', 150 * 1048576::bigint,       'failed',      '5 hours',    '1 minute'),
          ('x1', 'phi',      '10.0.0.1:7001', 10 * 1048576::bigint,        'canceled',    '5 hours',    '1 minute'),
          ('a1', 'qwen',     '10.0.0.2:7001', 10 * 1073741824::bigint,     'replicating', '30 minutes', NULL),
          ('a2', 'gemma',    '10.0.0.3:7001', 30 * 1073741824::bigint,     'seeding',     '10 minutes', NULL),
          ('a3', 'tiny',     '10.0.0.2:7001', 500 * 1048576::bigint,       'planned',     '1 minute',   NULL)
      ) AS v (id, model, seed, size, status, created_ago, ran_for);

      INSERT INTO placements (job_id, node_id, ordinal, is_seed, state)
      VALUES
          ('a1', '10.0.0.2:7001', 0, true,  'staged'),
          ('a1', '10.0.0.1:7001', 1, false, 'acquiring'),
          ('a1', '10.0.0.3:7001', 2, false, 'failed'),
          ('a2', '10.0.0.3:7001', 0, true,  'acquiring'),
          ('a2', '10.0.0.1:7001', 1, false, 'planned'),
          ('a2', '10.0.0.2:7001', 2, false, 'planned'),
          ('a3', '10.0.0.2:7001', 0, true,  'planned');

      -- started_ago/ran_for give started_at and finished_at; run_after_in and lease_in are offsets from now().
      INSERT INTO tasks (job_id, node_id, task_type, object_id, payload, state, attempts, max_attempts,
                         bytes_total, bytes_done, created_at, updated_at, run_after, lease_owner, lease_expires_at,
                         started_at, finished_at, last_error)
      SELECT v.job, v.node, v.type, v.object, '{}', v.state, v.attempts, v.max_attempts,
             v.bytes_total, v.bytes_done, now() - v.created_ago::interval, now() - v.updated_ago::interval,
             now() + v.run_after_in::interval, v.lease_owner, now() + v.lease_in::interval,
             now() - v.started_ago::interval, now() - v.started_ago::interval + v.ran_for::interval, v.last_error
      FROM (VALUES
          ('c1', '10.0.0.1:7001', 'MODEL_VERIFY',   '',          'succeeded',  1, 1, 100 * 1048576::bigint,  100 * 1048576::bigint, '5 hours',    '5 hours',    '-5 hours',    NULL,               NULL,        '5 hours',              '30 seconds',   NULL),
          ('c2', '10.0.0.1:7001', 'MODEL_DOWNLOAD', '',          'succeeded',  1, 3, 200 * 1048576::bigint,  200 * 1048576::bigint, '5 hours',    '4 hours',    '-5 hours',    NULL,               NULL,        '4 hours',              '100 seconds',  NULL),
          ('c3', '10.0.0.1:7001', 'MODEL_VERIFY',   '',          'failed',     1, 1, 300 * 1048576::bigint,  0::bigint,             '5 hours',    '4 hours',    '-5 hours',    NULL,               NULL,        '4 hours 50 minutes',   '20 seconds',   'object llama/c3/0 of m.bin (bytes 0..1048576) does not match the published digest'),
          ('c3', '10.0.0.1:7001', 'MODEL_DOWNLOAD', '',          'succeeded',  1, 3, 300 * 1048576::bigint,  300 * 1048576::bigint, '4 hours',    '4 hours',    '-4 hours',    NULL,               NULL,        '4 hours 30 minutes',   '100 seconds',  NULL),
          ('c4', '10.0.0.2:7001', 'MODEL_VERIFY',   '',          'succeeded',  1, 1, 400 * 1048576::bigint,  400 * 1048576::bigint, '5 hours',    '5 hours',    '-5 hours',    NULL,               NULL,        '5 hours',              '30 seconds',   NULL),
          ('c5', '10.0.0.2:7001', 'MODEL_VERIFY',   '',          'succeeded',  1, 1, 500 * 1048576::bigint,  500 * 1048576::bigint, '5 hours',    '5 hours',    '-5 hours',    NULL,               NULL,        '5 hours',              '30 seconds',   NULL),
          ('c2', '10.0.0.2:7001', 'MATERIALIZE',    '',          'succeeded',  1, 3, 200 * 1048576::bigint,  200 * 1048576::bigint, '3 hours',    '3 hours',    '-3 hours',    NULL,               NULL,        '3 hours',              '10 seconds',   NULL),
          ('f1', '10.0.0.3:7001', 'MODEL_DOWNLOAD', '',          'failed',     3, 3, 50 * 1073741824::bigint, 0::bigint,            '5 hours',    '4 hours 45 minutes', '-4 hours 45 minutes', NULL,  NULL,        '4 hours 46 minutes',   '1 minute',     'HTTP 503 from https://hf.example/mixtral/m.bin'),
          ('a1', '10.0.0.2:7001', 'MODEL_DOWNLOAD', '',          'succeeded',  1, 3, 10 * 1073741824::bigint, 10 * 1073741824::bigint, '30 minutes', '8 minutes', '-30 minutes', NULL,            NULL,        '25 minutes',           '1024 seconds', NULL),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/0', 'succeeded',  1, 5, 1073741824::bigint,     1073741824::bigint,    '17 minutes', '8 minutes',  '-17 minutes', NULL,               NULL,        '10 minutes',           '100 seconds',  NULL),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/1', 'processing', 2, 5, 1073741824::bigint,     512 * 1048576::bigint, '17 minutes', '1 minute',   '-6 minutes',  '10.0.0.1:7001/i1', '10 minutes', '5 minutes',           NULL,           'lease expired: node 10.0.0.1:7001 stopped renewing it during attempt 1'),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/2', 'pending',    0, 5, 1073741824::bigint,     0::bigint,             '20 minutes', '10 minutes', '-12 minutes', NULL,               NULL,        NULL,                   NULL,           NULL),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/3', 'pending',    1, 5, 1073741824::bigint,     0::bigint,             '25 minutes', '10 seconds', '60 seconds',  NULL,               NULL,        '1 minute',             NULL,           'cannot fetch object qwen/a1/3 from 10.0.0.3:7001: read timed out'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 'failed',     5, 5, 1073741824::bigint,     256 * 1048576::bigint, '17 minutes', '15 minutes', '-16 minutes', NULL,               NULL,        '16 minutes',           '1 minute',     'disk full while writing /data/models/hf/qwen/r1/safetensors/m.bin.partial (No space left on device)'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/1', 'canceled',   0, 5, 1073741824::bigint,     0::bigint,             '17 minutes', '15 minutes', '-17 minutes', NULL,               NULL,        NULL,                   NULL,           NULL),
          ('a2', '10.0.0.3:7001', 'MODEL_DOWNLOAD', '',          'processing', 1, 3, 30 * 1073741824::bigint, 3 * 1073741824::bigint, '10 minutes', '3 minutes', '-10 minutes', '10.0.0.3:7001/i3', '-2 minutes', '9 minutes',           NULL,           NULL)
      ) AS v (job, node, type, object, state, attempts, max_attempts, bytes_total, bytes_done, created_ago, updated_ago,
              run_after_in, lease_owner, lease_in, started_ago, ran_for, last_error);

      -- Attempts refer to their task by (job, node, type, object); finished_ago is an offset back from now().
      INSERT INTO task_attempts (task_id, attempt, node_id, lease_owner, started_at, finished_at, outcome, error)
      SELECT t.task_id, v.attempt, t.node_id, t.node_id || '/i', now() - v.finished_ago::interval - interval '10 seconds',
             now() - v.finished_ago::interval, v.outcome, v.error
      FROM (VALUES
          ('c3', '10.0.0.1:7001', 'MODEL_VERIFY',   '',          1, 'failed',        '4 hours 49 minutes 40 seconds', 'object llama/c3/0 of m.bin (bytes 0..1048576) does not match the published digest'),
          ('f1', '10.0.0.3:7001', 'MODEL_DOWNLOAD', '',          1, 'retry',         '4 hours 50 minutes', 'HTTP 502 from https://hf.example/mixtral/m.bin'),
          ('f1', '10.0.0.3:7001', 'MODEL_DOWNLOAD', '',          2, 'retry',         '4 hours 48 minutes', 'HTTP 503 from https://hf.example/mixtral/m.bin'),
          ('f1', '10.0.0.3:7001', 'MODEL_DOWNLOAD', '',          3, 'failed',        '4 hours 45 minutes', 'HTTP 503 from https://hf.example/mixtral/m.bin'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 1, 'retry',         '40 minutes', 'cannot fetch object qwen/a1/0 from 10.0.0.2:7001: connection refused'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 2, 'retry',         '35 minutes', 'cannot fetch object qwen/a1/0 from 10.0.0.2:7001: connection refused'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 3, 'retry',         '30 minutes', 'cannot fetch object qwen/a1/0 from 10.0.0.2:7001: connection refused'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 4, 'retry',         '25 minutes', 'cannot fetch object qwen/a1/0 from 10.0.0.2:7001: connection refused'),
          ('a1', '10.0.0.3:7001', 'REPLICA_COPY',   'qwen/a1/0', 5, 'failed',        '15 minutes', 'disk full while writing /data/models/hf/qwen/r1/safetensors/m.bin.partial (No space left on device)'),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/3', 1, 'retry',         '10 seconds', 'cannot fetch object qwen/a1/3 from 10.0.0.3:7001: read timed out'),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/1', 1, 'lease_expired', '6 minutes',  'lease expired: node 10.0.0.1:7001 stopped renewing it during attempt 1'),
          ('a1', '10.0.0.1:7001', 'REPLICA_COPY',   'qwen/a1/0', 1, 'succeeded',     '8 minutes',  NULL)
      ) AS v (job, node, type, object, attempt, outcome, finished_ago, error)
      JOIN tasks AS t
          ON t.job_id = v.job
          AND t.node_id = v.node
          AND t.task_type = v.type
          AND t.object_id = v.object;
      """;

  @BeforeAll
  static void populate() throws SQLException {
    // One simple-protocol batch: a single implicit transaction, so every now() in it is the same
    // instant.
    try (Connection c = pg.database().dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(FIXTURE);
    }
  }

  static List<String> reportNames() {
    return Reports.names();
  }

  @Test
  void theReportsAreTheNineNamedFilesEachWithAHeaderThatDescribesIt() {
    assertEquals(
        List.of(
            "queue_depth",
            "stuck_tasks",
            "node_throughput",
            "failure_reasons",
            "job_durations",
            "seed_reuse",
            "inflight_jobs",
            "node_disks",
            "evictions"),
        Reports.names());
    for (String name : Reports.names()) {
      assertTrue(Reports.sql(name).startsWith("-- Report:  " + name + "\n"), name);
      assertTrue(
          Reports.sql(name).contains("psql \"$URL\" -f ops-sql/reports/" + name + ".sql"), name);
      assertFalse(Reports.describe(name).isBlank(), name);
      assertFalse(Reports.describe(name).contains("\n"), name);
    }
    assertTrue(Reports.describe("stuck_tasks").startsWith("Which tasks are stuck"));
  }

  @Test
  void anUnknownReportOrVariableIsRejectedWithTheValidChoices() {
    var report = assertThrows(IllegalArgumentException.class, () -> Reports.sql("queue_lengths"));
    assertTrue(report.getMessage().contains("'queue_lengths'"), report.getMessage());
    assertTrue(
        report.getMessage().contains(String.join(", ", Reports.names())), report.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Reports.run(pg.database().dsl(), "nope"));

    var variable =
        assertThrows(
            IllegalArgumentException.class,
            () -> Reports.run(pg.database().dsl(), "stuck_tasks", Map.of("stuck_for", "1 hour")));
    assertTrue(
        variable.getMessage().contains("'stuck_for'")
            && variable.getMessage().contains("stuck_after"),
        variable.getMessage());
  }

  @Test
  void queueDepthCountsTasksPerNodeTypeAndStateWithTheAgeOfTheOldestPendingTask() {
    Result<Record> r = Reports.run(pg.database().dsl(), "queue_depth");
    assertEquals(
        List.of(
            N1 + "|MODEL_DOWNLOAD|succeeded|2",
            N1 + "|MODEL_VERIFY|succeeded|1",
            N1 + "|MODEL_VERIFY|failed|1",
            N1 + "|REPLICA_COPY|pending|2",
            N1 + "|REPLICA_COPY|processing|1",
            N1 + "|REPLICA_COPY|succeeded|1",
            N2 + "|MODEL_DOWNLOAD|succeeded|1",
            N2 + "|MODEL_VERIFY|succeeded|2",
            N2 + "|MATERIALIZE|succeeded|1",
            N3 + "|MODEL_DOWNLOAD|processing|1",
            N3 + "|MODEL_DOWNLOAD|failed|1",
            N3 + "|REPLICA_COPY|failed|1",
            N3 + "|REPLICA_COPY|canceled|1"),
        rows(r, "node_id", "task_type", "state", "tasks"));
    for (Record row : r) {
      if ("pending".equals(row.get("state"))) {
        // The older pending copy was created 25 minutes ago; its retry 10 seconds ago does not
        // reset that.
        assertAbout(Duration.ofMinutes(25), seconds(row, "oldest_pending_age"));
      } else {
        assertNull(row.get("oldest_pending_age"), row.toString());
      }
    }
  }

  @Test
  void stuckTasksAreExpiredLeasesAndTasksClaimableForOverFiveMinutesButNotOnesInBackoff() {
    Result<Record> r = Reports.run(pg.database().dsl(), "stuck_tasks");
    assertEquals(
        List.of(
            "pending too long|" + N1 + "|true|a1|REPLICA_COPY|qwen/a1/2|pending|0|5|null|null",
            "lease expired|" + N3 + "|false|a2|MODEL_DOWNLOAD||processing|1|3|" + N3 + "/i3|null"),
        rows(
            r,
            "problem",
            "node_id",
            "node_live",
            "job_id",
            "task_type",
            "object_id",
            "state",
            "attempts",
            "max_attempts",
            "lease_owner",
            "last_error"));
    // Claimable since its last return to pending 10 minutes ago, created 20 minutes ago.
    assertAbout(Duration.ofMinutes(10), seconds(r.get(0), "overdue"));
    assertAbout(Duration.ofMinutes(20), seconds(r.get(0), "age"));
    assertAbout(Duration.ofMinutes(2), seconds(r.get(1), "overdue"));
    assertAbout(Duration.ofMinutes(10), seconds(r.get(1), "age"));
  }

  @Test
  void theStuckThresholdIsAVariableThatJavaCallersCanSet() {
    assertEquals(
        List.of("a2|MODEL_DOWNLOAD"),
        rows(
            Reports.run(pg.database().dsl(), "stuck_tasks", Map.of("stuck_after", "15 minutes")),
            "job_id",
            "task_type"));
    // Even with a one-second threshold the copy waiting out its retry backoff is not stuck.
    assertEquals(
        List.of("a1|qwen/a1/2", "a2|"),
        rows(
            Reports.run(pg.database().dsl(), "stuck_tasks", Map.of("stuck_after", "1 second")),
            "job_id",
            "object_id"));
  }

  @Test
  void psqlTakesTheStuckThresholdAsAVariableToo() throws Exception {
    PsqlRun run = psql("stuck_tasks", "-v", "stuck_after=15 minutes");
    assertEquals(0, run.exitCode(), run.output());
    assertTrue(
        run.output().contains("lease expired") && run.output().contains("(1 row)"), run.output());
    assertFalse(run.output().contains("pending too long"), run.output());
  }

  @Test
  void nodeThroughputSumsStagedBytesPerNodeAndMarksTheStaleNodeNotLive() throws SQLException {
    // Liveness is a 10-second window: refresh the live nodes so a slow run of this class cannot age
    // them out.
    try (Connection c = pg.database().dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "UPDATE nodes SET heartbeat_at = now() WHERE node_id IN ('" + N1 + "', '" + N2 + "')");
    }
    Result<Record> r = Reports.run(pg.database().dsl(), "node_throughput");
    assertEquals(
        List.of(
            // a1's 10 GiB download in 1024 s, 8 minutes ago; its MATERIALIZE and the verifies move
            // no bytes.
            N2 + "|true|" + 10 * GIB + "|" + 10 * GIB + "|4|10.00",
            // a 1 GiB copy this hour; 200 + 300 MiB downloads hours ago; 1524 MiB in 300 s.
            N1 + "|true|" + GIB + "|" + (1524 * MIB) + "|4|5.08",
            N3 + "|false|0|0|0|null"),
        rows(
            r,
            "node_id",
            "live",
            "bytes_last_hour",
            "bytes_all_time",
            "tasks_succeeded",
            "avg_mib_per_s"));
    assertAbout(Duration.ofMinutes(5), seconds(r.get(2), "heartbeat_age"));
  }

  @Test
  void failureReasonsGroupNormalizedMessagesRankedByFailedAttempts() {
    Result<Record> r = Reports.run(pg.database().dsl(), "failure_reasons");
    assertEquals(
        List.of(
            // Two objects, two source nodes, two causes after the colon: one reason.
            "cannot fetch object <path> from <node>|5|0|REPLICA_COPY",
            "HTTP 503 from <url>|2|1|MODEL_DOWNLOAD",
            // Tied with the digest mismatch on both counts; seen more recently.
            "disk full while writing <path> (No space left on device)|1|1|REPLICA_COPY",
            "object <path> of <file> (bytes <n>..<n>) does not match the published digest|1|1|MODEL_VERIFY",
            "lease expired|1|0|REPLICA_COPY",
            // The status code is kept: a 502 is not the 503 above.
            "HTTP 502 from <url>|1|0|MODEL_DOWNLOAD"),
        rows(r, "reason", "failed_attempts", "failed_tasks", "task_types"));
    assertEquals(
        "cannot fetch object qwen/a1/3 from 10.0.0.3:7001: read timed out",
        r.get(0).get("example_error"));
    assertEquals("HTTP 503 from https://hf.example/mixtral/m.bin", r.get(1).get("example_error"));
    assertEquals(
        "lease expired: node 10.0.0.1:7001 stopped renewing it during attempt 1",
        r.get(4).get("example_error"));
    assertAbout(
        Duration.ofSeconds(10),
        Duration.between(r.get(0).get("last_seen", OffsetDateTime.class), OffsetDateTime.now()));
    assertAbout(
        Duration.ofMinutes(6),
        Duration.between(r.get(4).get("last_seen", OffsetDateTime.class), OffsetDateTime.now()));
  }

  @Test
  void jobDurationsGivesPercentilesOfCompletedJobsAndFailedCountsPerSizeBucket() {
    Result<Record> r = Reports.run(pg.database().dsl(), "job_durations");
    // Exactly 1 GiB opens the second bucket; the canceled job counts nowhere.
    assertEquals(
        List.of("<1 GiB|5|1", "1-10 GiB|2|0", "10-100 GiB|0|1", ">=100 GiB|1|0"),
        rows(r, "size_bucket", "completed", "failed"));
    // 1..5 minutes: median 3 min, p95 interpolated 4 min 48 s. 10 and 30 minutes: 20 and 29
    // minutes.
    List<Duration> p50 = new ArrayList<>();
    List<Duration> p95 = new ArrayList<>();
    for (Record row : r) {
      p50.add(row.get("p50_duration") == null ? null : seconds(row, "p50_duration"));
      p95.add(row.get("p95_duration") == null ? null : seconds(row, "p95_duration"));
    }
    assertEquals(
        Arrays.asList(Duration.ofMinutes(3), Duration.ofMinutes(20), null, Duration.ofHours(2)),
        p50);
    assertEquals(
        Arrays.asList(Duration.ofSeconds(288), Duration.ofMinutes(29), null, Duration.ofHours(2)),
        p95);
  }

  @Test
  void seedReuseCountsVerifyOnlyJobsAsHitsOverallAndPerModel() {
    Result<Record> r = Reports.run(pg.database().dsl(), "seed_reuse");
    // c3's verify failed and fell back to a download: a miss. Jobs whose seed has no task are left
    // out.
    assertEquals(
        List.of(
            "(all models)|8|3|5|37.5",
            "llama|3|1|2|33.3",
            "qwen|3|2|1|66.7",
            "gemma|1|0|1|0.0",
            "mixtral|1|0|1|0.0"),
        rows(r, "model_id", "jobs", "hits", "misses", "hit_pct"));
  }

  @Test
  void inflightJobsListsTheBiggestActiveJobsWithStagedBytesAsTheSnapshotCountsThem() {
    Result<Record> r = Reports.run(pg.database().dsl(), "inflight_jobs");
    assertEquals(
        List.of(
            // The seed's running download has 3 of 30 GiB; two planned followers have nothing: 3 /
            // 90.
            "a2|gemma|seeding|" + 30 * GIB + "|3|0|0|" + 3 * GIB + "|3.3",
            // Staged seed 10 GiB + follower 1 GiB copied and 512 MiB in flight + failed follower's
            // 256 MiB, of 30 GiB.
            "a1|qwen|replicating|" + 10 * GIB + "|3|1|1|" + (11 * GIB + 768 * MIB) + "|39.2",
            "a3|tiny|planned|" + 500 * MIB + "|1|0|0|0|0.0"),
        rows(
            r,
            "job_id",
            "model_id",
            "status",
            "total_bytes",
            "targets",
            "placements_staged",
            "placements_failed",
            "bytes_staged",
            "staged_pct"));
    assertAbout(Duration.ofMinutes(10), seconds(r.get(0), "age"));
    assertAbout(Duration.ofMinutes(30), seconds(r.get(1), "age"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reportNames")
  void everyReportFileRunsUnderPlainPsqlAndPrintsItsColumns(String name) throws Exception {
    PsqlRun run = psql(name);
    assertEquals(0, run.exitCode(), run.output());
    String firstColumn = Reports.run(pg.database().dsl(), name).fields()[0].getName();
    assertTrue(run.output().contains(firstColumn), run.output());
    assertFalse(run.output().contains("ERROR"), run.output());
  }

  // ---- helpers

  /** Each row as its fields' values joined by '|', so a whole report compares in one assertion. */
  private static List<String> rows(Result<Record> result, String... fields) {
    return result.stream()
        .map(
            row ->
                Stream.of(fields)
                    .map(f -> String.valueOf(row.get(f)))
                    .collect(Collectors.joining("|")))
        .toList();
  }

  private static Duration seconds(Record row, String field) {
    Object value = row.get(field);
    if (value instanceof YearToSecond interval) {
      return interval.toDuration();
    }
    throw new AssertionError(
        field + " is not an interval: " + (value == null ? "null" : value.getClass().getName()));
  }

  /**
   * An age measured now: at least the fixture's offset, and at most a minute more (the time this
   * class runs).
   */
  private static void assertAbout(Duration expected, Duration actual) {
    assertTrue(
        actual.compareTo(expected.minusSeconds(1)) >= 0
            && actual.compareTo(expected.plusMinutes(1)) < 0,
        "expected about " + expected + ", got " + actual);
  }

  record PsqlRun(int exitCode, String output) {}

  private static PsqlRun psql(String report, String... extraArgs)
      throws IOException, InterruptedException {
    Path file = Processes.root().resolve("ops-sql/reports/" + report + ".sql");
    assertTrue(Files.isRegularFile(file), file + " is missing");
    List<String> command =
        new ArrayList<>(List.of("psql", libpqUrl(pg.url()), "-X", "-v", "ON_ERROR_STOP=1"));
    command.addAll(List.of(extraArgs));
    command.addAll(List.of("-f", file.toString()));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "psql did not finish");
    return new PsqlRun(p.exitValue(), output);
  }

  /**
   * jdbc:postgresql://host:port/db?user=u&amp;password=p as libpq wants it:
   * postgresql://u:p@host:port/db.
   */
  private static String libpqUrl(String jdbcUrl) {
    URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
    Map<String, String> params = new HashMap<>();
    if (uri.getRawQuery() != null) {
      for (String pair : uri.getRawQuery().split("&")) {
        int eq = pair.indexOf('=');
        if (eq > 0) {
          params.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
      }
    }
    String userInfo =
        params.containsKey("user")
            ? params.get("user")
                + (params.containsKey("password") ? ":" + params.get("password") : "")
                + "@"
            : "";
    return "postgresql://" + userInfo + uri.getRawAuthority() + uri.getRawPath();
  }
}
