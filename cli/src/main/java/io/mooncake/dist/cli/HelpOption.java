package io.mooncake.dist.cli;

import picocli.CommandLine.Option;

/**
 * {@code -h, --help} for a subcommand. Subcommands mix in only this, not picocli's standard
 * options, because a {@code --version} on each of them would print nothing.
 */
public final class HelpOption {
  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help message and exit.")
  boolean help;
}
