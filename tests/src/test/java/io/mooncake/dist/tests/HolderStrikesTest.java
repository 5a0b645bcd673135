package io.mooncake.dist.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.domain.NodeInfo;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import io.mooncake.dist.scheduler.store.Replica;
import io.mooncake.dist.scheduler.store.ReplicaCatalog;
import io.mooncake.dist.tests.support.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A holder that keeps failing is marked (visible to operators) and tried after every other holder.
 */
class HolderStrikesTest {
  @RegisterExtension static final PostgresDatabase pg = new PostgresDatabase();

  private static final String FLAKY = "10.0.1.1:1";
  private static final String GOOD = "10.0.1.2:1";
  private static final String READER = "10.0.1.3:1";

  @Test
  void threeFailuresInARowPutAHolderLastUntilItServesWellOrTimePasses() {
    DSLContext dsl = pg.database().dsl();
    NodeRegistry nodes = new NodeRegistry(dsl);
    for (String n : List.of(FLAKY, GOOD, READER)) {
      nodes.register(n, n.split(":")[0], 1, "/data", "i-" + n);
    }
    for (String holder : List.of(FLAKY, GOOD)) {
      dsl.execute(
          "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset) "
              + "VALUES ('m/o1', ?, 8, 'sha256:aa', '/data/f', 0)",
          holder);
    }
    ReplicaCatalog replicas = new ReplicaCatalog(dsl);

    replicas.holderFailed(
        FLAKY, "copy of object m/o1 from " + FLAKY + " failed: peer closed the connection");
    replicas.holderFailed(FLAKY, "second");
    assertFalse(info(nodes, FLAKY).avoided(), "two failures are not yet a pattern");
    replicas.holderFailed(FLAKY, "digest mismatch for object m/o1 from " + FLAKY);

    NodeInfo flaky = info(nodes, FLAKY);
    assertTrue(flaky.avoided());
    assertEquals(3, flaky.serveFailures());
    assertEquals("digest mismatch for object m/o1 from " + FLAKY, flaky.serveLastError());
    for (int i = 0; i < 20; i++) { // ties would otherwise be broken at random
      assertEquals(
          List.of(GOOD, FLAKY),
          holders(replicas),
          "the marked holder is the last resort, not excluded");
    }

    // The mark fades once the last failure is older than the avoidance window...
    dsl.execute(
        "UPDATE nodes SET serve_failed_at = now() - interval '6 minutes' WHERE node_id = ?", FLAKY);
    assertFalse(info(nodes, FLAKY).avoided());
    // ...and a copy it serves well clears the strikes at once.
    dsl.execute("UPDATE nodes SET serve_failed_at = now() WHERE node_id = ?", FLAKY);
    assertTrue(info(nodes, FLAKY).avoided());
    replicas.holderServed(FLAKY);
    assertEquals(0, info(nodes, FLAKY).serveFailures());
    assertFalse(info(nodes, FLAKY).avoided());
    assertTrue(holders(replicas).containsAll(List.of(GOOD, FLAKY)));
  }

