package io.mooncake.dist.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ObjectReadersTest {
  @Test
  void eachObjectHasItsOwnLimitAndAReleaseMakesRoomForOneMore() {
    ObjectReaders readers = new ObjectReaders(2);
    assertTrue(readers.tryAcquire("a"));
    assertTrue(readers.tryAcquire("a"));
    assertFalse(readers.tryAcquire("a"), "a third reader of a");
    assertTrue(readers.tryAcquire("b"), "b has its own count");
    assertEquals(2, readers.readers("a"));
    readers.release("a");
    assertEquals(1, readers.readers("a"));
    assertTrue(readers.tryAcquire("a"));
    readers.release("a");
    readers.release("a");
    readers.release("b");
    assertEquals(0, readers.readers("a"));
    assertEquals(0, readers.readers("b"));
  }

  @Test
  void zeroMeansNoLimit() {
    ObjectReaders readers = new ObjectReaders(0);
    for (int i = 0; i < 1000; i++) {
      assertTrue(readers.tryAcquire("a"));
    }
    assertThrows(IllegalArgumentException.class, () -> new ObjectReaders(-1));
  }
}
