package io.mooncake.dist.master.metrics;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.mooncake.dist.master.RouteTable;
import io.mooncake.dist.master.RouteTable.Route;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts answered requests per (route, status) in memory, for {@code mooncake_http_requests_total}.
 * The route label is the served path from the {@link RouteTable}, or {@value #UNMATCHED} for
 * anything else, so a scanner probing random paths cannot grow the series without bound. Counts
 * start at zero with each master process, as Prometheus counters may.
 */
public final class HttpRequestCounter implements Filter {
  /** The route label of requests no route serves. */
  public static final String UNMATCHED = "unmatched";

  private final Set<Route> routes;
  private final Map<Key, LongAdder> counts = new ConcurrentHashMap<>();

  public HttpRequestCounter(List<Route> routes) {
    this.routes = Set.copyOf(routes);
  }

  /** One series of the counter. */
  public record Key(String route, int status) {}

  @Override
  public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
    String path = RouteTable.normalize(req.path().path());
    String route =
        routes.contains(new Route(req.prologue().method().text(), path)) ? path : UNMATCHED;
    // Helidon runs the error handlers inside the chain, so the status is final once it returns.
    chain.proceed();
    counts.computeIfAbsent(new Key(route, res.status().code()), k -> new LongAdder()).increment();
  }

  /** A copy of the counts so far. */
  public Map<Key, Long> snapshot() {
    Map<Key, Long> out =
        new TreeMap<>(Comparator.comparing(Key::route).thenComparingInt(Key::status));
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
