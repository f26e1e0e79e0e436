package io.tributary.cli;

import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tributary topics}: create, list, describe and delete topics, as Kafka's {@code kafka-topics}. */
@Command(
    name = "topics",
    description = "Create, list, describe or delete topics (as Kafka's kafka-topics).")
final class TopicsCommand implements Callable<Integer> {
  @Mixin BootstrapOption bootstrap;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Action action;

  static final class Action {
    @Option(names = "--create", required = true, description = "Create a topic (needs --topic).")
    boolean create;

    @Option(names = "--list", required = true,
        description = "List topic names, one per line, internal topics (__consumer_offsets) too unless "
            + "--exclude-internal.")
    boolean list;

    @Option(names = "--describe", required = true,
        description = "Describe the topics --topic matches (a regular expression), or every topic.")
    boolean describe;

    @Option(names = "--delete", required = true,
        description = "Delete the topics --topic matches (a regular expression) and their records; never internal "
            + "topics.")
    boolean delete;
  }

  @Option(names = "--exclude-internal",
      description = "With --list or --describe: leave out internal topics (__consumer_offsets), as Kafka's.")
  boolean excludeInternal;

  @Option(names = "--topic", paramLabel = "TOPIC",
      description = "The topic name for --create; with --list, --describe and --delete a regular expression the "
          + "whole name must match, commas separating alternatives, as Kafka's: escape a dot ('a\\.b') to match "
          + "it alone.")
  String topic;

  @Option(
      names = "--partitions",
      paramLabel = "N",
      description = "Partitions of the new topic (default: the broker's num.partitions).")
  Integer partitions;

  @Option(
      names = "--replication-factor",
      paramLabel = "R",
      description = "Replicas per partition (default: the broker's default.replication.factor).")
  Short replicationFactor;

  @Option(
      names = "--config",
      paramLabel = "KEY=VALUE",
      description = "A topic config override for --create, e.g. retention.ms=60000 (repeatable).")
  Map<String, String> configs = new LinkedHashMap<>();

  @Option(
      names = "--command-config",
      paramLabel = "FILE",
      description = "A properties file of client settings, e.g. request.timeout.ms=5000 (as Kafka's).")
  Path commandConfig;

  @Option(names = "--if-not-exists", description = "With --create: succeed if the topic exists already.")
  boolean ifNotExists;

