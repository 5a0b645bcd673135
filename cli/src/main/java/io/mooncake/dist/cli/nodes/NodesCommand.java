package io.mooncake.dist.cli.nodes;

import com.fasterxml.jackson.databind.JsonNode;
import io.mooncake.dist.cli.CliException;
import io.mooncake.dist.cli.ExitCode;
import io.mooncake.dist.cli.HelpOption;
import io.mooncake.dist.cli.MooncakeCli;
import io.mooncake.dist.cli.format.ByteSizes;
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
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code mooncake nodes}: lists registered nodes and whether they are live. */
@Command(
    name = "nodes",
    description =
        "List registered nodes (GET /api/v1/nodes); live = heartbeat within the last 10 s; capacity, free"
            + " and held bytes of the data directory as last reported, and the models held there.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:listed (possibly none)",
      "2:usage error",
      "3:the request was rejected (4xx)",
      "4:master unreachable or answering 5xx"
    })
public final class NodesCommand implements Callable<Integer> {
  @Mixin HelpOption help;

  @ParentCommand MooncakeCli root;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    MasterReply reply = root.masterClient(spec).get(MasterClient.NODES, Map.of());
    if (!reply.ok()) {
      throw new CliException(
          ExitCode.NOT_FOUND_OR_REJECTED,
          "listing nodes rejected (HTTP " + reply.status() + "): " + reply.errorMessage());
    }
    Table table =
        Table.withHeaders(
                "NODE_ID",
                "HOST",
                "PORT",
                "LIVE",
                "CAPACITY",
                "FREE",
                "HELD",
                "MODELS",
                "HEARTBEAT_AT",
                "STARTED_AT",
                "DATA_DIR",
                "INSTANCE_ID")
            .alignRight(2, 4, 5, 6);
    for (JsonNode n : reply.body().path("nodes")) {
      table.row(
          text(n, "node_id"),
          text(n, "host"),
          text(n, "port"),
          n.path("live").asBoolean(false) ? "yes" : "no",
          bytes(n, "capacity_bytes"),
          bytes(n, "free_bytes"),
          bytes(n, "held_bytes"),
          models(n.path("models")),
          text(n, "heartbeat_at"),
          text(n, "started_at"),
          text(n, "data_dir"),
          text(n, "instance_id"));
    }
    PrintWriter out = spec.commandLine().getOut();
    table.lines().forEach(out::println);
    out.flush();
    return ExitCode.OK;
  }

  private static String bytes(JsonNode node, String field) {
    JsonNode v = node.path(field);
    return v.isNumber() ? ByteSizes.format(v.asLong()) : "-";
  }

  /** {@code model_id@revision} of each held model, most recently used first; pinned ones marked. */
  private static String models(JsonNode models) {
    List<String> out = new ArrayList<>();
    for (JsonNode m : models) {
      JsonNode ref = m.path("model");
      out.add(
          ref.path("model_id").asText()
              + "@"
              + ref.path("revision").asText()
              + (m.path("pinned").asBoolean(false) ? " (pinned)" : ""));
    }
    return out.isEmpty() ? "-" : String.join(", ", out);
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.path(field);
    return v.isMissingNode() || v.isNull() ? "-" : v.asText();
  }
}
