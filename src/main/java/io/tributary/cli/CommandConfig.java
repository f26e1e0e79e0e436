package io.tributary.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/** The {@code --command-config FILE} of the admin commands: a properties file of client settings, as Kafka's. */
final class CommandConfig {
  private CommandConfig() {}

  /**
   * The settings in {@code file}; empty when {@code file} is null.
   *
   * @throws CliException if the file cannot be read
   */
  static Map<String, Object> load(Path file) {
    Map<String, Object> config = new HashMap<>();
    if (file != null) {
      Properties props = new Properties();
      try (Reader in = Files.newBufferedReader(file)) {
        props.load(in);
      } catch (IOException e) {
        throw new CliException("Cannot read --command-config " + file + ": " + e.getMessage(), e);
      }
      props.stringPropertyNames().forEach(k -> config.put(k, props.getProperty(k)));
    }
    return config;
  }
}
