package io.mooncake.dist.cli.nodes;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.format.Table;
import io.mooncake.dist.cli.master.MasterClient;
import io.mooncake.dist.cli.master.MasterReply;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code mooncake pin}, {@code unpin} and {@code pins}: keep a model revision from being evicted on
 * some nodes (e.g. those serving it), let it go again, list the pins.
 */
public final class PinCommand {
  private PinCommand() {}

  /** The model and nodes both {@code pin} and {@code unpin} name. */
  static final class Target {
    @Option(names = "--model-id", required = true, description = "The model's model_id.")
    String modelId;

    @Option(names = "--revision", required = true, description = "The model's revision.")
    String revision;

    @Option(names = "--format", required = true, description = "The model's format, e.g. bin.")
    String format;

    @Option(names = "--provider", required = true, description = "The model's provider.")
    String provider;

    @Option(
        names = "--nodes",
        required = true,
        paramLabel = "H:P,...",
        description = "The nodes, comma-separated node ids.")
    String nodes;

    Map<String, String> query() {
      return MasterClient.query(
          "model_id", modelId,
          "revision", revision,
          "format", format,
          "provider", provider,
          "nodes", nodes);
    }

    String describe() {
      return provider + "/" + modelId + "@" + revision + " (" + format + ")";
    }
  }

  static int answer(CommandSpec spec, MasterReply reply, String done) {
    if (!reply.ok()) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          "rejected (HTTP " + reply.status() + "): " + reply.errorMessage());
    }
    List<String> nodes = new ArrayList<>();
    reply.body().path("nodes").forEach(n -> nodes.add(n.asText()));
    PrintWriter out = spec.commandLine().getOut();
    out.println(done + (nodes.isEmpty() ? " on no node" : " on " + String.join(", ", nodes)));
    out.flush();
    return ExitCode.OK;
  }

  /** {@code mooncake pin}. */
  @Command(
      name = "pin",
      description =
          "Pin a model revision on nodes (POST /api/v1/model-distribution/pins): never evicted there; a job"
              + " needing the room fails its placement instead, naming the pin.",
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {
        "0:pinned",
        "2:usage error",
        "3:rejected (4xx, e.g. an invalid node id)",
        "4:master unreachable or answering 5xx"
      })
  public static final class Pin implements Callable<Integer> {
    @Mixin HelpOption help;

    @ParentCommand MooncakeCli root;

    @Spec CommandSpec spec;

    @Mixin Target target;

    @Override
    public Integer call() {
      MasterReply reply = root.masterClient(spec).post(MasterClient.PINS, target.query());
      return answer(spec, reply, "pinned " + target.describe());
    }
  }

  /** {@code mooncake unpin}. */
  @Command(
      name = "unpin",
      description =
          "Unpin a model revision on nodes (DELETE /api/v1/model-distribution/pins); prints the nodes where it"
              + " was pinned.",
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {
        "0:unpinned (or was not pinned)",
        "2:usage error",
        "3:rejected (4xx)",
        "4:master unreachable or answering 5xx"
      })
  public static final class Unpin implements Callable<Integer> {
    @Mixin HelpOption help;

    @ParentCommand MooncakeCli root;

    @Spec CommandSpec spec;

    @Mixin Target target;

    @Override
    public Integer call() {
      MasterReply reply = root.masterClient(spec).delete(MasterClient.PINS, target.query());
      return answer(spec, reply, "unpinned " + target.describe());
    }
  }

  /** {@code mooncake pins}. */
  @Command(
      name = "pins",
      description = "List every pin (GET /api/v1/model-distribution/pins).",
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {
        "0:listed (possibly none)",
        "2:usage error",
        "3:rejected (4xx)",
        "4:master unreachable or answering 5xx"
      })
  public static final class Pins implements Callable<Integer> {
    @Mixin HelpOption help;

    @ParentCommand MooncakeCli root;

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      MasterReply reply = root.masterClient(spec).get(MasterClient.PINS, Map.of());
      if (!reply.ok()) {
        throw new CliException(
            ExitCode.NOT_FOUND_OR_REJECTED,
            "listing pins rejected (HTTP " + reply.status() + "): " + reply.errorMessage());
      }
      Table table =
          Table.withHeaders(
              "NODE_ID", "PROVIDER", "MODEL_ID", "REVISION", "FORMAT", "PINNED_BY", "PINNED_AT");
      for (JsonNode p : reply.body().path("pins")) {
        JsonNode m = p.path("model");
        table.row(
            p.path("node_id").asText(),
            m.path("provider").asText(),
            m.path("model_id").asText(),
            m.path("revision").asText(),
            m.path("format").asText(),
            p.path("pinned_by").isNull() ? "-" : p.path("pinned_by").asText("-"),
            p.path("pinned_at").asText());
      }
      PrintWriter out = spec.commandLine().getOut();
      table.lines().forEach(out::println);
      out.flush();
      return ExitCode.OK;
    }
  }
}
