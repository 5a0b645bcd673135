package io.mooncake.dist.cli.manifest.hub;

import io.mooncake.dist.cli.manifest.ManifestBuilder;
import io.mooncake.dist.cli.manifest.UrlBase;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;

/**
 * The files of a hub model at a pinned commit, each with its size and SHA-256, ready for {@link
 * ManifestBuilder}. LFS files (the weights) take their SHA-256 from the tree listing; every other
 * file (config, tokenizer: the hub keeps files over 10 MB in LFS, so these are small) is downloaded
 * once and hashed, after its bytes are matched against the commit's git blob id. No file goes into
 * the manifest without a SHA-256, so the seed verifies every byte it downloads. Hidden files
 * ({@code .gitattributes}) are skipped, as in a model folder.
 */
public final class HubModel {
  /**
   * What the hub gave.
   *
   * @param commit the commit the revision was pinned to
   * @param needsToken the repo is gated or private: the seed needs a token too
   * @param urlBase {@code <endpoint>/<repo>/resolve/<commit>/}
   * @param files sorted by path
   * @param skipped paths left out on purpose, with the reason
   */
  public record Listing(
      HubRef ref,
      String commit,
      boolean needsToken,
      UrlBase urlBase,
      List<ManifestBuilder.HashedFile> files,
      List<String> skipped) {}

  private HubModel() {}

  /**
   * Lists and hashes {@code ref}'s files.
   *
   * @param progress hears one line per step, for stderr
   */
  public static Listing list(HubClient client, HubRef ref, Consumer<String> progress)
      throws HubException {
    HubRevision revision = client.revision(ref);
    String commit = revision.commit();
    if (revision.needsToken() && client.token().isEmpty()) {
      throw new HubException(
          HubException.Kind.NOT_FOUND_OR_REFUSED,
          ref
              + ": "
              + ref.repoId()
              + " is gated or private, and no Hugging Face token was found: "
              + HubErrors.TOKEN_HINT
              + "; the seed will need the same token in its --source-credentials file");
    }
    progress.accept(ref + " is commit " + commit);
    List<HubEntry> entries = new ArrayList<>(client.files(ref, commit));
    entries.sort(Comparator.comparing(HubEntry::path));
    UrlBase base = UrlBase.parse(client.resolveBase(ref, commit));
    List<ManifestBuilder.HashedFile> files = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    for (HubEntry e : entries) {
      if (hidden(e.path())) {
        skipped.add(e.path() + " (hidden)");
        continue;
      }
      String sha256 =
          e.lfs() ? e.lfsSha256() : client.sha256(ref, commit, e, base.resolve(e.path()));
      files.add(new ManifestBuilder.HashedFile(e.path(), e.sizeBytes(), sha256));
    }
    return new Listing(
        ref, commit, revision.needsToken(), base, List.copyOf(files), List.copyOf(skipped));
  }

  private static boolean hidden(String path) {
    for (String segment : path.split("/")) {
      if (segment.startsWith(".")) {
        return true;
      }
    }
    return false;
  }
}
