package io.mooncake.dist.cli.manifest.hub;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * A Hugging Face access token and where it came from, found the way {@code huggingface_hub} finds
 * it: {@code $HF_TOKEN}, else the file {@code $HF_TOKEN_PATH}, else {@code $HF_HOME/token} ({@code
 * $HF_HOME} defaulting to {@code $XDG_CACHE_HOME/huggingface}, then {@code ~/.cache/huggingface}).
 * {@link #toString()} never shows the value.
 *
 * @param source where the token was read, for messages: {@code $HF_TOKEN} or a file path
 */
public record HubToken(String value, String source) {

  public HubToken {
    if (value.isEmpty() || !value.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException(
          "the Hugging Face token from " + source + " must be one word of printable ASCII");
    }
  }

  /** The value for an {@code Authorization} header. */
  public String authorization() {
    return "Bearer " + value;
  }

  /**
   * The token the environment names, if any.
   *
   * @param env the process environment
   * @param home the user's home folder
   * @throws IllegalArgumentException when a named token file cannot be read or is not one token
   */
  public static Optional<HubToken> resolve(Map<String, String> env, Path home) {
    String direct = env.get("HF_TOKEN");
    if (direct != null && !direct.isBlank()) {
      return Optional.of(new HubToken(direct.strip(), "$HF_TOKEN"));
    }
    String tokenPath = env.get("HF_TOKEN_PATH");
    if (tokenPath != null && !tokenPath.isBlank()) {
      return fromFile(Path.of(tokenPath.strip()), true);
    }
    return fromFile(hfHome(env, home).resolve("token"), false);
  }

  /**
   * The token in {@code file}: its content less surrounding whitespace.
   *
   * @param required whether a missing file is an error (a file the user named) or no token (the
   *     default location)
   */
  public static Optional<HubToken> fromFile(Path file, boolean required) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (NoSuchFileException e) {
      if (required) {
        throw new IllegalArgumentException("Hugging Face token file " + file + " does not exist");
      }
      return Optional.empty();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "cannot read the Hugging Face token file " + file + ": " + e.getMessage());
    }
    if (text.isEmpty()) {
      if (required) {
        throw new IllegalArgumentException("Hugging Face token file " + file + " is empty");
      }
      return Optional.empty();
    }
    return Optional.of(new HubToken(text, file.toString()));
  }

  private static Path hfHome(Map<String, String> env, Path home) {
    String hfHome = env.get("HF_HOME");
    if (hfHome != null && !hfHome.isBlank()) {
      return Path.of(hfHome.strip());
    }
    String xdg = env.get("XDG_CACHE_HOME");
    Path cache = xdg != null && !xdg.isBlank() ? Path.of(xdg.strip()) : home.resolve(".cache");
    return cache.resolve("huggingface");
  }

  @Override
  public String toString() {
    return "HubToken[from " + source + "]";
  }
}
