package io.mooncake.dist.scheduler.domain;

/** The identity of one model version: {@code model_id + revision + format + provider}. */
public record ModelRef(String modelId, String revision, String format, String provider) {
  /** {@code provider/model_id@revision (format)}: how messages and logs name a model. */
  public String describe() {
    return provider + "/" + modelId + "@" + revision + " (" + format + ")";
  }
}
