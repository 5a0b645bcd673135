package io.mooncake.dist.master.metrics;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.scheduler.metrics.PrometheusText;
import io.mooncake.dist.scheduler.store.MetricsQueries;
import java.nio.charset.StandardCharsets;

/** {@code GET /metrics}: the Prometheus exposition of {@link MasterMetrics}. */
public final class MetricsService implements HttpService {
  private final MasterMetrics metrics;

  public MetricsService(MetricsQueries queries, HttpRequestCounter requests) {
    this.metrics = new MasterMetrics(queries, requests);
  }

  @Override
  public void routing(HttpRules rules) {
    rules.get("/metrics", this::scrape);
  }

  private void scrape(ServerRequest req, ServerResponse res) {
    byte[] body = metrics.render().getBytes(StandardCharsets.UTF_8);
    res.header(HeaderNames.CONTENT_TYPE, PrometheusText.CONTENT_TYPE);
    res.send(body);
  }
}
