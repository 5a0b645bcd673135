/**
 * {@code mooncake manifest build hf://<org>/<name>[@<revision>]}: the Hugging Face hub as a model
 * source. {@link io.mooncake.dist.cli.manifest.hub.HubRef} parses the reference, {@link
 * io.mooncake.dist.cli.manifest.hub.HubToken} finds the token as {@code huggingface_hub} does,
 * {@link io.mooncake.dist.cli.manifest.hub.HubClient} speaks the hub's HTTP API (revision, paged
 * tree, resolve) and {@link io.mooncake.dist.cli.manifest.hub.HubErrors} words its refusals, and
 * {@link io.mooncake.dist.cli.manifest.hub.HubModel} turns a pinned commit into hashed files for
 * {@link io.mooncake.dist.cli.manifest.ManifestBuilder}.
 */
package io.mooncake.dist.cli.manifest.hub;
