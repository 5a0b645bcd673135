package io.mooncake.dist.scheduler.domain;

import java.util.Locale;

/** A task row's state. A retry moves a failed attempt back to {@code PENDING} on the same row. */
public enum TaskState {
  PENDING,
  PROCESSING,
  SUCCEEDED,
  FAILED,
  CANCELED;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static TaskState fromWire(String s) {
    return valueOf(s.toUpperCase(Locale.ROOT));
  }
}
