package io.mooncake.dist.master;

/**
 * An error the API answers with a JSON body in Mooncake's shape, {@code {"success": false,
 * "error_code": <http status>, "error_message": "...", "field": ...}}.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String field;

  public ApiError(int status, String field, String message) {
    super(message);
    this.status = status;
    this.field = field;
  }

  public int status() {
    return status;
  }

  public String field() {
    return field;
  }
}
