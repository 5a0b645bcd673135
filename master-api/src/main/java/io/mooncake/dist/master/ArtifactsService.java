package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.master.validation.ModelQuery;
import io.mooncake.dist.scheduler.domain.ModelRef;
import io.mooncake.dist.scheduler.store.ArtifactDeletions;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code DELETE /api/v1/model-distribution/artifacts?model_id=&revision=&format=&provider=}: frees
 * a model's disk on every node that has a placement of one of its jobs, once no active job uses it.
 * Answers 202 with the rows recorded; the nodes' workers do the deleting.
 */
final class ArtifactsService implements HttpService {
  private final ArtifactDeletions deletions;

  ArtifactsService(ArtifactDeletions deletions) {
    this.deletions = deletions;
  }

  @Override
  public void routing(HttpRules rules) {
    rules.delete("/artifacts", this::delete);
  }

  private void delete(ServerRequest req, ServerResponse res) {
    ModelRef model = ModelQuery.parse(name -> req.query().first(name).asOptional());
    switch (deletions.request(model)) {
      case ArtifactDeletions.Outcome.NotFound n ->
          throw new ApiError(
              404,
              "model_id",
              "no distribution job was ever created for model " + model.describe());
      case ArtifactDeletions.Outcome.Conflict c ->
          throw new ApiError(
              409,
              "model_id",
              "model "
                  + model.describe()
                  + " is used by active jobs "
                  + String.join(", ", c.activeJobIds())
                  + "; cancel them or wait for them to end");
      case ArtifactDeletions.Outcome.Requested r -> {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("model_id", model.modelId());
        m.put("revision", model.revision());
        m.put("format", model.format());
        m.put("provider", model.provider());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", m);
        body.put("nodes", r.nodes());
        body.put("deletion_id", r.deletionIds().isEmpty() ? null : r.deletionIds().get(0));
        body.put("deletion_ids", r.deletionIds());
        Responses.json(res, 202, body);
      }
    }
  }
}
