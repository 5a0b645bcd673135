package io.mooncake.dist.scheduler.domain;

import java.net.URI;

/**
 * Source URLs as errors, {@code last_error} and logs may show them: without the query string, the
 * fragment or user info, which is where presigned URLs keep their signatures ({@code
 * X-Amz-Signature=...}) and where credentials would sit.
 */
public final class SourceUrls {
  private SourceUrls() {}

  /** {@code url} without user info, query and fragment; {@code ?...} marks a dropped query. */
  public static String display(String url) {
    if (url == null) {
      return "null";
    }
    try {
      URI u = URI.create(url);
      if (u.getScheme() == null || u.isOpaque()) {
        return cut(url);
      }
      StringBuilder out = new StringBuilder(u.getScheme()).append("://");
      if (u.getRawAuthority() != null) {
        String authority = u.getRawAuthority();
        int at = authority.lastIndexOf('@');
        out.append(at >= 0 ? authority.substring(at + 1) : authority);
      }
      out.append(u.getRawPath() == null ? "" : u.getRawPath());
      if (u.getRawQuery() != null) {
        out.append("?...");
      }
      return out.toString();
    } catch (IllegalArgumentException e) {
      return cut(url);
    }
  }

  /** {@code display(uri.toString())}. */
  public static String display(URI uri) {
    return display(uri.toString());
  }

  private static String cut(String url) {
    int end = url.length();
    for (char c : new char[] {'?', '#'}) {
      int i = url.indexOf(c);
      if (i >= 0 && i < end) {
        end = i;
      }
    }
    String head = url.substring(0, end);
    int at = head.indexOf('@');
    int scheme = head.indexOf("://");
    if (at >= 0 && scheme >= 0 && at > scheme) {
      head = head.substring(0, scheme + 3) + head.substring(at + 1);
    }
    return end < url.length() ? head + "?..." : head;
  }
}
