package io.mooncake.dist.cli;

import io.mooncake.dist.cli.format.ByteSizes;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Lets an option take {@code 64MiB}, {@code 16M} or {@code 1048576}. */
public final class SizeConverter implements ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      return ByteSizes.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
