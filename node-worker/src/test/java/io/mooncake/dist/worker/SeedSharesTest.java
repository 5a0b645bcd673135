package io.mooncake.dist.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.store.JobShape;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SeedSharesTest {
  @Test
  void theShareIsTheObjectsOverTheFollowersRoundedUp() {
    assertEquals(5, new JobShape(32, 7).share(), "issue 20's 100 Mbit/s job");
    assertEquals(10, new JobShape(64, 7).share(), "its 400 Mbit/s job");
    assertEquals(4, new JobShape(28, 7).share());
    assertEquals(1, new JobShape(256, 1000).share(), "more followers than objects");
    assertEquals(1, new JobShape(0, 7).share());
    assertEquals(Integer.MAX_VALUE, new JobShape(32, 0).share(), "no follower known: no limit");
  }

  @Test
  void aJobWithMoreFollowersThanAPullerRelaysToHasNoShare() {
    int relayed = Transport.READERS_PER_OBJECT;
    assertEquals(5, SeedShares.share(new JobShape(32, 7)));
    assertEquals(
        new JobShape(256, relayed + 1).share(), SeedShares.share(new JobShape(256, relayed + 1)));
    assertEquals(Integer.MAX_VALUE, SeedShares.share(new JobShape(256, relayed + 2)));
    assertEquals(Integer.MAX_VALUE, SeedShares.share(new JobShape(256, 1000)));
    SeedShares shares = new SeedShares(job -> new JobShape(256, 1000));
    for (long task = 1; task <= 5; task++) {
      assertFalse(shares.holdBack("big", task));
      shares.pulled("big", task);
    }
  }

  @Test
  void aFollowerUnderItsShareNeverWaitsOneAtItWaitsOnlyForItsPatience() {
    long patience = SeedShares.PATIENCE.toNanos();
    assertFalse(SeedShares.holdBack(4, 5, 0));
    assertTrue(SeedShares.holdBack(5, 5, 0));
    assertTrue(SeedShares.holdBack(6, 5, patience - 1));
    assertFalse(
        SeedShares.holdBack(5, 5, patience),
        "an object nobody under its share takes still leaves the seed");
  }

  @Test
  void pullsAreCountedPerJobAndTheShapeIsReadOncePerJob() {
    List<String> read = new ArrayList<>();
    SeedShares shares =
        new SeedShares(
            job -> {
              read.add(job);
              return new JobShape(4, 2);
            });
    assertFalse(shares.holdBack("j1", 1));
    shares.pulled("j1", 1);
    assertFalse(shares.holdBack("j1", 2));
    shares.pulled("j1", 2);
    assertTrue(shares.holdBack("j1", 3), "two of four objects with two followers: its share");
    assertTrue(shares.holdBack("j1", 3), "still waiting, within its patience");
    assertFalse(shares.holdBack("j2", 3), "another job has its own count");
    assertEquals(List.of("j1", "j2"), read);
    shares.forget("j1");
    assertEquals(0, shares.pulled("j1"));
    assertFalse(shares.holdBack("j1", 3), "a forgotten job starts over");
    assertEquals(List.of("j1", "j2", "j1"), read);
  }

  @Test
  void whileOneCopyReadsTheShapeTheOthersGoByNoShareWithoutReadingIt() throws Exception {
    java.util.concurrent.CountDownLatch inRead = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger reads =
        new java.util.concurrent.atomic.AtomicInteger();
    SeedShares shares =
        new SeedShares(
            job -> {
              reads.incrementAndGet();
              inRead.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
              return new JobShape(1, 2);
            });
    Thread first = new Thread(() -> shares.pulled("j1", 1));
    first.start();
    inRead.await();
    assertFalse(shares.holdBack("j1", 2), "no share while another copy reads it");
    assertEquals(1, reads.get(), "and no second read");
    release.countDown();
    first.join();
    assertTrue(shares.holdBack("j1", 2), "one of one object pulled: its share");
    assertEquals(1, reads.get());
  }

  @Test
  void aJobWhoseShapeCannotBeReadHasNoShareAndIsAskedAgainOnlyAfterAWhile() {
    int[] calls = {0};
    long[] now = {0};
    SeedShares shares =
        new SeedShares(
            job -> {
              if (calls[0]++ == 0) {
                throw new IllegalStateException("database away");
              }
              return new JobShape(1, 1);
            },
            () -> now[0]);
    assertFalse(shares.holdBack("j1", 1));
    shares.pulled("j1", 1);
    assertFalse(shares.holdBack("j1", 2), "no share while the read is not retried");
    assertEquals(1, calls[0], "the node's other copies do not ask the database again at once");
    now[0] += SeedShares.RETRY_AFTER.toNanos();
    shares.pulled("j1", 2);
    assertEquals(2, calls[0], "read again after the wait");
    assertTrue(shares.holdBack("j1", 3), "the pull after the read counts: one of one object");
    shares.forget("j1");
    assertFalse(shares.holdBack("j1", 3), "a forgotten job starts over");
    assertEquals(3, calls[0]);
  }
}
