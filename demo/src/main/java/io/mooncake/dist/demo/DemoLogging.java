package io.mooncake.dist.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Library logging for the demo. Its own output is plain {@code System.out} lines; the only library
 * that logs is Testcontainers, whose default (logback without a config file: DEBUG on the console)
 * would bury those lines, and whose failures the demo reports itself in one line.
 */
final class DemoLogging {
  private DemoLogging() {}

  static void quiet() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(Level.WARN);
      context.getLogger("org.testcontainers").setLevel(Level.OFF);
      context.getLogger("com.github.dockerjava").setLevel(Level.OFF);
      context.getLogger("tc").setLevel(Level.OFF);
    }
  }
}
