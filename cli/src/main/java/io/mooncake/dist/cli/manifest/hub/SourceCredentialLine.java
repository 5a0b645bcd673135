package io.mooncake.dist.cli.manifest.hub;

import java.net.URI;

/**
 * The line of a seed's {@code --source-credentials} file that sends a Hugging Face token to the
 * hub: {@code <endpoint>/ Authorization: Bearer <HF token>}. The token itself is never printed; the
 * user puts it in place of the placeholder. The prefix is the endpoint, so the header goes to the
 * hub's resolve URLs and, per the seed's rules, not to the CDN the hub redirects to.
 */
public final class SourceCredentialLine {
  public static final String PLACEHOLDER = "<HF token>";

  private SourceCredentialLine() {}

  public static String forHub(URI endpoint) {
    return endpoint + "/ Authorization: Bearer " + PLACEHOLDER;
  }
}
