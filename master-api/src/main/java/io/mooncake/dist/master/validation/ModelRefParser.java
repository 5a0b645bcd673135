package io.mooncake.dist.master.validation;

import io.mooncake.dist.scheduler.domain.ModelRef;

/** The {@code model} object, and the manifest's copy of it that must agree. */
final class ModelRefParser {
  private ModelRefParser() {}

  static ModelRef parse(Fields model) {
    String modelId = Identifiers.modelId(model.requiredString("model_id"), model.path("model_id"));
    String revision =
        Identifiers.token(
            model.requiredString("revision"), model.path("revision"), Identifiers.MAX_REVISION);
    String format =
        Identifiers.token(
            model.requiredString("format"), model.path("format"), Identifiers.MAX_FORMAT);
    String provider =
        Identifiers.token(
            model.requiredString("provider"), model.path("provider"), Identifiers.MAX_PROVIDER);
    return new ModelRef(modelId, revision, format, provider);
  }

  /**
   * The manifest repeats the model identity; a mismatch means the caller paired a manifest with the
   * wrong model, which would stage one model's bytes under another's name.
   */
  static void requireSame(Fields manifest, ModelRef model) {
    requireEqual(manifest, "model_id", model.modelId());
    requireEqual(manifest, "revision", model.revision());
    requireEqual(manifest, "format", model.format());
    requireEqual(manifest, "provider", model.provider());
  }

  private static void requireEqual(Fields manifest, String name, String expected) {
    String actual = manifest.requiredString(name);
    if (!actual.equals(expected)) {
      throw new ValidationException(
          manifest.path(name),
          "must equal model."
              + name
              + " ("
              + Texts.quote(expected)
              + "), got "
              + Texts.quote(actual));
    }
  }
}
