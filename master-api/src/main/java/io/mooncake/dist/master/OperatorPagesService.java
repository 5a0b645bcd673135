package io.mooncake.dist.master;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Documents served as they are stored on the classpath: the status page ({@code /} and {@code
 * /status}) and the OpenAPI description ({@code /openapi}, JSON). Both are read once at start, so a
 * packaging mistake fails the master at start rather than at the first request.
 */
final class OperatorPagesService implements HttpService {
  private static final String HTML = "text/html; charset=utf-8";
  private static final String JSON = "application/json";

  private final byte[] statusPage = resource("status.html");
  private final byte[] openApi = resource("openapi.json");

  @Override
  public void routing(HttpRules rules) {
    rules
        .get("/", this::statusPage)
        .get("/status", this::statusPage)
        .get("/openapi", this::openApi);
  }

  private void statusPage(ServerRequest req, ServerResponse res) {
    res.header(HeaderNames.CONTENT_TYPE, HTML);
    // The page polls the API itself; a cached copy would only hide a newer master's page.
    res.header(HeaderNames.CACHE_CONTROL, "no-cache");
    res.send(statusPage);
  }

  private void openApi(ServerRequest req, ServerResponse res) {
    res.header(HeaderNames.CONTENT_TYPE, JSON);
    res.send(openApi);
  }

  private static byte[] resource(String name) {
    try (InputStream in = OperatorPagesService.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("resource " + name + " is missing from the master's jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
