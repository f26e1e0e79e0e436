package io.tributary.cli;

import io.tributary.client.ClientConfig;
import java.util.Map;
import picocli.CommandLine;

/**
 * Checks the client settings a command was given ({@code --producer-property}, {@code --consumer-property}, {@code
 * --producer-props}, {@code --consumer-props}, {@code --command-config} files) before it connects, so that a bad value
 * ({@code linger.ms=abc}, {@code acks=2}, {@code heartbeat.interval.ms} not below {@code session.timeout.ms}) is a
 * usage error naming the key and the value, exit {@value Main#EXIT_USAGE}, not a failure after the connection was
 * made. Unknown keys are left to the client, which ignores them with a warning (as Kafka's clients). The rules are the
 * client library's own ({@link ClientConfig#validateProducerSettings} and its siblings).
 */
final class ClientSettingsCheck {
  /** What the settings are for. */
  enum Kind {
    ADMIN,
    PRODUCER,
    CONSUMER
  }

  private ClientSettingsCheck() {}

  /**
   * Checks {@code config} as the client will when it makes a {@code kind}.
   *
   * @param source where the settings came from, for the message: {@code --producer-property}, {@code
   *     --command-config client.properties}
   * @throws CommandLine.ParameterException {@code <source>: Invalid value <value> for configuration <key>: <why>}
   */
  static void check(CommandLine commandLine, String source, Kind kind, Map<String, ?> config) {
    try {
      switch (kind) {
        case ADMIN -> ClientConfig.validateAdminSettings(config);
        case PRODUCER -> ClientConfig.validateProducerSettings(config);
        case CONSUMER -> ClientConfig.validateConsumerSettings(config);
      }
    } catch (IllegalArgumentException bad) {
      throw new CommandLine.ParameterException(commandLine, source + ": " + bad.getMessage());
    }
  }
}
