package io.mooncake.dist.cli.manifest.hub;

/**
 * A revision of a hub repo pinned to its commit.
 *
 * @param commit the 40-hex commit hash the revision named when asked
 * @param needsToken whether downloads need a token: the repo is private or gated
 */
public record HubRevision(String commit, boolean needsToken) {}
