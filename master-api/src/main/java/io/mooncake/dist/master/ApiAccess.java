package io.mooncake.dist.master;

import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.mooncake.dist.master.auth.ApiTokens;
import io.mooncake.dist.master.auth.ApiTokens.Grant;
import io.mooncake.dist.master.auth.ApiTokens.Permission;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may call the API. With tokens ({@code --api-tokens-file}) every request but the public
 * documents needs {@code Authorization: Bearer <token>}: GET and HEAD need a read token, every
 * other method a write token. Missing or unknown tokens get 401 (before routing, so paths cannot be
 * probed without a token), a read token on a write request 403. {@link #open()} lets everything
 * through; the master only uses it when started with {@code --no-auth}.
 */
public final class ApiAccess implements Filter {
  private static final Logger log = LoggerFactory.getLogger(ApiAccess.class);

  /** Served without a token: the load balancer's probe and static documents that carry no data. */
  static final Set<String> PUBLIC_GET = Set.of("/health", "/", "/status", "/openapi");

  private static final String BEARER = "bearer ";

  private final ApiTokens tokens;

  private ApiAccess(ApiTokens tokens) {
    this.tokens = tokens;
  }

  /** No authentication: for local use only, chosen explicitly with {@code --no-auth}. */
  public static ApiAccess open() {
    return new ApiAccess(null);
  }

  /** Bearer tokens from a token file. */
  public static ApiAccess tokens(ApiTokens tokens) {
    return new ApiAccess(tokens);
  }

  /** Whether requests are checked at all. */
  public boolean enabled() {
    return tokens != null;
  }

  /** The request context key under which the name of the request's token is kept. */
  static final String TOKEN_NAME = "mooncake.api-token-name";

  @Override
  public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
    if (tokens == null || NodeLinkService.PATHS.contains(RouteTable.normalize(req.path().path()))) {
      // The node link's routes check a node signature themselves (NodeLinkService).
      chain.proceed();
      return;
    }
    Method method = req.prologue().method();
    boolean reading = method == Method.GET || method == Method.HEAD;
    if (reading && PUBLIC_GET.contains(RouteTable.normalize(req.path().path()))) {
      chain.proceed();
      return;
    }
    Permission needed = reading ? Permission.READ : Permission.WRITE;
    Optional<String> presented =
        req.headers()
            .first(HeaderNames.AUTHORIZATION)
            .filter(h -> h.regionMatches(true, 0, BEARER, 0, BEARER.length()))
            .map(h -> h.substring(BEARER.length()).strip());
    if (presented.isEmpty()) {
      res.header(HeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"mooncake\"");
      Responses.error(
          res,
          401,
          null,
          "authentication required: send 'Authorization: Bearer <token>' with a "
              + needed.name().toLowerCase()
              + " token");
      return;
    }
    Optional<Grant> grant = tokens.lookup(presented.get());
    if (grant.isEmpty()) {
      res.header(
          HeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"mooncake\", error=\"invalid_token\"");
      Responses.error(res, 401, null, "invalid bearer token");
      return;
    }
    if (!grant.get().permission().allows(needed)) {
      Responses.error(
          res,
          403,
          null,
          "token '"
              + grant.get().name()
              + "' may only read; "
              + method.text()
              + " "
              + req.path().path()
              + " needs a write token");
      return;
    }
    if (!reading) {
      log.info("{} {} by token '{}'", method.text(), req.path().path(), grant.get().name());
    }
    req.context().register(TOKEN_NAME, grant.get().name());
    chain.proceed();
  }
}
