package io.mooncake.dist.cli.manifest.hub;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code rel="next"} target of RFC 8288 {@code Link} headers, which is how the hub pages its
 * tree listing ({@code Link: <https://huggingface.co/api/...?cursor=...>; rel="next"}).
 */
final class LinkHeader {
  private static final Pattern LINK = Pattern.compile("<([^>]*)>\\s*((?:;\\s*[^;,]*)*)");
  private static final Pattern REL_NEXT =
      Pattern.compile(";\\s*rel\\s*=\\s*\"?([^\";]*)\"?", Pattern.CASE_INSENSITIVE);

  private LinkHeader() {}

  /** The first link whose {@code rel} includes {@code next}, over all given header values. */
  static Optional<String> next(List<String> values) {
    for (String value : values) {
      Matcher link = LINK.matcher(value);
      while (link.find()) {
        Matcher rel = REL_NEXT.matcher(link.group(2));
        while (rel.find()) {
          for (String r : rel.group(1).strip().split("\\s+")) {
            if (r.equalsIgnoreCase("next")) {
              return Optional.of(link.group(1).strip());
            }
          }
        }
      }
    }
    return Optional.empty();
  }
}
