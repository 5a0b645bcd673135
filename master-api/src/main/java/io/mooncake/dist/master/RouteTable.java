package io.mooncake.dist.master;

import io.helidon.http.Method;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRoute;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The master's routes as data, read from the very route tables the server is built from: the rules
 * are replayed against a recorder instead of a router. The OpenAPI test compares the document with
 * this list, and request metrics label requests by it, so neither can drift from what is really
 * served.
 *
 * <p>Only exact paths registered with {@code get}/{@code post}/{@code delete} (directly or inside a
 * service, under a prefix) are supported; any other kind of rule fails the recording loudly, so a
 * route cannot be added in a way this table would miss.
 */
public final class RouteTable {
  /** One served operation: an HTTP method and an exact path such as {@code /api/v1/nodes}. */
  public record Route(String method, String path) {}

  private RouteTable() {}

  /** Replays {@code rules} against a recorder and returns every route they declare, in order. */
  public static List<Route> record(Consumer<HttpRules> rules) {
    List<Route> routes = new ArrayList<>();
    rules.accept(new Recorder("", routes));
    return List.copyOf(routes);
  }

  /**
   * {@code /a/} and {@code /a} are the same route to Helidon; the table keeps the form without the
   * slash.
   */
  public static String normalize(String path) {
    return path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  private static final class Recorder implements HttpRules {
    private final String prefix;
    private final List<Route> routes;

    Recorder(String prefix, List<Route> routes) {
      this.prefix = prefix;
      this.routes = routes;
    }

    @Override
    public HttpRules register(HttpService... services) {
      for (HttpService s : services) {
        s.routing(this);
      }
      return this;
    }

    @Override
    public HttpRules register(String pathPattern, HttpService... services) {
      Recorder nested = new Recorder(prefix + normalize(pathPattern), routes);
      for (HttpService s : services) {
        s.routing(nested);
      }
      return this;
    }

    @Override
    public HttpRules get(String pathPattern, Handler... handlers) {
      return add(Method.GET, pathPattern);
    }

    @Override
    public HttpRules post(String pathPattern, Handler... handlers) {
      return add(Method.POST, pathPattern);
    }

    @Override
    public HttpRules delete(String pathPattern, Handler... handlers) {
      return add(Method.DELETE, pathPattern);
    }

    @Override
    public HttpRules route(HttpRoute route) {
      throw new UnsupportedOperationException(
          "RouteTable records only get(path, ...), post(path, ...) and delete(path, ...) rules; register routes that way");
    }

    private HttpRules add(Method method, String pathPattern) {
      String path = normalize(prefix + pathPattern);
      if (path.contains("{") || path.contains("*")) {
        throw new UnsupportedOperationException("RouteTable records exact paths only, got " + path);
      }
      routes.add(new Route(method.text(), path.isEmpty() ? "/" : path));
      return this;
    }
  }
}
