package io.mooncake.dist.worker.http;

import java.util.List;

/**
 * Writes Prometheus text exposition format 0.0.4 (the node worker's copy of the master's
 * writer, which it must not depend on): {@code # HELP} and {@code # TYPE} per family, then its
 * samples, with label values escaped (backslash, double quote, line feed).
 */
final class PrometheusText {
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final StringBuilder out = new StringBuilder(2048);

  PrometheusText family(String name, String type, String help) {
    out.append("# HELP ").append(name).append(' ').append(escapeHelp(help)).append('\n');
    out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    return this;
  }

  /** One sample; {@code labels} alternates names and values. */
  PrometheusText sample(String name, List<String> labels, double value) {
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

  String text() {
    return out.toString();
  }

  static String escapeLabel(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  static String escapeHelp(String help) {
    return help.replace("\\", "\\\\").replace("\n", "\\n");
  }

  static String number(double value) {
    if (value == Math.rint(value) && Math.abs(value) < 1e15) {
      return Long.toString((long) value);
    }
    return Double.toString(value);
  }
}
