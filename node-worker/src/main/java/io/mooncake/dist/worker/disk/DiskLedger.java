package io.mooncake.dist.worker.disk;

import io.mooncake.dist.scheduler.domain.ModelPaths;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.store.NodeDisks.Usage;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a node's data directory holds per model, read from the disk itself ({@code
 * <data-dir>/models/<provider>/<model_id>/<revision>/<format>}, partial files included), and when
 * each model was last used here. Also what of it the database has not been told yet: a heartbeat
 * carries only the figures that changed since the last recorded one, so a fleet whose disks do not
 * change writes nothing per model.
 */
public final class DiskLedger {
  /** Use times are reported to this precision: a model served all day is written once a minute. */
  static final Duration USE_PRECISION = Duration.ofMinutes(1);

  private final Path models;
  private final Map<ModelRef, Instant> lastUsed = new ConcurrentHashMap<>();

  /** What the database holds for this node, as far as this client knows. */
  private final Map<ModelRef, Usage> reported = new ConcurrentHashMap<>();

  private final String nodeId;

  public DiskLedger(String nodeId, Path dataDir) {
    this.nodeId = nodeId;
    this.models = dataDir.resolve("models").normalize();
  }

  /** Starts from what the database recorded for this node (use times survive a restart). */
  public void loadReported(List<Usage> rows) {
    for (Usage u : rows) {
      reported.put(u.model(), u);
      lastUsed.merge(u.model(), u.lastUsed(), (a, b) -> a.isAfter(b) ? a : b);
    }
  }

  /** The model was staged, served or asked for by a job just now. */
  public void touch(ModelRef model) {
    lastUsed.put(model, Instant.now());
  }

  /** The model whose directory holds {@code file}, if it lies in one. */
  public Optional<ModelRef> modelOf(Path file) {
    Path p = file.normalize();
    if (!p.startsWith(models) || p.getNameCount() < models.getNameCount() + 4) {
      return Optional.empty();
    }
    Path rel = models.relativize(p);
    return Optional.of(
        new ModelRef(
            rel.getName(1).toString().replace("%2F", "/"),
            rel.getName(2).toString(),
            rel.getName(3).toString(),
            rel.getName(0).toString()));
  }

  /**
   * Bytes each model directory holds: the sizes of its regular files (links not followed), partial
   * ones at their full (sparse) size, so a model being copied counts as whole. Listing the model
   * directories is cheap; walking one is not (a sharded model has thousands of files), so a
   * directory is walked again only when its model was used since its last walk or that walk is
   * older than {@link #RESCAN}: what happens through this client is seen at the next heartbeat, a
   * change made from outside within {@code RESCAN}.
   */
  public Map<ModelRef, Long> scan() {
    Map<ModelRef, Long> held = new HashMap<>();
    Instant now = Instant.now();
    for (Path dir : modelDirs()) {
      modelOf(dir.resolve("x"))
          .ifPresent(
              m -> {
                Walked w = walked.get(m);
                if (w == null
                    || w.at().isBefore(now.minus(RESCAN))
                    || !lastUsed(m).isBefore(w.at())) {
                  w = new Walked(bytesUnder(dir, false), now);
                  walked.put(m, w);
                }
                held.put(m, w.bytes());
              });
    }
    walked.keySet().retainAll(held.keySet());
    return held;
  }

  /** How long a model's walked size is trusted when nothing used the model meanwhile. */
  static final Duration RESCAN = Duration.ofSeconds(30);

  private record Walked(long bytes, Instant at) {}

  private final Map<ModelRef, Walked> walked = new ConcurrentHashMap<>();

  /**
   * Bytes of one model's finished files now (its {@code .partial} files left out: they are created
   * sparse at full size, so their size says nothing of what they hold); 0 when absent.
   */
  public long finishedBytesOf(ModelRef model) {
    return bytesUnder(ModelPaths.modelDir(models.getParent(), model), true);
  }

  /** When {@code model} was last used here; the epoch when never (evicted first). */
  public Instant lastUsed(ModelRef model) {
    return lastUsed.getOrDefault(model, Instant.EPOCH);
  }

  /**
   * The figures the database does not have yet, given {@code held} (a fresh {@link #scan}): models
   * that appeared or changed size, whose use moved on by {@link #USE_PRECISION}, or that are gone
   * (negative bytes).
   */
  public List<Usage> changes(Map<ModelRef, Long> held) {
    List<Usage> out = new ArrayList<>();
    held.forEach(
        (m, bytes) -> {
          Instant used = lastUsed.computeIfAbsent(m, k -> Instant.now());
          Usage before = reported.get(m);
          if (before == null
              || before.bytes() != bytes
              || Duration.between(before.lastUsed(), used).compareTo(USE_PRECISION) >= 0) {
            out.add(new Usage(nodeId, m, bytes, used));
          }
        });
    reported.forEach(
        (m, u) -> {
          if (!held.containsKey(m)) {
            out.add(new Usage(nodeId, m, -1, u.lastUsed()));
          }
        });
    return out;
  }

  /** The database recorded {@code changes}. */
  public void recorded(List<Usage> changes) {
    for (Usage u : changes) {
      if (u.gone()) {
        reported.remove(u.model());
      } else {
        reported.put(u.model(), u);
      }
    }
  }

  /** The model was evicted: its row is gone from the database with the eviction's transaction. */
  public void evicted(ModelRef model) {
    reported.remove(model);
    lastUsed.remove(model);
    walked.remove(model);
  }

  private List<Path> modelDirs() {
    List<Path> dirs = new ArrayList<>();
    collect(models, 4, dirs);
    return dirs;
  }

  private static void collect(Path dir, int depth, List<Path> out) {
    if (depth == 0) {
      out.add(dir);
      return;
    }
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
      for (Path c : children) {
        if (Files.isDirectory(c, LinkOption.NOFOLLOW_LINKS)) {
          collect(c, depth - 1, out);
        }
      }
    } catch (IOException e) {
      // Vanished (evicted or deleted meanwhile) or unreadable: it holds nothing we can count.
    }
  }

  static long bytesUnder(Path dir, boolean finishedOnly) {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return 0;
    }
    long[] total = {0};
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              if (attrs.isRegularFile()
                  && !(finishedOnly && file.getFileName().toString().endsWith(".partial"))) {
                total[0] += attrs.size();
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (NoSuchFileException e) {
      return total[0];
    } catch (IOException e) {
      return total[0];
    }
    return total[0];
  }
}
