package io.mooncake.dist.cli;

import io.mooncake.dist.cli.format.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Lets an option take {@code 500ms}, {@code 1s} or {@code 2m} (picocli alone wants ISO {@code
 * PT1S}).
 */
public final class DurationConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
