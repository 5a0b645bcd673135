package io.mooncake.dist.cli.master;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One answer from the master: the HTTP status and the JSON body ({@code MissingNode} when the body
 * was empty).
 */
public record MasterReply(int status, JsonNode body) {

  public boolean ok() {
    return status >= 200 && status < 300;
  }

  /**
   * Mooncake's {@code error_message} when the body is an error, else a generic line with the
   * status, so the operator always sees why.
   */
  public String errorMessage() {
    String message = body.path("error_message").asText("");
    return message.isEmpty() ? "the master answered HTTP " + status : message;
  }
}
