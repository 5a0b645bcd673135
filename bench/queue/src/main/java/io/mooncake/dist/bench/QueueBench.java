package io.mooncake.dist.bench;

import io.mooncake.dist.db.Database;
import java.util.Arrays;

/**
 * The queue benchmark's driver; {@code bench/queue.sh} calls one step at a time and combines the
 * {@code key=value} lines each step prints on stdout.
 *
 * <pre>
 * migrate    URL                                       apply the project's migrations
 * enqueue    URL JOB NODE N                            N ready REPLICA_COPY rows for NODE (as ScheduleJob builds them)
 * ours       URL NODE THREADS BATCH                    claim + succeedAll until NODE has nothing ready
 * dbsched    URL THREADS N                             N db-scheduler one-time executions, lock-and-fetch
 * latency    API URL SEED FOLLOWER JOBS DIR            tiny jobs through a real master and clients
 * bigjob     API URL MASTER_PID OBJECTS FOLLOWERS      the large-job enqueue, master RSS, snapshot GETs
 * </pre>
 */
public final class QueueBench {
  private QueueBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: QueueBench STEP URL ...; see the class comment");
      System.exit(2);
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    switch (args[0]) {
      case "migrate" -> {
        try (Database db = Database.open(rest[0], 2, "queue-bench")) {
          db.migrate();
        }
      }
      case "enqueue" -> Throughput.enqueue(rest[0], rest[1], rest[2], Integer.parseInt(rest[3]));
      case "ours" -> Throughput.ours(rest[0], rest[1], Integer.parseInt(rest[2]), Integer.parseInt(rest[3]));
      case "dbsched" -> Throughput.dbScheduler(rest[0], Integer.parseInt(rest[1]), Integer.parseInt(rest[2]));
      case "latency" -> WakeupLatency.run(rest[0], rest[1], rest[2], rest[3], Integer.parseInt(rest[4]), rest[5]);
      case "bigjob" -> BigJob.run(rest[0], rest[1], Long.parseLong(rest[2]), Integer.parseInt(rest[3]),
          Integer.parseInt(rest[4]));
      default -> {
        System.err.println("unknown step " + args[0]);
        System.exit(2);
      }
    }
    System.exit(0);
  }
}
