package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRouting;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.util.Map;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The master's route table and its error mapping, shared by the launcher and the tests. */
public final class MasterRouting {
  private static final Logger log = LoggerFactory.getLogger(MasterRouting.class);

  private MasterRouting() {}

  public static void routing(HttpRouting.Builder routing, Database db, Runnable onJobCreated) {
    routing
        .get("/health", (req, res) -> {
          db.dsl().selectOne().fetch();
          Responses.json(res, 200, Map.of("status", "UP"));
        })
        .register("/api/v1/model-distribution", new DistributionService(new JobStore(db.dsl()), onJobCreated))
        .register("/api/v1/nodes", new NodesService(new NodeRegistry(db.dsl())))
        .error(ValidationException.class, (req, res, e) -> Responses.error(res, 400, e.field(), e.getMessage()))
        .error(ApiError.class, (req, res, e) -> Responses.error(res, e.status(), e.field(), e.getMessage()))
        .error(DataAccessException.class, (req, res, e) -> {
          log.warn("database error serving {} {}: {}", req.prologue().method(), req.path().path(), e.getMessage());
          Responses.error(res, 503, null, "database unavailable: " + e.getMessage());
        })
        .error(RuntimeException.class, (req, res, e) -> {
          log.error("unexpected error serving {} {}", req.prologue().method(), req.path().path(), e);
          Responses.error(res, 500, null, "internal error: " + e);
        });
  }
}
