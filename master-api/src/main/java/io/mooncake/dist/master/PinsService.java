package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.master.validation.ModelQuery;
import io.mooncake.dist.master.validation.NodeList;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.store.NodeDisks;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pins (issue 22): a model revision pinned on a node is never evicted there, whatever the pressure
 * on its disk; a job that needs the room then fails its placement there at once, naming the pin.
 *
 * <ul>
 *   <li>{@code GET /api/v1/model-distribution/pins}: every pin (a read token);
 *   <li>{@code POST /api/v1/model-distribution/pins?model_id=&revision=&format=&provider=&nodes=}:
 *       pins the model on each listed node (a write token); pinning twice keeps the first pin;
 *   <li>{@code DELETE} with the same parameters: unpins it there.
 * </ul>
 */
final class PinsService implements HttpService {
  private final NodeDisks disks;

  PinsService(NodeDisks disks) {
    this.disks = disks;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.get("/pins", this::list).post("/pins", this::pin).delete("/pins", this::unpin);
  }

  private void list(ServerRequest req, ServerResponse res) {
    List<Map<String, Object>> pins = new ArrayList<>();
    for (NodeDisks.Pin p : disks.pins()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("node_id", p.nodeId());
      m.put("model", p.model());
      m.put("pinned_by", p.pinnedBy());
      m.put("pinned_at", p.pinnedAt());
      pins.add(m);
    }
    Responses.json(res, 200, Map.of("pins", pins));
  }

  private void pin(ServerRequest req, ServerResponse res) {
    ModelRef model = ModelQuery.parse(name -> req.query().first(name).asOptional());
    List<String> nodes = NodeList.parse(req.query().first("nodes").orElse(""), "nodes");
    String by = req.context().get(ApiAccess.TOKEN_NAME, String.class).orElse(null);
    disks.pin(model, nodes, by);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("model", model);
    body.put("nodes", nodes);
    body.put("pinned", true);
    Responses.json(res, 200, body);
  }

  private void unpin(ServerRequest req, ServerResponse res) {
    ModelRef model = ModelQuery.parse(name -> req.query().first(name).asOptional());
    List<String> nodes = NodeList.parse(req.query().first("nodes").orElse(""), "nodes");
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("model", model);
    body.put("nodes", disks.unpin(model, nodes));
    body.put("pinned", false);
    Responses.json(res, 200, body);
  }
}
