package io.tributary.cli;

import io.tributary.client.ClientConfig;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine;

/**
 * Checks the client settings a command was given ({@code --producer-property}, {@code --consumer-property}, {@code
 * --producer-props}, {@code --consumer-props}, {@code --command-config} files) before it connects, so that a bad value
 * ({@code linger.ms=abc}, {@code acks=2}, {@code heartbeat.interval.ms} not below {@code session.timeout.ms}) is a
 * usage error naming the key and the value, exit {@value Main#EXIT_USAGE}, not a failure after the connection was
 * made. Unknown keys are left to the client, which ignores them with a warning (as Kafka's clients).
 *
 * <p>The rules are the client library's own: its settings parsers ({@code ProducerSettings.from}, {@code
 * ConsumerSettings.from}, {@code AdminSettings.from}, which the client runs when a producer, consumer or admin is
 * made) are called here. They are not public API, so they are looked up reflectively; if a later client renames
 * them, this check is skipped (a debug line says so) and the client still rejects the value after connecting (exit
 * {@value Main#EXIT_FAILURE}), which {@code CommandLineTest} would show. A public validator in {@code
 * io.tributary.client} would replace this class.
 */
final class ClientSettingsCheck {
  /** What the settings are for. */
  enum Kind {
    ADMIN("io.tributary.client.AdminSettings"),
    PRODUCER("io.tributary.client.ProducerSettings"),
    CONSUMER("io.tributary.client.ConsumerSettings");

    private final String parserClass;

    Kind(String parserClass) {
      this.parserClass = parserClass;
    }
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ClientSettingsCheck.class);

  private ClientSettingsCheck() {}

  /**
   * Checks {@code config} as the client will when it makes a {@code kind}.
   *
   * @param source where the settings came from, for the message: {@code --producer-property}, {@code
   *     --command-config client.properties}
   * @throws CommandLine.ParameterException {@code <source>: Invalid value <value> for configuration <key>: <why>}
   */
  static void check(CommandLine commandLine, String source, Kind kind, Map<String, ?> config) {
    Method parser = parser(kind);
    if (parser == null) {
      return;
    }
    Map<String, Object> copy = new HashMap<>(config);
    // the consumer's parser numbers consumers without a client.id; a check must not use up a number
    copy.putIfAbsent(ClientConfig.CLIENT_ID, "settings-check");
    try {
      parser.invoke(null, copy);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof IllegalArgumentException bad) {
        throw new CommandLine.ParameterException(commandLine, source + ": " + bad.getMessage());
      }
      LOG.debug("Client settings check of {} failed unexpectedly; the client checks them itself", kind, e);
    } catch (IllegalAccessException e) {
      LOG.debug("Client settings check of {} skipped", kind, e);
    }
  }

  private static Method parser(Kind kind) {
    try {
      Method m = Class.forName(kind.parserClass).getDeclaredMethod("from", Map.class);
      m.setAccessible(true);
      return m;
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("No client settings parser {}; settings are checked by the client after connecting",
          kind.parserClass, e);
      return null;
    }
  }
}
