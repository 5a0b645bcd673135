package io.mooncake.dist.cli.manifest;

import java.nio.file.Path;

/** A file of the model: its manifest path (relative, '/'-separated) and where to read it. */
public record ModelFile(String relativePath, Path path) {}
