package io.mooncake.dist.master.validation;

import io.mooncake.dist.scheduler.domain.JobRequest;
import io.mooncake.dist.scheduler.domain.ManifestFile;
import io.mooncake.dist.scheduler.domain.SourceRules;
import java.net.URI;
import java.util.List;
import java.util.Optional;

/**
 * The master's side of {@link SourceRules}: a request naming a source the rules do not allow is
 * refused at validation, before anything is written, naming the field. The rules are then stored
 * with the job, and the seed applies them again to every redirect hop.
 */
public final class SourcePolicy {
  /** Every source: {@code --allow-any-source}. */
  public static final SourcePolicy ALLOW_ALL = new SourcePolicy(SourceRules.ANY);

  /** No source: a master started without a source option. */
  public static final SourcePolicy NONE = new SourcePolicy(SourceRules.NONE);

  private final SourceRules rules;

  private SourcePolicy(SourceRules rules) {
    this.rules = rules;
  }

  public static SourcePolicy of(SourceRules rules) {
    return new SourcePolicy(rules);
  }

  /**
   * Parses a comma-separated list of {@code file:///dir/} roots and {@code http(s)://host[:port]}
   * origins; an empty list allows nothing.
   *
   * @throws IllegalArgumentException naming the entry that is neither
   */
  public static SourcePolicy parse(String spec) {
    return of(SourceRules.parse(spec, false, false));
  }

  public SourceRules rules() {
    return rules;
  }

  public boolean allowsAll() {
    return rules.anySource() && !rules.publicOnly();
  }

  /** Refuses the first file whose source the policy does not allow, naming its field. */
  public void check(JobRequest request) {
    List<ManifestFile> files = request.manifest().files();
    for (int i = 0; i < files.size(); i++) {
      String url = files.get(i).downloadUrl();
      Optional<String> refusal = rules.refusal(url);
      if (refusal.isEmpty() && (url.startsWith("http://") || url.startsWith("https://"))) {
        refusal = rules.refusalOfAddresses(URI.create(url).getHost());
      }
      if (refusal.isPresent()) {
        throw new ValidationException("manifest.files[" + i + "].download_url", refusal.get());
      }
    }
  }

  boolean allows(String url) {
    return rules.refusal(url).isEmpty();
  }
}