  /**
   * A lookup reads a bounded window of the holders, not all of them (issue 19: at a thousand
   * holders, reading and ranking each made every copy's lookup O(N)): the {@link
   * ReplicaCatalog#SAMPLE} holders after the asking node in node-id order, wrapping around (V015).
   * Askers all around the ring see different windows, which together cover every holder; an avoided
   * holder in a window is ranked last.
   */
  @Test
  void aLookupReadsABoundedWindowOfManyHoldersOnARing() {
    DSLContext dsl = pg.database().dsl();
    NodeRegistry nodes = new NodeRegistry(dsl);
    ReplicaCatalog replicas = new ReplicaCatalog(dsl);
    nodes.register(READER, "10.0.1.3", 1, "/data", "i-reader");
    int many = 3 * ReplicaCatalog.SAMPLE;
    for (int i = 0; i < many; i++) {
      String n = "10.0.2." + i + ":1";
      nodes.register(n, "10.0.2." + i, 1, "/data", "i-" + n);
      dsl.execute(
          "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset) "
              + "VALUES ('m/o2', ?, 8, 'sha256:bb', '/data/f', 0)",
          n);
    }
    // The ring in the database's own order (its collation, which the lookup's range scans use).
    List<String> ring =
        dsl.fetch("SELECT node_id FROM object_replicas WHERE object_id = 'm/o2' ORDER BY node_id")
            .getValues(0, String.class);
    String avoided = ring.get(1);
    for (int i = 0; i < 3; i++) {
      replicas.holderFailed(avoided, "failure " + i);
    }
    List<String> sample = window(replicas, READER);
    assertEquals(ReplicaCatalog.SAMPLE, sample.size());
    assertEquals(
        new java.util.HashSet<>(ring.subList(0, ReplicaCatalog.SAMPLE)),
        new java.util.HashSet<>(sample),
        "the holders after the asker, in node-id order");
    assertEquals(avoided, sample.get(sample.size() - 1), "an avoided holder is the last resort");

    // An asker near the end of the ring wraps around to its start, and skips itself.
    String late = ring.get(many - 3);
    java.util.Set<String> wrapped = new java.util.HashSet<>(ring.subList(many - 2, many));
    wrapped.addAll(ring.subList(0, ReplicaCatalog.SAMPLE - 2));
    assertEquals(wrapped, new java.util.HashSet<>(window(replicas, late)));

    java.util.Set<String> covered = new java.util.HashSet<>();
    for (String asker : ring) {
      covered.addAll(window(replicas, asker));
    }
    assertEquals(new java.util.HashSet<>(ring), covered, "some holder is in nobody's window");
  }

  private static List<String> window(ReplicaCatalog replicas, String asker) {
    return replicas
        .sources(null, "m/o2", "sha256:bb", asker, Duration.ofSeconds(10), Duration.ZERO)
        .holders()
        .stream()
        .map(Replica::nodeId)
        .toList();
  }

  /**
   * A holder whose heartbeat is late is still a source, after every live one (an overloaded control
   * plane makes heartbeats late, not nodes dead); one silent longer than {@link
   * ReplicaCatalog#LAPSED} is not.
   */
  @Test
  void aHolderWithALateHeartbeatComesAfterLiveOnesAndALongSilentOneNotAtAll() {
    DSLContext dsl = pg.database().dsl();
    NodeRegistry nodes = new NodeRegistry(dsl);
    ReplicaCatalog replicas = new ReplicaCatalog(dsl);
    String live = "10.0.3.1:1";
    String late = "10.0.3.2:1";
    String gone = "10.0.3.3:1";
    String reader = "10.0.3.4:1";
    for (String n : List.of(live, late, gone, reader)) {
      nodes.register(n, n.split(":")[0], 1, "/data", "i-" + n);
    }
    for (String holder : List.of(live, late, gone)) {
      dsl.execute(
          "INSERT INTO object_replicas (object_id, node_id, size_bytes, digest, file_path, file_offset) "
              + "VALUES ('m/o3', ?, 8, 'sha256:cc', '/data/f', 0)",
          holder);
    }
    dsl.execute(
        "UPDATE nodes SET heartbeat_at = now() - interval '1 minute' WHERE node_id = ?", late);
    dsl.execute(
        "UPDATE nodes SET heartbeat_at = now() - make_interval(secs => ?) WHERE node_id = ?",
        ReplicaCatalog.LAPSED.toSeconds() + 60,
        gone);
    for (int i = 0; i < 10; i++) { // ties would otherwise be broken at random
      assertEquals(
          List.of(live, late),
          replicas
              .sources(null, "m/o3", "sha256:cc", reader, Duration.ofSeconds(10), Duration.ZERO)
              .holders()
              .stream()
              .map(Replica::nodeId)
              .toList());
    }
  }

  private static List<String> holders(ReplicaCatalog replicas) {
    return replicas
        .sources(null, "m/o1", "sha256:aa", READER, Duration.ofSeconds(10), Duration.ZERO)
        .holders()
        .stream()
        .map(Replica::nodeId)
        .toList();
  }

  private static NodeInfo info(NodeRegistry nodes, String node) {
    return nodes.find(node).orElseThrow();
  }
}
