package io.mooncake.dist.cli.manifest;

/**
 * What the operator chose for a manifest, defaults already applied.
 *
 * @param urlBase where the seed downloads from, ending in '/'; each file's relative path is
 *     appended
 * @param objectPrefix the start of every object id, without a trailing '/'
 */
public record ManifestOptions(
    String modelId,
    String revision,
    String format,
    String provider,
    long chunkSizeBytes,
    UrlBase urlBase,
    String objectPrefix) {

  public ManifestOptions {
    if (chunkSizeBytes <= 0) {
      throw new IllegalArgumentException("chunk size must be positive, got " + chunkSizeBytes);
    }
  }

  /** The artifact key every file of the model shares. */
  public String artifactKey() {
    return modelId + "-" + revision;
  }
}
