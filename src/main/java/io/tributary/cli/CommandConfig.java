package io.tributary.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;

/** The {@code --command-config FILE} of the admin commands: a properties file of client settings, as Kafka's. */
final class CommandConfig {
  private CommandConfig() {}

  /**
   * The settings in {@code file}, checked as an admin client's ({@link ClientSettingsCheck}); empty when {@code
   * file} is null.
   *
   * @throws CommandLine.ParameterException (a usage error) if the file cannot be read, as {@code --config}'s
   *     ({@link CliException#requireReadableFile}), or a setting has a bad value
   */
  static Map<String, Object> load(CommandLine commandLine, Path file) {
    Map<String, Object> config = new HashMap<>();
    if (file == null) {
      return config;
    }
    CliException.requireReadableFile(commandLine, "--command-config", file);
    Properties props = new Properties();
    try (Reader in = Files.newBufferedReader(file)) {
      props.load(in);
    } catch (IOException e) { // e.g. removed since the check
      throw new CommandLine.ParameterException(commandLine,
          "Cannot read --command-config " + file + ": " + CliException.readFailure(e));
    }
    props.stringPropertyNames().forEach(k -> config.put(k, props.getProperty(k)));
    ClientSettingsCheck.check(commandLine, "--command-config " + file, ClientSettingsCheck.Kind.ADMIN, config);
    return config;
  }
}
