package io.mooncake.dist.scheduler.domain;

import java.util.Locale;

/** The RFC's placement states; {@code STAGED} is the only success. */
public enum PlacementState {
  PLANNED,
  ACQUIRING,
  STAGED,
  FAILED;

  public boolean terminal() {
    return this == STAGED || this == FAILED;
  }

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static PlacementState fromWire(String s) {
    return valueOf(s.toUpperCase(Locale.ROOT));
  }
}
