package io.mooncake.dist.db;

/** The database URL is malformed or the server does not answer; the message names the URL. */
public final class DatabaseUnavailableException extends RuntimeException {
  public DatabaseUnavailableException(String message) {
    super(message);
  }

  public DatabaseUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
