package io.mooncake.dist.worker.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReadaheadTest {
  private static final String MOUNTINFO =
      String.join(
          "\n",
          "22 27 0:21 / /proc rw,relatime - proc proc rw",
          "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
          "30 27 254:17 / /srv/models\\040fast rw,relatime - xfs /dev/vdb1 rw",
          "31 27 0:40 / /var/tmp/mem rw,relatime - tmpfs tmpfs rw",
          "");

  @TempDir Path sys;

  @Test
  void deviceIsTheLongestMountAboveThePath() {
    assertEquals(Optional.of("254:0"), Readahead.deviceOf(Path.of("/var/lib/mooncake"), MOUNTINFO));
    assertEquals(
        Optional.of("254:17"), Readahead.deviceOf(Path.of("/srv/models fast/node1"), MOUNTINFO));
    assertEquals(Optional.of("0:40"), Readahead.deviceOf(Path.of("/var/tmp/mem/x"), MOUNTINFO));
    // A sibling whose name only starts like a mount point is not under it.
    assertEquals(Optional.of("254:0"), Readahead.deviceOf(Path.of("/var/tmp/memory"), MOUNTINFO));
  }

  @Test
  void warnsAboveOneMebibyteNamingTheFileAndSaysNothingOtherwise() throws Exception {
    Path disk = device("devices/virtual/block/vda", "8192");
    Files.createDirectories(sys.resolve("dev/block"));
    Files.createSymbolicLink(sys.resolve("dev/block/254:0"), disk);
    Optional<String> w =
        Readahead.warning(Path.of("/var/lib/mooncake"), MOUNTINFO, sys.resolve("dev/block"));
    assertTrue(w.isPresent());
    assertTrue(
        w.get().contains("8192 KiB")
            && w.get().contains(disk.resolve("queue/read_ahead_kb").toString()),
        w.get());

    Files.writeString(disk.resolve("queue/read_ahead_kb"), "128\n");
    assertEquals(
        Optional.empty(),
        Readahead.warning(Path.of("/var/lib/mooncake"), MOUNTINFO, sys.resolve("dev/block")));
  }

  @Test
  void aPartitionUsesItsDisksQueueAndUnknownDevicesAreSilent() throws Exception {
    Path disk = device("devices/pci/block/vdb", "4096");
    Path partition = Files.createDirectories(disk.resolve("vdb1"));
    Files.createDirectories(sys.resolve("dev/block"));
    Files.createSymbolicLink(sys.resolve("dev/block/254:17"), partition);
    Optional<String> w =
        Readahead.warning(Path.of("/srv/models fast/n"), MOUNTINFO, sys.resolve("dev/block"));
    assertTrue(w.isPresent() && w.get().contains("4096 KiB"), String.valueOf(w));
    // tmpfs (0:40) has no block device entry.
    assertEquals(
        Optional.empty(),
        Readahead.warning(Path.of("/var/tmp/mem/n"), MOUNTINFO, sys.resolve("dev/block")));
  }

  private Path device(String path, String kib) throws Exception {
    Path d = Files.createDirectories(sys.resolve(path));
    Files.createDirectories(d.resolve("queue"));
    Files.writeString(d.resolve("queue/read_ahead_kb"), kib + "\n");
    return d;
  }
}
