package io.mooncake.dist.master;

import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.db.Database;
import io.mooncake.dist.master.RouteTable.Route;
import io.mooncake.dist.master.metrics.HttpRequestCounter;
import io.mooncake.dist.master.metrics.MetricsService;
import io.mooncake.dist.master.validation.SourcePolicy;
import io.mooncake.dist.master.validation.ValidationException;
import io.mooncake.dist.scheduler.store.ArtifactDeletions;
import io.mooncake.dist.scheduler.store.JobCancel;
import io.mooncake.dist.scheduler.store.JobListing;
import io.mooncake.dist.scheduler.store.JobStore;
import io.mooncake.dist.scheduler.store.MetricsQueries;
import io.mooncake.dist.scheduler.store.NodeDisks;
import io.mooncake.dist.scheduler.store.NodeRegistry;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's route table and its error mapping, shared by the launcher and the tests. The table
 * is one function over {@link HttpRules}, applied to the real router and, for {@link #routes}, to a
 * {@link RouteTable} recorder, so the list of routes is never written down twice.
 */
public final class MasterRouting {
  private static final Logger log = LoggerFactory.getLogger(MasterRouting.class);

  /**
   * The message of the 404 for a path or method no route serves; tests tell it from a handler's 404
   * by it.
   */
  public static final String NO_ROUTE = "no route for ";

  private MasterRouting() {}

  public static void routing(HttpRouting.Builder routing, Database db, Runnable onJobCreated) {
    routing(routing, db, onJobCreated, SourcePolicy.ALLOW_ALL);
  }

  /** As above, refusing jobs whose sources {@code sources} does not allow. */
  public static void routing(
      HttpRouting.Builder routing, Database db, Runnable onJobCreated, SourcePolicy sources) {
    routing(routing, db, onJobCreated, sources, ApiAccess.open());
  }

  /** As above, admitting only the requests {@code access} allows (counted all the same). */
  public static void routing(
      HttpRouting.Builder routing,
      Database db,
      Runnable onJobCreated,
      SourcePolicy sources,
      ApiAccess access) {
    routing(routing, db, onJobCreated, sources, access, NodeLink.disabled(db));
  }

  /** As above, serving the node link's routes with {@code nodeLink}. */
  public static void routing(
      HttpRouting.Builder routing,
      Database db,
      Runnable onJobCreated,
      SourcePolicy sources,
      ApiAccess access,
      NodeLink nodeLink) {
    HttpRequestCounter requests = new HttpRequestCounter(routes(db));
    routing.addFilter(requests);
    routing.addFilter(access);
    table(db, onJobCreated, requests, sources, nodeLink).accept(routing);
    routing
        .any(MasterRouting::noRoute)
        .error(
            ValidationException.class,
            (req, res, e) -> Responses.error(res, 400, e.field(), e.getMessage()))
        .error(
            ApiError.class,
            (req, res, e) -> Responses.error(res, e.status(), e.field(), e.getMessage()))
        .error(
            DataAccessException.class,
            (req, res, e) -> {
              // SQL text and driver messages stay in the log: they can echo the caller's input and
              // show the schema. The caller gets an id to quote; the log line carries it.
              String id = errorId();
              log.warn(
                  "database error {} serving {} {}: {}",
                  id,
                  req.prologue().method(),
                  req.path().path(),
                  e.getMessage());
              Responses.error(
                  res, 503, null, "database unavailable; retry later (error id " + id + ")", id);
            })
        .error(
            RuntimeException.class,
            (req, res, e) -> {
              String id = errorId();
              log.error(
                  "unexpected error {} serving {} {}",
                  id,
                  req.prologue().method(),
                  req.path().path(),
                  e);
              Responses.error(res, 500, null, "internal error (error id " + id + ")", id);
            });
  }

  /** A short random id tying a 5xx answer to its log line. */
  static String errorId() {
    byte[] id = new byte[6];
    RANDOM.nextBytes(id);
    return java.util.HexFormat.of().formatHex(id);
  }

  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

  /** Every route the master serves, in table order, recorded from the table itself. */
  public static List<Route> routes(Database db) {
    return RouteTable.record(
        table(
            db,
            () -> {},
            new HttpRequestCounter(List.of()),
            SourcePolicy.ALLOW_ALL,
            NodeLink.disabled(db)));
  }

  private static Consumer<HttpRules> table(
      Database db,
      Runnable onJobCreated,
      HttpRequestCounter requests,
      SourcePolicy sources,
      NodeLink nodeLink) {
    DistributionService distribution =
        new DistributionService(
            new JobStore(db.dsl()),
            new JobListing(db.dsl()),
            new JobCancel(db.dsl()),
            onJobCreated,
            sources);
    NodesService nodes = new NodesService(new NodeRegistry(db.dsl()));
    MetricsService metrics = new MetricsService(new MetricsQueries(db.dsl()), requests);
    OperatorPagesService pages = new OperatorPagesService();
    return rules ->
        rules
            .get(
                "/health",
                (req, res) -> {
                  db.dsl().selectOne().fetch();
                  Responses.json(res, 200, Map.of("status", "UP"));
                })
            .register("/api/v1/model-distribution", distribution)
            .register(
                "/api/v1/model-distribution", new ArtifactsService(new ArtifactDeletions(db.dsl())))
            .register("/api/v1/model-distribution", new PinsService(new NodeDisks(db.dsl())))
            .register("/api/v1/nodes", nodes)
            .register("/api/v1/nodes", nodeLink.service())
            .register(metrics, pages);
  }

  /**
   * Unrouted requests get the same JSON error shape as every other error, not Helidon's plain text.
   */
  private static void noRoute(ServerRequest req, ServerResponse res) {
    Responses.error(
        res, 404, null, NO_ROUTE + req.prologue().method().text() + " " + req.path().path());
  }
}
