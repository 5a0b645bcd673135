/**
 * {@code mooncake manifest build}: turns a model folder (or, through {@code hub}, a Hugging Face
 * model) into the RFC's manifest. {@link io.mooncake.dist.cli.manifest.ModelFolder} picks the
 * files, {@link io.mooncake.dist.cli.manifest.FileHasher} streams each through SHA-256, {@link
 * io.mooncake.dist.cli.manifest.ManifestBuilder} lays out chunks and object ids (pure), and {@link
 * io.mooncake.dist.cli.manifest.ManifestJson} writes the RFC's field names.
 */
package io.mooncake.dist.cli.manifest;
