package io.mooncake.dist.scheduler.metrics;

import java.util.List;

/**
 * Writes Prometheus text exposition format 0.0.4: a {@code # HELP} and a {@code # TYPE} line per
 * family, then its samples. Label values are escaped as the format requires (backslash, double
 * quote, line feed), so any node id or route is safe to expose.
 */
public final class PrometheusText {
  /** The content type scrapers negotiate for this format. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final StringBuilder out = new StringBuilder(4096);

  /** Starts a family; {@code type} is {@code gauge}, {@code counter} or {@code summary}. */
  public PrometheusText family(String name, String type, String help) {
    out.append("# HELP ").append(name).append(' ').append(escapeHelp(help)).append('\n');
    out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    return this;
  }

  /** One sample; {@code labels} alternates names and values. */
  public PrometheusText sample(String name, List<String> labels, double value) {
    out.append(name);
    if (!labels.isEmpty()) {
      out.append('{');
      for (int i = 0; i < labels.size(); i += 2) {
        if (i > 0) {
          out.append(',');
        }
        out.append(labels.get(i)).append("=\"").append(escapeLabel(labels.get(i + 1))).append('"');
      }
      out.append('}');
    }
    out.append(' ').append(number(value)).append('\n');
    return this;
  }

  public String text() {
    return out.toString();
  }

  static String escapeLabel(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  static String escapeHelp(String help) {
    return help.replace("\\", "\\\\").replace("\n", "\\n");
  }

  /**
   * Integral values without a fraction (counts read better); others as Go's ParseFloat accepts
   * them.
   */
  static String number(double value) {
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return Long.toString((long) value);
    }
    return Double.toString(value);
  }
}
