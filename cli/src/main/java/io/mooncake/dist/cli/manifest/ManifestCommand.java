package io.mooncake.dist.cli.manifest;

import io.mooncake.dist.cli.HelpOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code mooncake manifest}: groups the manifest subcommands (today, {@code build}). */
@Command(
    name = "manifest",
    description = "Work with model manifests (the RFC's 'manifest' object).",
    subcommands = BuildCommand.class)
public final class ManifestCommand implements Runnable {
  @Mixin HelpOption help;

  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new ParameterException(
        spec.commandLine(),
        "missing subcommand; one of: " + String.join(", ", spec.subcommands().keySet()));
  }
}