  @Option(names = "--if-exists", description = "With --delete or --describe: succeed if the topic does not exist.")
  boolean ifExists;

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    validate();
    PrintWriter out = spec.commandLine().getOut();
    Map<String, Object> clientConfig = CommandConfig.load(spec.commandLine(), commandConfig);
    try (TributaryClient client = bootstrap.connect(spec.commandLine(), clientConfig);
        Admin admin = client.admin()) {
      if (action.create) {
        create(admin, out);
      } else if (action.list) {
        java.util.regex.Pattern filter = topicPattern();
        admin.listTopics(!excludeInternal).stream()
            .filter(t -> filter == null || filter.matcher(t).matches())
            .forEach(out::println);
      } else if (action.describe) {
        describe(admin, out);
      } else {
        delete(admin, out);
      }
    }
    out.flush();
    return Main.EXIT_OK;
  }

  /**
   * With {@code --list}, {@code --describe} and {@code --delete}, {@code --topic} is a Java regular expression the
   * whole name must match, as Kafka's {@code kafka-topics --topic} (whose commas also separate alternatives); null
   * without {@code --topic}. A bad expression is a usage error ({@link CommandLine.ParameterException}, exit 2).
   */
  private java.util.regex.Pattern topicPattern() {
    if (topic == null) {
      return null;
    }
    String regex = kafkaTopicRegex(topic);
    try {
      return java.util.regex.Pattern.compile(regex);
    } catch (java.util.regex.PatternSyntaxException e) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--topic with --" + (action.list ? "list" : action.describe ? "describe" : "delete")
              + " is a regular expression, and '" + topic + "' is not one"
              + (topic.indexOf(',') >= 0 ? " (commas separate alternatives, as in Kafka's, so a counted quantifier "
                  + "{m,n} cannot be written: it was read as '" + regex + "')" : "") + ": " + e.getDescription());
    }
  }

  /**
   * The regular expression {@code --topic} stands for, as Kafka's {@code TopicFilter.IncludeList}: trimmed, commas
   * turned into {@code |}, spaces removed, and quotes ({@code "} or {@code '}) at its start and end dropped; so
   * {@code "events, orders"} names both topics.
   */
  static String kafkaTopicRegex(String topic) {
    return topic.trim().replace(',', '|').replace(" ", "").replaceAll("^[\"']+", "").replaceAll("[\"']+$", "");
  }

  private void validate() {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    if (!action.create) {
      topicPattern(); // a bad expression is a usage error before connecting
    }
    if ((action.create || action.delete) && topic == null) {
      throw new CommandLine.ParameterException(
          cl, "Missing required option '--topic=TOPIC' for " + (action.create ? "--create" : "--delete"));
    }
    if (!action.create && (partitions != null || replicationFactor != null || !configs.isEmpty() || ifNotExists)) {
      throw new CommandLine.ParameterException(
          cl, "--partitions, --replication-factor, --config and --if-not-exists go with --create only");
    }
    if (ifExists && !(action.delete || action.describe)) {
      throw new CommandLine.ParameterException(cl, "--if-exists goes with --delete or --describe only");
    }
    if (excludeInternal && !(action.list || action.describe)) {
      throw new CommandLine.ParameterException(cl, "--exclude-internal goes with --list or --describe only");
    }
    if (partitions != null && partitions < 1) {
      throw new CommandLine.ParameterException(cl, "--partitions must be at least 1, was " + partitions);
    }
    if (replicationFactor != null && replicationFactor < 1) {
      throw new CommandLine.ParameterException(cl, "--replication-factor must be at least 1, was " + replicationFactor);
    }
  }

  private void create(Admin admin, PrintWriter out) {
    try {
      admin.createTopic(
          topic,
          partitions == null ? -1 : partitions,
          replicationFactor == null ? (short) -1 : replicationFactor,
          configs);
      out.println("Created topic " + topic + ".");
    } catch (TributaryException e) {
      if (!(ifNotExists && e.errorCode() == ErrorCode.TOPIC_ALREADY_EXISTS)) {
        throw e;
      }
    }
  }

  /**
   * The topics {@code --topic} names for {@code --describe} or {@code --delete}: the existing names its pattern matches
   * (internal topics too unless {@code internal} is false), sorted.
   *
   * @throws TributaryException {@code UNKNOWN_TOPIC_OR_PARTITION} when it matches none, as Kafka's "does not exist as
   *     expected"; {@code INVALID_REQUEST} when {@code internal} is false and it matches internal topics only (as
   *     deleting {@code __consumer_offsets} through the admin API)
   */
  private List<String> matchingTopics(Admin admin, boolean internal) {
    java.util.regex.Pattern pattern = topicPattern();
    List<String> names = admin.listTopics(internal).stream()
        .filter(t -> pattern.matcher(t).matches())
        .sorted()
        .toList();
    if (names.isEmpty()) {
      if (!internal && admin.listTopics(true).stream().anyMatch(t -> pattern.matcher(t).matches())) {
        throw new TributaryException(ErrorCode.INVALID_REQUEST,
            "Topic '" + topic + "' matches only internal topics, which are never deleted");
      }
      throw new TributaryException(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Topic '" + topic + "' does not exist");
    }
    return names;
  }

  private void describe(Admin admin, PrintWriter out) {
    List<TopicDescription> topics;
    try {
      topics = admin.describeTopics(topic == null ? List.of() : matchingTopics(admin, true));
    } catch (TributaryException e) {
      if (ifExists && e.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        return;
      }
      throw e;
    }
    for (TopicDescription d : topics) {
      if (!(excludeInternal && TopicNames.isInternal(d.name()))) {
        describeLines(d).forEach(out::println);
      }
    }
  }

  private void delete(Admin admin, PrintWriter out) {
    List<String> names;
    try {
      names = matchingTopics(admin, false);
    } catch (TributaryException e) {
      if (ifExists && e.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        return;
      }
      throw e;
    }
    for (String name : names) {
      try {
        admin.deleteTopic(name);
        out.println("Deleted topic " + name + ".");
      } catch (TributaryException e) { // deleted by someone else since the listing: gone, as --if-exists asks
        if (!(ifExists && e.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)) {
          throw e;
        }
      }
    }
  }

  /**
   * The lines {@code --describe} prints for one topic, in Kafka's layout: a topic line
   * ({@code Topic: t\tTopicId: id\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: k=v,...}) then one line per
   * partition ({@code \tTopic: t\tPartition: 0\tLeader: 127.0.0.1:9092\tReplicas: ...\tIsr: ...\tLeaderEpoch: 0}).
   * Brokers are shown as their {@code host:port} (Kafka shows numeric broker ids); a partition without a leader shows
   * {@code none}.
   */
  static List<String> describeLines(TopicDescription d) {
    List<PartitionDescription> parts = d.partitions() == null ? List.of() : d.partitions();
    int rf = parts.isEmpty() || parts.get(0).replicas() == null ? 0 : parts.get(0).replicas().size();
    String configs = d.configs() == null
        ? ""
        : new TreeMap<>(d.configs())
            .entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(","));
    List<String> lines = new ArrayList<>();
    lines.add("Topic: " + d.name() + "\tTopicId: " + d.topicId() + "\tPartitionCount: " + parts.size()
        + "\tReplicationFactor: " + rf + "\tConfigs: " + configs);
    for (PartitionDescription p : parts) {
      lines.add("\tTopic: " + d.name() + "\tPartition: " + p.partition() + "\tLeader: " + node(p.leader())
          + "\tReplicas: " + nodes(p.replicas()) + "\tIsr: " + nodes(p.isr()) + "\tLeaderEpoch: " + p.leaderEpoch());
    }
    return lines;
  }

  /** {@code akka://tributary@127.0.0.1:9092} → {@code 127.0.0.1:9092}; null or empty → {@code none}. */
  static String node(String address) {
    if (address == null || address.isEmpty()) {
      return "none";
    }
    int at = address.lastIndexOf('@');
    return at >= 0 ? address.substring(at + 1) : address;
  }

  private static String nodes(List<String> addresses) {
    return addresses == null ? "" : addresses.stream().map(TopicsCommand::node).collect(Collectors.joining(","));
  }
}
