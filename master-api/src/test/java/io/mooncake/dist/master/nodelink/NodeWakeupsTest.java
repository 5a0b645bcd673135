package io.mooncake.dist.master.nodelink;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mooncake.dist.scheduler.store.ArtifactDeletions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NodeWakeupsTest {
  private final NodeWakeups wakeups = new NodeWakeups();

  @Test
  void aFirstPollOrAForeignTokenIsAnsweredAtOnce() throws Exception {
    assertTrue(wakeups.await("n1", "", 60_000).woken());
    assertTrue(wakeups.await("n1", "0123abcd.7", 60_000).woken());
    assertTrue(wakeups.await("n1", "garbage", 60_000).woken());
  }

  @Test
  void aPollWaitsForItsOwnNodeOnly() throws Exception {
    String token = wakeups.await("n1", "", 0).token();
    assertFalse(wakeups.await("n1", token, 50).woken(), "nothing happened");
    CompletableFuture<NodeWakeups.Answer> waiting =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return wakeups.await("n1", token, 60_000);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    wakeups.wake("n2");
    Thread.sleep(100);
    assertFalse(waiting.isDone(), "woken by another node's notification");
    wakeups.wake("n1");
    NodeWakeups.Answer a = waiting.get(10, TimeUnit.SECONDS);
    assertTrue(a.woken());
    assertNotEquals(token, a.token());
    assertFalse(wakeups.await("n1", a.token(), 0).woken());
  }

  @Test
  void aWakeUpBetweenTwoPollsIsNotLost() throws Exception {
    String token = wakeups.await("n1", "", 0).token();
    wakeups.wake("n1"); // arrives while the node is not waiting
    assertTrue(wakeups.await("n1", token, 60_000).woken());
  }

  @Test
  void wakeAllWakesEveryNodeThatPolled() throws Exception {
    String t1 = wakeups.await("n1", "", 0).token();
    String t2 = wakeups.await("n2", "", 0).token();
    wakeups.wakeAll();
    assertTrue(wakeups.await("n1", t1, 60_000).woken());
    assertTrue(wakeups.await("n2", t2, 60_000).woken());
  }

  @Test
  void aDeletionWakeUpSaysSoAndATaskWakeUpDoesNot() throws Exception {
    String token = wakeups.await("n1", "", 0).token();
    wakeups.wake("n1");
    NodeWakeups.Answer task = wakeups.await("n1", token, 60_000);
    assertTrue(task.woken());
    assertFalse(task.deletions(), "a task wake-up is no reason to poll deletions");
    wakeups.wake(ArtifactDeletions.NOTICE + "n2");
    assertFalse(wakeups.await("n1", task.token(), 50).woken(), "another node's deletion");
    wakeups.wake(ArtifactDeletions.NOTICE + "n1");
    NodeWakeups.Answer deletion = wakeups.await("n1", task.token(), 60_000);
    assertTrue(deletion.woken());
    assertTrue(deletion.deletions());
    wakeups.wake("n1");
    assertFalse(wakeups.await("n1", deletion.token(), 60_000).deletions(), "told once");
  }

  @Test
  void whatMayHaveBeenMissedIncludesDeletions() throws Exception {
    NodeWakeups.Answer first = wakeups.await("n1", "", 0);
    assertTrue(first.deletions(), "a first poll may have missed one");
    assertTrue(wakeups.await("n1", "0123abcd.7.1", 0).deletions(), "another master's token");
    wakeups.wakeAll();
    assertTrue(
        wakeups.await("n1", first.token(), 60_000).deletions(), "the LISTEN session was down");
  }
}
