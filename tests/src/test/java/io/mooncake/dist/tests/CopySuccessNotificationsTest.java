package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.mooncake.dist.tests.support.PostgresDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Which writes wake the masters' schedulers ({@code mooncake_job}, V027): every NOTIFY serializes
 * its transaction's commit on one database-wide lock, so a copy's success notifies only when a pass
 * has something to do about it. A seed's new object and a release's first follower replica notify;
 * a follower's replica of an object another follower already held, and a copy's success, do not; a
 * failed copy and a finished whole-model task still notify their job.
 */
class CopySuccessNotificationsTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static DSLContext dsl() {
    return pg.database().dsl();
  }

  /** The {@code mooncake_job} payloads delivered within a short wait after the last write. */
  private static List<String> drain(Connection listener) throws Exception {
    List<String> got = new ArrayList<>();
    PGNotification[] batch;
    while ((batch = listener.unwrap(PGConnection.class).getNotifications(300)) != null
        && batch.length > 0) {
      for (PGNotification n : batch) {
        got.add(n.getParameter());
      }
    }
    return got;
  }

  private static long task(String job, String node, String type, String object) {
    return dsl()
        .fetchOne(
            """
            INSERT INTO tasks (job_id, node_id, task_type, object_id, state, lease_owner, bytes_total)
            VALUES (?, ?, ?, ?, 'processing', 'owner', 1) RETURNING task_id""",
            job,
            node,
            type,
            object)
        .get(0, Long.class);
  }

  private static void finish(long taskId, String state) {
    dsl()
        .execute(
            "UPDATE tasks SET state = ?, finished_at = now() WHERE task_id = ?", state, taskId);
  }

  private static void replica(String object, String node) {
    dsl()
        .execute(
            """
            INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset)
            VALUES (?, ?, 1, 'sha256:' || md5(?) || md5(?), '/d/m.bin', 0)""",
            object,
            node,
            object,
            object);
  }

  @Test
  void onlyWritesAPassActsOnWakeTheSchedulers() throws Exception {
    String job = "quiet";
    List<String> nodes = TaskCountsTest.createJob(dsl(), job);
    String seed = nodes.get(0);
    String f1 = nodes.get(1);
    String f2 = nodes.get(2);
    String o0 = job + "/m.bin/0";
    String o1 = job + "/m.bin/1";
    String o2 = job + "/m.bin/2";
    try (Connection listener = DriverManager.getConnection(pg.url());
        Statement s = listener.createStatement()) {
      s.execute("LISTEN mooncake_job");

      TaskCountsTest.publish(dsl(), job, seed, 0, 3);
      assertEquals(List.of(""), drain(listener), "the seed published objects not released yet");

      dsl()
          .execute(
              """
              INSERT INTO copy_releases (job_id, object_id, digest, follower_held)
              SELECT ?, object_id, digest, object_id = ? FROM object_replicas
               WHERE node_id = ? AND object_id IN (?, ?)""",
              job,
              o1,
              seed,
              o0,
              o1);
      replica(o1, f2);
      assertEquals(
          List.of(), drain(listener), "a follower replica of a release another follower held");
      replica(o0, f1);
      assertEquals(List.of(""), drain(listener), "the first follower replica of a waiting release");

      finish(task(job, f1, "REPLICA_COPY", o2), "succeeded");
      assertEquals(List.of(), drain(listener), "a copy's success");
      finish(task(job, f2, "REPLICA_COPY", o2), "failed");
      assertEquals(List.of(job), drain(listener), "a copy that failed for good");
      finish(task(job, f1, "MATERIALIZE", ""), "succeeded");
      assertEquals(List.of(job), drain(listener), "a whole-model task finished");
    }
  }
}
