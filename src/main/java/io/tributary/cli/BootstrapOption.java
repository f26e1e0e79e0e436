package io.tributary.cli;

import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.protocol.TopicDescription;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The {@code --bootstrap-server HOST:PORT[,HOST:PORT...]} option of every client command, and connecting with it. As
 * Kafka's: give every node of a cluster, so that the client can move to another node when its node fails.
 */
final class BootstrapOption {
  private static final Pattern HOST_PORT = Pattern.compile("[^:\\s]+:\\d{1,5}");

  @Option(
      names = "--bootstrap-server",
      required = true,
      paramLabel = "HOST:PORT[,HOST:PORT...]",
      description = "The brokers to connect to, comma-separated (e.g. 127.0.0.1:9092,127.0.0.1:9093).")
  String bootstrapServer;

  /**
   * Connects a client to the broker.
   *
   * @throws CommandLine.ParameterException if an address is not {@code host:port}
   * @throws io.tributary.client.TributaryException NETWORK_EXCEPTION when no broker answers
   */
  TributaryClient connect(CommandLine commandLine, Map<String, ?> config) {
    validate(commandLine);
    return TributaryClient.connect(bootstrapServer, config);
  }

  /**
   * The partition count of {@code topic}, asked of the controller: a topic that does not exist fails at once with
   * UNKNOWN_TOPIC_OR_PARTITION, where a producer or consumer would wait for it up to {@code max.block.ms} /
   * {@code default.api.timeout.ms} (60 s).
   */
  static int partitionCount(TributaryClient client, String topic) {
    try (Admin admin = client.admin()) {
      List<TopicDescription> found = admin.describeTopics(List.of(topic));
      return found.isEmpty() ? 0 : found.get(0).partitions().size();
    }
  }

  void validate(CommandLine commandLine) {
    for (String entry : bootstrapServer.split(",", -1)) {
      String e = entry.trim();
      if (!HOST_PORT.matcher(e).matches() || Integer.parseInt(e.substring(e.lastIndexOf(':') + 1)) > 65535) {
        throw new CommandLine.ParameterException(commandLine,
            "--bootstrap-server must be HOST:PORT[,HOST:PORT...], was '" + bootstrapServer + "'");
      }
    }
  }
}
