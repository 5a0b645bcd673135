package io.mooncake.dist.cli.manifest;

import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.Json;
import io.mooncake.dist.cli.SizeConverter;
import io.mooncake.dist.cli.format.ByteSizes;
import io.mooncake.dist.cli.format.ProgressBar;
import io.mooncake.dist.cli.format.Throughput;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code mooncake manifest build}: hashes a model folder and writes its RFC manifest. */
@Command(
    name = "build",
    sortOptions = false,
    description = {
      "Walk a model folder and write its manifest: every regular file (sorted; hidden files and links "
          + "leaving the folder are skipped) with its size, sha256, download URL and chunk layout.",
      "Object ids are <object-prefix>/<path>/chunk-00000, ...; the artifact key is <model-id>-<revision>.",
      "Progress for files that take a while to hash goes to stderr."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:manifest written",
      "1:a file could not be read (or changed while hashed)",
      "2:usage error: missing or empty folder, bad --chunk-size, --url-base, --format or -o (the message names it)"
    })
public final class BuildCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(2);

  @Spec CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "<model dir>",
      description = "The folder holding the model's files.")
  Path folder;

  @Option(
      names = "--model-id",
      required = true,
      paramLabel = "<id>",
      description = "Model id, e.g. meta-llama/Llama-3-8B.")
  String modelId;

  @Option(
      names = "--revision",
      required = true,
      paramLabel = "<rev>",
      description = "Model revision, e.g. a commit or r1.")
  String revision;

  @Option(
      names = "--format",
      paramLabel = "<format>",
      description =
          "Model format (default: guessed from extensions: safetensors, else gguf, else bin).")
  String format;

  @Option(
      names = "--provider",
      defaultValue = "local",
      paramLabel = "<provider>",
      description = "Model provider (default: ${DEFAULT-VALUE}).")
  String provider;

  @Option(
      names = "--chunk-size",
      defaultValue = "64MiB",
      converter = SizeConverter.class,
      paramLabel = "<size>",
      description =
          "Object size: bytes or with a binary unit, e.g. 64MiB, 16M, 1048576 (default: ${DEFAULT-VALUE}).")
  long chunkSize;

  @Option(
      names = "--url-base",
      paramLabel = "<url>",
      description =
          "file:// or http(s):// base the seed downloads from; each file's path is appended "
              + "(default: file://<absolute model dir>/).")
  String urlBase;

  @Option(
      names = "--object-prefix",
      paramLabel = "<prefix>",
      description = "Start of every object id (default: <model-id>/<revision>).")
  String objectPrefix;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "<file>",
      description = "Write the manifest here (default: stdout).")
  Path output;

  @Override
  public Integer call() {
    if (chunkSize <= 0) {
      throw usage("--chunk-size must be greater than 0, got " + chunkSize);
    }
    if (!Files.isDirectory(folder)) {
      throw usage(
          "<model dir> "
              + folder
              + (Files.exists(folder) ? " is not a folder" : " does not exist"));
    }
    PrintWriter err = spec.commandLine().getErr();
    ModelFolder.Listing listing = list();
    listing.skipped().forEach(s -> err.println("manifest: skipped " + s));
    if (listing.files().isEmpty()) {
      throw usage(
          "<model dir> "
              + folder
              + " has no files (hidden files and links leaving it are skipped)");
    }
    ManifestOptions options = options(listing.files());
    List<ManifestBuilder.HashedFile> hashed = hashAll(listing.files(), err);
    ManifestDocument manifest;
    try {
      manifest = ManifestBuilder.build(options, hashed);
    } catch (IllegalArgumentException e) {
      throw usage("--chunk-size: " + e.getMessage());
    }
    write(manifest);
    err.printf(
        "manifest: %s %s, %d files, %s, %d objects of %s%n",
        modelId,
        revision,
        hashed.size(),
        ByteSizes.format(manifest.totalSizeBytes()),
        manifest.files().stream().mapToInt(f -> f.chunkCount()).sum(),
        ByteSizes.format(chunkSize));
    err.flush();
    return ExitCode.OK;
  }

  private ModelFolder.Listing list() {
    try {
      // The manifest may be written into the folder itself; a rerun must not list the previous one.
      Set<Path> exclude =
          output != null && Files.exists(output) ? Set.of(output.toRealPath()) : Set.of();
      return ModelFolder.list(folder, exclude);
    } catch (IOException e) {
      throw new CliException(ExitCode.FAILED, "cannot list " + folder + ": " + e);
    }
  }

  private ManifestOptions options(List<ModelFile> files) {
    String fmt = format;
    if (fmt == null) {
      fmt =
          FormatGuess.fromPaths(files.stream().map(ModelFile::relativePath).toList())
              .orElseThrow(
                  () ->
                      usage(
                          "--format: no .safetensors, .gguf or .bin file to guess the format from; pass --format"));
    }
    UrlBase base;
    try {
      base = urlBase == null ? UrlBase.of(folder) : UrlBase.parse(urlBase);
    } catch (IllegalArgumentException e) {
      throw usage("--url-base " + e.getMessage());
    }
    String prefix =
        objectPrefix == null ? modelId + "/" + revision : objectPrefix.replaceAll("/+$", "");
    return new ManifestOptions(modelId, revision, fmt, provider, chunkSize, base, prefix);
  }

  private List<ManifestBuilder.HashedFile> hashAll(List<ModelFile> files, PrintWriter err) {
    FileHasher hasher =
        new FileHasher(
            System::nanoTime,
            PROGRESS_EVERY,
            (label, done, total, nanos) -> {
              err.printf(
                  "manifest: hashing %s  %s / %s  %s  %s%n",
                  label,
                  ByteSizes.format(done),
                  ByteSizes.format(total),
                  ProgressBar.percent(done, total),
                  Throughput.formatRate(Throughput.bytesPerSecond(0, done, nanos)));
              err.flush();
            });
    List<ManifestBuilder.HashedFile> hashed = new ArrayList<>(files.size());
    for (ModelFile f : files) {
      try {
        FileHasher.Hashed h = hasher.hash(f.path(), f.relativePath());
        hashed.add(new ManifestBuilder.HashedFile(f.relativePath(), h.sizeBytes(), h.sha256Hex()));
      } catch (IOException e) {
        throw new CliException(
            ExitCode.FAILED, "cannot read " + f.path() + ": " + e.getMessage(), e);
      }
    }
    return hashed;
  }

  private void write(ManifestDocument manifest) {
    String json;
    try {
      json = Json.PRETTY.writeValueAsString(ManifestJson.toJson(manifest)) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialize a JSON tree", e);
    }
    if (output == null) {
      spec.commandLine().getOut().print(json);
      spec.commandLine().getOut().flush();
      return;
    }
    try {
      Files.writeString(output, json, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw usage("-o " + output + ": cannot write: " + e);
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
