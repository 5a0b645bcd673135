package io.mooncake.dist.master;

import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerResponse;
import io.mooncake.dist.scheduler.domain.Json;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Writing JSON responses: one place for the content type and the error shape. */
final class Responses {
  private Responses() {}

  static void json(ServerResponse res, int status, Object body) {
    res.status(Status.create(status));
    res.header(HeaderValues.CONTENT_TYPE_JSON);
    res.send(Json.write(body).getBytes(StandardCharsets.UTF_8));
  }

  static void error(ServerResponse res, int status, String field, String message) {
    error(res, status, field, message, null);
  }

  /** As above, with the id of the server's log line for a 5xx ({@code error_id}). */
  static void error(ServerResponse res, int status, String field, String message, String errorId) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", false);
    body.put("error_code", status);
    body.put("error_message", message);
    if (field != null) {
      body.put("field", field);
    }
    if (errorId != null) {
      body.put("error_id", errorId);
    }
    json(res, status, body);
  }
}
