package io.mooncake.dist.scheduler.domain;

import java.util.Locale;

/** The RFC's job states; the wire form is lower case. */
public enum JobStatus {
  PLANNED,
  SEEDING,
  REPLICATING,
  COMPLETED,
  FAILED,
  CANCELED;

  public boolean terminal() {
    return this == COMPLETED || this == FAILED || this == CANCELED;
  }

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static JobStatus fromWire(String s) {
    return valueOf(s.toUpperCase(Locale.ROOT));
  }
}
