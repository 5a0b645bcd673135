package io.mooncake.dist.cli.manifest;

import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.Json;
import io.mooncake.dist.cli.SizeConverter;
import io.mooncake.dist.cli.format.ByteSizes;
import io.mooncake.dist.cli.format.ProgressBar;
import io.mooncake.dist.cli.format.Throughput;
import io.mooncake.dist.cli.manifest.hub.HubClient;
import io.mooncake.dist.cli.manifest.hub.HubException;
import io.mooncake.dist.cli.manifest.hub.HubModel;
import io.mooncake.dist.cli.manifest.hub.HubRef;
import io.mooncake.dist.cli.manifest.hub.HubToken;
import io.mooncake.dist.cli.manifest.hub.SourceCredentialLine;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code mooncake manifest build}: hashes a model folder, or lists a Hugging Face model at a pinned
 * commit, and writes its RFC manifest.
 */
@Command(
    name = "build",
    sortOptions = false,
    description = {
      "Walk a model folder and write its manifest: every regular file (sorted; hidden files and links "
          + "leaving the folder are skipped) with its size, sha256, download URL and chunk layout.",
      "Or, given hf://<org>/<name>[@<revision>], ask the Hugging Face hub ($HF_ENDPOINT) for the "
          + "files of that revision, pinned to its commit: sizes and LFS sha256s from the hub's "
          + "API, small files downloaded and hashed; download URLs are the hub's "
          + "<repo>/resolve/<commit>/<path>. The token is $HF_TOKEN, else the file $HF_TOKEN_PATH, "
          + "else $HF_HOME/token (default ~/.cache/huggingface/token); for a gated or private repo "
          + "the command prints the --source-credentials line the seed needs (never the token).",
      "Object ids are <object-prefix>/<path>/chunk-00000, ...; the artifact key is <model-id>-<revision>.",
      "Progress for files that take a while to hash goes to stderr."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:manifest written",
      "1:a file could not be read (or changed while hashed); the hub's answers contradict themselves",
      "2:usage error: missing or empty folder, bad hf:// reference, --chunk-size, --url-base, --format or -o (the message names it)",
      "3:hf://: no such repo, revision or file, or no access (gated or private repo without a valid token)",
      "4:hf://: the hub is unreachable, rate-limiting (HTTP 429) or failing (5xx)"
    })
