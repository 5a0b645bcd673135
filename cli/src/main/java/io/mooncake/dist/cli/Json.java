package io.mooncake.dist.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

/** The CLI's JSON mapper: pretty output for humans, plain trees for the wire. */
public final class Json {
  public static final ObjectMapper MAPPER = new ObjectMapper();

  /** Pretty printing, for manifests and {@code --json} output. */
  public static final ObjectMapper PRETTY =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private Json() {}
}
