package io.mooncake.dist.cli.manifest.hub;

/**
 * A file of a hub repo at a commit, as the tree API lists it.
 *
 * @param path '/'-separated, relative to the repo root
 * @param gitOid the git blob id (SHA-1 hex) of the file as committed; for an LFS file, of its
 *     pointer
 * @param lfsSha256 the content's SHA-256 (hex) when the file is stored in LFS, else null
 */
public record HubEntry(String path, long sizeBytes, String gitOid, String lfsSha256) {
  public boolean lfs() {
    return lfsSha256 != null;
  }
}
