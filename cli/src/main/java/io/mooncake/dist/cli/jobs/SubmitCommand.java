package io.mooncake.dist.cli.jobs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.Json;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.MasterReply;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake submit}: creates a distribution job from a manifest file. */
@Command(
    name = "submit",
    sortOptions = false,
    description = {
      "Create a distribution job: POST the RFC's create request (model and manifest from the file, "
          + "seed, targets, replica_policy.target_replica_count = number of targets) to the master.",
      "Prints the job id (with --json, the job's snapshot). Re-submitting the same request with the same "
          + "--job-id is answered with the existing job."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:job created (201), or the same request was already created (200)",
      "2:usage error: bad flag, unreadable or invalid manifest file",
      "3:rejected by the master (4xx, e.g. 400 invalid, 409 job id taken by another request); its message is printed",
      "4:master unreachable or answering 5xx"
    })
public final class SubmitCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Option(
      names = "--manifest",
      required = true,
      paramLabel = "<file>",
      description = "Manifest JSON, as written by 'mooncake manifest build'.")
  Path manifest;

  @Option(
      names = "--seed",
      required = true,
      paramLabel = "<host:port>",
      description =
          "Seed node: acquires the model from its download URLs (added to the targets if absent).")
  String seed;

  @Option(
      names = "--targets",
      required = true,
      split = ",",
      paramLabel = "<host:port>",
      description = "Target nodes, comma-separated.")
  List<String> targets;

  @Option(
      names = "--fallback-seeds",
      split = ",",
      paramLabel = "<host:port>",
      description =
          "Targets that take over as seed, in this order, when the seed fails (the request's"
              + " fallback_seeds, an extension beside the RFC's fields). Default: none, and a seed"
              + " failure fails the job.")
  List<String> fallbackSeeds;

  @Option(names = "--job-id", paramLabel = "<id>", description = "Job id (default: a random UUID).")
  String jobId;

  @Option(
      names = "--json",
      description = "Print the job's snapshot as JSON instead of only its id.")
  boolean json;

  @Override
  public Integer call() throws IOException {
    MasterClient master = root.masterClient(spec);
    String id = jobId == null ? UUID.randomUUID().toString() : jobId;
    ObjectNode request;
    try {
      request = CreateRequest.build(id, readManifest(), seed.strip(), targets);
      if (fallbackSeeds != null && !fallbackSeeds.isEmpty()) {
        // The master checks them (targets, not the seed, no duplicates) and names the entry.
        var list = request.putArray("fallback_seeds");
        fallbackSeeds.forEach(n -> list.add(n.strip()));
      }
    } catch (IllegalArgumentException e) {
      throw new ParameterException(
          spec.commandLine(), "--manifest " + manifest + " " + e.getMessage());
    }
    MasterReply reply = master.postJson(MasterClient.JOBS, request);
    if (!reply.ok()) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          "job " + id + " rejected (HTTP " + reply.status() + "): " + reply.errorMessage());
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Json.PRETTY.writeValueAsString(reply.body()));
    } else {
      out.println(reply.body().path("job_id").asText(id));
    }
    out.flush();
    return ExitCode.OK;
  }

  private JsonNode readManifest() {
    if (!Files.isRegularFile(manifest)) {
      throw new ParameterException(
          spec.commandLine(),
          "--manifest "
              + manifest
              + (Files.exists(manifest) ? " is not a file" : " does not exist"));
    }
    try {
      return Json.MAPPER.readTree(Files.readString(manifest));
    } catch (IOException e) {
      throw new ParameterException(
          spec.commandLine(),
          "--manifest "
              + manifest
              + ": cannot read it as JSON: "
              + e.getMessage().lines().findFirst().orElse(""));
    }
  }
}
