package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.util.Map;

/** {@code GET /api/v1/nodes}: every registered node with its liveness. */
final class NodesService implements HttpService {
  private final NodeRegistry nodes;

  NodesService(NodeRegistry nodes) {
    this.nodes = nodes;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.get("/", this::list);
  }

  private void list(ServerRequest req, ServerResponse res) {
    Responses.json(res, 200, Map.of("nodes", nodes.list()));
  }
}
