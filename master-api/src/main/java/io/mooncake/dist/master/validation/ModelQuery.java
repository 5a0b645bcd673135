package io.mooncake.dist.master.validation;

import io.mooncake.dist.scheduler.domain.ModelRef;
import java.util.Optional;
import java.util.function.Function;

/**
 * A model identity given as query parameters {@code model_id}, {@code revision}, {@code format} and
 * {@code provider}: all four required, each checked by the rules of the create request's {@code
 * model} object (the field named in errors is the parameter's name).
 */
public final class ModelQuery {
  private ModelQuery() {}

  /** {@code param} returns a query parameter's first value, if any. */
  public static ModelRef parse(Function<String, Optional<String>> param) {
    String modelId = Identifiers.modelId(required(param, "model_id"), "model_id");
    String revision =
        Identifiers.token(required(param, "revision"), "revision", Identifiers.MAX_REVISION);
    String format = Identifiers.token(required(param, "format"), "format", Identifiers.MAX_FORMAT);
    String provider =
        Identifiers.token(required(param, "provider"), "provider", Identifiers.MAX_PROVIDER);
    return new ModelRef(modelId, revision, format, provider);
  }

  private static String required(Function<String, Optional<String>> param, String name) {
    String value = param.apply(name).orElse("");
    if (value.isEmpty()) {
      throw new ValidationException(name, "query parameter " + name + " is required");
    }
    return value;
  }
}
