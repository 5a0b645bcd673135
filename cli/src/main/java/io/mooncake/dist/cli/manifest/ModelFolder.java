package io.mooncake.dist.cli.manifest;

import java.io.IOException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The files of a model folder that belong in its manifest: regular files, sorted by relative path.
 * Hidden files and folders ({@code .git}, {@code .cache}) are left out, as are links whose target
 * lies outside the folder: the seed reads every listed file, so a link to {@code /etc} must not
 * turn into a download. Links that stay inside are followed; a link cycle is skipped.
 */
public final class ModelFolder {
  private ModelFolder() {}

  /** What {@link #list} found, and what it left out on purpose, for the operator to see. */
  public record Listing(List<ModelFile> files, List<String> skipped) {}

  /**
   * Lists {@code root}'s files.
   *
   * @param exclude real paths never to list, e.g. the manifest being written into the folder itself
   */
  public static Listing list(Path root, Set<Path> exclude) throws IOException {
    Path base = root.toAbsolutePath().normalize();
    Path real = base.toRealPath();
    List<ModelFile> files = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    Files.walkFileTree(
        base,
        EnumSet.of(FileVisitOption.FOLLOW_LINKS),
        Integer.MAX_VALUE,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            if (dir.equals(base)) {
              return FileVisitResult.CONTINUE;
            }
            if (hidden(dir)) {
              return FileVisitResult.SKIP_SUBTREE;
            }
            if (!dir.toRealPath().startsWith(real)) {
              skipped.add(relative(base, dir) + "/ (link leaves the folder)");
              return FileVisitResult.SKIP_SUBTREE;
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            if (hidden(file)) {
              return FileVisitResult.CONTINUE;
            }
            // With FOLLOW_LINKS the attributes are the target's; a dangling link reports itself as
            // a link.
            if (!attrs.isRegularFile()) {
              skipped.add(
                  relative(base, file)
                      + (attrs.isSymbolicLink() ? " (dangling link)" : " (not a regular file)"));
              return FileVisitResult.CONTINUE;
            }
            Path target = file.toRealPath();
            if (!target.startsWith(real)) {
              skipped.add(relative(base, file) + " (link leaves the folder)");
            } else if (!exclude.contains(target)) {
              files.add(new ModelFile(relative(base, file), file));
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
            if (e instanceof FileSystemLoopException) {
              skipped.add(relative(base, file) + "/ (link cycle)");
              return FileVisitResult.CONTINUE;
            }
            throw e;
          }
        });
    files.sort(Comparator.comparing(ModelFile::relativePath));
    return new Listing(List.copyOf(files), List.copyOf(skipped));
  }

  private static boolean hidden(Path p) {
    Path name = p.getFileName();
    return name != null && name.toString().startsWith(".");
  }

  // Joined with '/' whatever the platform, because that is the manifest's separator.
  private static String relative(Path base, Path p) {
    StringBuilder sb = new StringBuilder();
    for (Path part : base.relativize(p)) {
      if (!sb.isEmpty()) {
        sb.append('/');
      }
      sb.append(part);
    }
    return sb.toString();
  }
}