public final class BuildCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(2);

  static final String FOLDER_PROVIDER = "local";
  static final String HUB_PROVIDER = "huggingface";

  @Spec CommandSpec spec;

  @Parameters(
      index = "0",
      paramLabel = "<model dir | hf://org/name[@rev]>",
      description =
          "The folder holding the model's files, or a Hugging Face model (revision default: main).")
  String source;

  @Option(
      names = "--model-id",
      paramLabel = "<id>",
      description =
          "Model id, e.g. meta-llama/Llama-3-8B (required for a folder; default for hf://: the repo).")
  String modelId;

  @Option(
      names = "--revision",
      paramLabel = "<rev>",
      description =
          "Model revision, e.g. a commit or r1 (required for a folder; for hf:// the revision is "
              + "the commit the @<revision> pins to).")
  String revision;

  @Option(
      names = "--format",
      paramLabel = "<format>",
      description =
          "Model format (default: guessed from extensions: safetensors, else gguf, else bin).")
  String format;

  @Option(
      names = "--provider",
      paramLabel = "<provider>",
      description = "Model provider (default: local for a folder, huggingface for hf://).")
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
              + "(default: file://<absolute model dir>/; not for hf://).")
  String urlBase;

  @Option(
      names = "--object-prefix",
      paramLabel = "<prefix>",
      description = "Start of every object id (default: <model-id>/<revision>).")
  String objectPrefix;

  @Option(
      names = "--hf-endpoint",
      paramLabel = "<url>",
      defaultValue = "${env:HF_ENDPOINT:-" + HubClient.DEFAULT_ENDPOINT + "}",
      description =
          "hf:// only: the hub or a mirror (default: $HF_ENDPOINT, else "
              + HubClient.DEFAULT_ENDPOINT
              + ").")
  String hfEndpoint;

  @Option(
      names = "--hf-token-file",
      paramLabel = "<file>",
      description =
          "hf:// only: a file holding the Hugging Face token (default: $HF_TOKEN, else the file "
              + "$HF_TOKEN_PATH, else $HF_HOME/token, HF_HOME defaulting to ~/.cache/huggingface).")
  Path hfTokenFile;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "<file>",
      description = "Write the manifest here (default: stdout).")
  Path output;

  /** The files of the model, hashed, and the choices they imply. */
  private record Sourced(
      String modelId,
      String revision,
      String provider,
      UrlBase urlBase,
      String format,
      List<ManifestBuilder.HashedFile> files) {}

  @Override
  public Integer call() {
    if (chunkSize <= 0) {
      throw usage("--chunk-size must be greater than 0, got " + chunkSize);
    }
    PrintWriter err = spec.commandLine().getErr();
    HubModel.Listing hub = null;
    Sourced sourced;
    if (HubRef.isHub(source)) {
      hub = listHub(err);
      sourced = fromHub(hub);
    } else {
      sourced = fromFolder(err);
    }
    String prefix =
        objectPrefix == null
            ? sourced.modelId() + "/" + sourced.revision()
            : objectPrefix.replaceAll("/+$", "");
    ManifestOptions options =
        new ManifestOptions(
            sourced.modelId(),
            sourced.revision(),
            sourced.format(),
            sourced.provider(),
            chunkSize,
            sourced.urlBase(),
            prefix);
    ManifestDocument manifest;
    try {
      manifest = ManifestBuilder.build(options, sourced.files());
    } catch (IllegalArgumentException e) {
      throw usage("--chunk-size: " + e.getMessage());
    }
    write(manifest);
    err.printf(
        "manifest: %s %s, %d files, %s, %d objects of %s%n",
        sourced.modelId(),
        sourced.revision(),
        sourced.files().size(),
        ByteSizes.format(manifest.totalSizeBytes()),
        manifest.files().stream().mapToInt(f -> f.chunkCount()).sum(),
        ByteSizes.format(chunkSize));
    if (hub != null && hub.needsToken()) {
      err.println(
          "manifest: "
              + hub.ref().repoId()
              + " is gated or private, so the seed needs a token too: add this line to the file "
              + "its mooncake_client --source-credentials names (mode 600), your token in place "
              + "of <HF token>:");
      err.println("  " + SourceCredentialLine.forHub(hubEndpoint()));
    }
    err.flush();
    return ExitCode.OK;
  }

  private Sourced fromFolder(PrintWriter err) {
    if (modelId == null || revision == null) {
      throw usage(
          "missing required option "
              + (modelId == null ? "'--model-id=<id>'" : "'--revision=<rev>'")
              + " (a model folder needs both --model-id and --revision)");
    }
    for (String flag : List.of("--hf-endpoint", "--hf-token-file")) {
      if (spec.commandLine().getParseResult().hasMatchedOption(flag)) {
        throw usage(flag + " is for hf:// sources only, not a model folder");
      }
    }
    Path folder;
    try {
      folder = Path.of(source);
    } catch (InvalidPathException e) {
      throw usage("<model dir> '" + source + "' is not a path: " + e.getMessage());
    }
    if (!Files.isDirectory(folder)) {
      throw usage(
          "<model dir> "
              + folder
              + (Files.exists(folder) ? " is not a folder" : " does not exist"));
    }
    ModelFolder.Listing listing = list(folder);
    listing.skipped().forEach(s -> err.println("manifest: skipped " + s));
    if (listing.files().isEmpty()) {
      throw usage(
          "<model dir> "
              + folder
              + " has no files (hidden files and links leaving it are skipped)");
    }
    // Checked before hashing, which may take minutes.
    String fmt = format(listing.files().stream().map(ModelFile::relativePath).toList());
    UrlBase base;
    try {
      base = urlBase == null ? UrlBase.of(folder) : UrlBase.parse(urlBase);
    } catch (IllegalArgumentException e) {
      throw usage("--url-base " + e.getMessage());
    }
    return new Sourced(
        modelId,
        revision,
        provider == null ? FOLDER_PROVIDER : provider,
        base,
        fmt,
        hashAll(listing.files(), err));
  }

  private HubModel.Listing listHub(PrintWriter err) {
    if (revision != null) {
      throw usage(
          "--revision: for hf:// give the revision as hf://<org>/<name>@<revision>; the manifest's "
              + "revision is the commit it pins to");
    }
    if (urlBase != null) {
      throw usage(
          "--url-base: an hf:// manifest downloads from the hub's resolve URLs of the pinned commit");
    }
    HubRef ref;
    try {
      ref = HubRef.parse(source);
    } catch (IllegalArgumentException e) {
      throw usage("<source> " + e.getMessage());
    }
    Optional<HubToken> token;
    try {
      token =
          hfTokenFile != null
              ? HubToken.fromFile(hfTokenFile, true)
              : HubToken.resolve(System.getenv(), Path.of(System.getProperty("user.home")));
    } catch (IllegalArgumentException e) {
      throw usage((hfTokenFile != null ? "--hf-token-file: " : "") + e.getMessage());
    }
    HubClient client = new HubClient(hubEndpoint(), token);
    try {
      HubModel.Listing listing =
          HubModel.list(
              client,
              ref,
              line -> {
                err.println("manifest: " + line);
                err.flush();
              });
      listing.skipped().forEach(s -> err.println("manifest: skipped " + s));
      if (listing.files().isEmpty()) {
        throw new CliException(
            ExitCode.NOT_FOUND_OR_REJECTED,
            ref + " (commit " + listing.commit() + ") has no files (hidden files are skipped)");
      }
      return listing;
    } catch (HubException e) {
      int code =
          switch (e.kind()) {
            case NOT_FOUND_OR_REFUSED -> ExitCode.NOT_FOUND_OR_REJECTED;
            case UNAVAILABLE -> ExitCode.UNREACHABLE;
            case INCONSISTENT -> ExitCode.FAILED;
          };
      throw new CliException(code, e.getMessage(), e);
    }
  }

  private Sourced fromHub(HubModel.Listing hub) {
    return new Sourced(
        modelId == null ? hub.ref().repoId() : modelId,
        hub.commit(),
        provider == null ? HUB_PROVIDER : provider,
        hub.urlBase(),
        format(hub.files().stream().map(ManifestBuilder.HashedFile::path).toList()),
        hub.files());
  }

  private URI hubEndpoint() {
    try {
      return HubClient.endpoint(hfEndpoint);
    } catch (IllegalArgumentException e) {
      throw usage("--hf-endpoint (or $HF_ENDPOINT) " + e.getMessage());
    }
  }

  private String format(List<String> paths) {
    if (format != null) {
      return format;
    }
    return FormatGuess.fromPaths(paths)
        .orElseThrow(
            () ->
                usage(
                    "--format: no .safetensors, .gguf or .bin file to guess the format from; pass --format"));
  }

  private ModelFolder.Listing list(Path folder) {
    try {
      // The manifest may be written into the folder itself; a rerun must not list the previous one.
      Set<Path> exclude =
          output != null && Files.exists(output) ? Set.of(output.toRealPath()) : Set.of();
      return ModelFolder.list(folder, exclude);
    } catch (IOException e) {
      throw new CliException(ExitCode.FAILED, "cannot list " + folder + ": " + e);
    }
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
