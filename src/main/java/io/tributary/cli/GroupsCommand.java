package io.tributary.cli;

import io.tributary.client.Admin;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol.DescribeGroupResponse;
import io.tributary.protocol.GroupProtocol.GroupListing;
import io.tributary.protocol.GroupProtocol.MemberDescription;
import io.tributary.protocol.GroupProtocol.PartitionLag;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.TopicDescription;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary groups}: list, describe, reset the offsets of, and delete consumer groups, as Kafka's
 * {@code kafka-consumer-groups}.
 */
@Command(
    name = "groups",
    description = {
      "List, describe, reset the offsets of, or delete consumer groups (as Kafka's kafka-consumer-groups).",
      "--describe shows per partition the committed offset, the log end offset, the lag and the owning member;"
          + " --reset-offsets is a dry run unless --execute, and is refused while the group has active members."
    })
final class GroupsCommand implements Callable<Integer> {
  /** Kafka's ListOffsets timestamps: the log start offset and the high watermark. */
  private static final long EARLIEST_TIMESTAMP = -2;
  private static final long LATEST_TIMESTAMP = -1;

  /** What a missing value is shown as. */
  static final String NONE = "-";

  @Mixin BootstrapOption bootstrap;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Action action;

  static final class Action {
    @Option(names = "--list", required = true, description = "List consumer groups, one id per line.")
    boolean list;

    @Option(
        names = "--describe",
        required = true,
        description = "Describe --group: offsets and lag per partition (default), --members, or --state.")
    boolean describe;

    @Option(
        names = "--reset-offsets",
        required = true,
        description = "Reset the committed offsets of --group (needs --topic or --all-topics, and one of --to-earliest,"
            + " --to-latest, --to-offset, --shift-by). A dry run unless --execute.")
    boolean resetOffsets;

    @Option(names = "--delete", required = true, description = "Delete --group and its committed offsets.")
    boolean delete;
  }

  @Option(names = "--group", paramLabel = "GROUP", description = "The consumer group.")
  String group;

  @Option(
      names = "--topic",
      paramLabel = "TOPIC[:P,...]",
      description = "With --reset-offsets: a topic (all its partitions) or some of its partitions, e.g. t:0,2"
          + " (repeatable).")
  List<String> topics = new ArrayList<>();

  @Option(
      names = "--all-topics",
      description = "With --reset-offsets: every partition the group has committed offsets for.")
  boolean allTopics;

  @Option(names = "--to-earliest", description = "Reset to the earliest offset (the log start).")
  boolean toEarliest;

  @Option(names = "--to-latest", description = "Reset to the latest offset (the log end).")
  boolean toLatest;

  @Option(names = "--to-offset", paramLabel = "N", description = "Reset to offset N (kept within earliest..latest).")
  Long toOffset;

  @Option(
      names = "--shift-by",
      paramLabel = "N",
      description = "Move the committed offset by N (may be negative; kept within earliest..latest).")
  Long shiftBy;

  @Option(names = "--dry-run", description = "With --reset-offsets: only show the new offsets (the default).")
  boolean dryRun;

  @Option(names = "--execute", description = "With --reset-offsets: write the new offsets.")
  boolean execute;

  @Option(names = "--members", description = "With --describe: the members and their partitions.")
  boolean members;

  @Option(names = "--state", description = "With --describe or --list: the group's state.")
  boolean state;

  @Option(
      names = "--command-config",
      paramLabel = "FILE",
      description = "A properties file of client settings, e.g. request.timeout.ms=5000 (as Kafka's).")
  Path commandConfig;

  @Spec CommandLine.Model.CommandSpec spec;

  /** How {@code --reset-offsets} computes the new offsets. */
  enum Scenario {
    TO_EARLIEST,
    TO_LATEST,
    TO_OFFSET,
    SHIFT_BY
  }

  /** A {@code --topic} value: a topic and the partitions asked (empty: all). */
  record TopicSpec(String topic, List<Integer> partitions) {}

  @Override
  public Integer call() {
    List<TopicSpec> specs = validate();
    if (group != null && group.isEmpty()) {
      throw new TributaryException(ErrorCode.INVALID_GROUP_ID, "group.id must not be empty");
    }
    CommandLine cl = spec.commandLine();
    PrintWriter out = cl.getOut();
    try (TributaryClient client = bootstrap.connect(cl, CommandConfig.load(cl, commandConfig));
        Admin admin = client.admin()) {
      if (action.list) {
        list(admin, out);
      } else if (action.describe) {
        describe(admin, out);
      } else if (action.resetOffsets) {
        reset(admin, specs, out, cl.getErr());
      } else {
        admin.deleteConsumerGroup(group);
        out.println("Deleted consumer group '" + group + "'.");
      }
    }
    out.flush();
    return Main.EXIT_OK;
  }

  // ---------------------------------------------------------------------------------------------------- validation

  /** Usage errors ({@link Main#EXIT_USAGE}); returns the parsed {@code --topic} values. */
  private List<TopicSpec> validate() {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    String actionName = action.list ? "--list" : action.describe ? "--describe"
        : action.resetOffsets ? "--reset-offsets" : "--delete";
    if (action.list) {
      if (group != null) {
        throw new CommandLine.ParameterException(cl, "--group does not go with --list");
      }
    } else if (group == null) {
      throw new CommandLine.ParameterException(cl, "Missing required option '--group=GROUP' for " + actionName);
    }
    if (!action.resetOffsets) {
      List<String> resetOnly = new ArrayList<>();
      if (!topics.isEmpty()) {
        resetOnly.add("--topic");
      }
      if (allTopics) {
        resetOnly.add("--all-topics");
      }
      if (scenarioCount() > 0) {
        resetOnly.add("--to-earliest/--to-latest/--to-offset/--shift-by");
      }
      if (dryRun) {
        resetOnly.add("--dry-run");
      }
      if (execute) {
        resetOnly.add("--execute");
      }
      if (!resetOnly.isEmpty()) {
        String verb = resetOnly.size() == 1 ? " goes" : " go";
        throw new CommandLine.ParameterException(
            cl, String.join(", ", resetOnly) + verb + " with --reset-offsets only");
      }
    }
    if (members && !action.describe) {
      throw new CommandLine.ParameterException(cl, "--members goes with --describe only");
    }
    if (state && !(action.describe || action.list)) {
      throw new CommandLine.ParameterException(cl, "--state goes with --describe or --list only");
    }
    if (members && state) {
      throw new CommandLine.ParameterException(cl, "--members and --state cannot be used together");
    }
    if (!action.resetOffsets) {
      return List.of();
    }
    if (scenarioCount() != 1) {
      throw new CommandLine.ParameterException(cl, (scenarioCount() == 0 ? "Missing" : "Exactly one") + " reset"
          + " scenario for --reset-offsets: choose one of --to-earliest, --to-latest, --to-offset N, --shift-by N");
    }
    if (topics.isEmpty() == !allTopics) {
      throw new CommandLine.ParameterException(
          cl, "--reset-offsets needs either --topic or --all-topics" + (allTopics ? ", not both" : ""));
    }
    if (dryRun && execute) {
      throw new CommandLine.ParameterException(cl, "--dry-run and --execute cannot be used together");
    }
    if (toOffset != null && toOffset < 0) {
      throw new CommandLine.ParameterException(cl, "--to-offset must be >= 0, was " + toOffset);
    }
    List<TopicSpec> specs = new ArrayList<>();
    for (String t : topics) {
      try {
        specs.add(parseTopic(t));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(cl, e.getMessage());
      }
    }
    return specs;
  }

  private int scenarioCount() {
    return (toEarliest ? 1 : 0) + (toLatest ? 1 : 0) + (toOffset != null ? 1 : 0) + (shiftBy != null ? 1 : 0);
  }

  private Scenario scenario() {
    return toEarliest ? Scenario.TO_EARLIEST : toLatest ? Scenario.TO_LATEST
        : toOffset != null ? Scenario.TO_OFFSET : Scenario.SHIFT_BY;
  }

  /**
   * {@code t} → all partitions of t; {@code t:0,2} → partitions 0 and 2 of t.
   *
   * @throws IllegalArgumentException if malformed
   */
  static TopicSpec parseTopic(String value) {
    int colon = value.indexOf(':');
    String topic = colon < 0 ? value : value.substring(0, colon);
    if (topic.isEmpty()) {
      throw new IllegalArgumentException("--topic needs a topic name, was '" + value + "'");
    }
    if (colon < 0) {
      return new TopicSpec(topic, List.of());
    }
    Set<Integer> partitions = new LinkedHashSet<>();
    for (String p : value.substring(colon + 1).split(",", -1)) {
      try {
        int n = Integer.parseInt(p.trim());
        if (n < 0) {
          throw new NumberFormatException();
        }
        partitions.add(n);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "--topic must be TOPIC or TOPIC:P1,P2,... with partitions >= 0, was '" + value + "'");
      }
    }
    return new TopicSpec(topic, List.copyOf(partitions));
  }

  // ---------------------------------------------------------------------------------------------------- list

  private void list(Admin admin, PrintWriter out) {
    List<GroupListing> groups = admin.listConsumerGroups();
    if (state) {
      List<List<String>> rows = new ArrayList<>();
      for (GroupListing g : groups) {
        rows.add(List.of(g.groupId(), orNone(g.state())));
      }
      table(List.of("GROUP", "STATE"), rows).forEach(out::println);
    } else {
      groups.forEach(g -> out.println(g.groupId()));
    }
  }

  // ---------------------------------------------------------------------------------------------------- describe

  private void describe(Admin admin, PrintWriter out) {
    DescribeGroupResponse d = admin.describeConsumerGroup(group);
    List<String> lines;
    if (state) {
      lines = stateLines(d);
    } else {
      lines = new ArrayList<>();
      lines.add(stateLine(d));
      lines.add("");
      lines.addAll(members ? memberLines(d) : offsetLines(d));
    }
    lines.forEach(out::println);
  }

  /** {@code Consumer group 'g' state: Stable, generation: 4, assignor: range, members: 2}. */
  static String stateLine(DescribeGroupResponse d) {
    return "Consumer group '" + d.groupId() + "' state: " + orNone(d.state()) + ", generation: " + d.generation()
        + ", assignor: " + orNone(d.assignor()) + ", members: " + (d.members() == null ? 0 : d.members().size());
  }

  /**
   * The offsets table of {@code --describe}, as Kafka's: {@code GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET
   * LAG CONSUMER-ID HOST CLIENT-ID}, one row per partition (sorted by topic and partition) with a committed offset or
   * an owner; {@code -} where there is no value (nothing committed, no owner).
   */
  static List<String> offsetLines(DescribeGroupResponse d) {
    Map<String, MemberDescription> byId = new HashMap<>();
    for (MemberDescription m : nullSafe(d.members())) {
      byId.put(m.memberId(), m);
    }
    List<PartitionLag> lags = new ArrayList<>(nullSafe(d.offsets()));
    lags.sort(Comparator.comparing(PartitionLag::topic).thenComparingInt(PartitionLag::partition));
    List<List<String>> rows = new ArrayList<>();
    for (PartitionLag p : lags) {
      MemberDescription owner = p.memberId() == null ? null : byId.get(p.memberId());
      rows.add(List.of(
          d.groupId(),
          p.topic(),
          Integer.toString(p.partition()),
          offset(p.committedOffset()),
          offset(p.logEndOffset()),
          offset(p.lag()),
          orNone(p.memberId()),
          owner == null ? NONE : host(owner.host()),
          owner == null ? NONE : orNone(owner.clientId())));
    }
    return table(List.of("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
        "HOST", "CLIENT-ID"), rows);
  }

  /**
   * The members table of {@code --describe --members}: {@code GROUP CONSUMER-ID GROUP-INSTANCE-ID HOST CLIENT-ID
   * #PARTITIONS ASSIGNMENT}, the assignment as Kafka's {@code topic(0,1)}.
   */
  static List<String> memberLines(DescribeGroupResponse d) {
    List<MemberDescription> ms = new ArrayList<>(nullSafe(d.members()));
    ms.sort(Comparator.comparing(MemberDescription::memberId, Comparator.nullsFirst(Comparator.naturalOrder())));
    List<List<String>> rows = new ArrayList<>();
    for (MemberDescription m : ms) {
      List<PartitionRef> assigned = nullSafe(m.assignment());
      rows.add(List.of(
          d.groupId(),
          orNone(m.memberId()),
          orNone(m.groupInstanceId()),
          host(m.host()),
          orNone(m.clientId()),
          Integer.toString(assigned.size()),
          assignment(assigned)));
    }
    return table(List.of("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS",
        "ASSIGNMENT"), rows);
  }

  /** The table of {@code --describe --state}: {@code GROUP ASSIGNMENT-STRATEGY STATE GENERATION #MEMBERS}. */
  static List<String> stateLines(DescribeGroupResponse d) {
    return table(List.of("GROUP", "ASSIGNMENT-STRATEGY", "STATE", "GENERATION", "#MEMBERS"),
        List.of(List.of(d.groupId(), orNone(d.assignor()), orNone(d.state()), Integer.toString(d.generation()),
            Integer.toString(nullSafe(d.members()).size()))));
  }

  /** {@code [t-0, t-1, u-3]} → {@code t(0,1),u(3)}; none → {@code -}. */
  static String assignment(List<PartitionRef> partitions) {
    if (partitions.isEmpty()) {
      return NONE;
    }
    Map<String, Set<Integer>> byTopic = new TreeMap<>();
    for (PartitionRef p : partitions) {
      byTopic.computeIfAbsent(p.topic(), t -> new TreeSet<>()).add(p.partition());
    }
    return byTopic.entrySet().stream()
        .map(e -> e.getKey() + "(" + e.getValue().stream().map(String::valueOf).collect(Collectors.joining(","))
            + ")")
        .collect(Collectors.joining(","));
  }

  /** {@code akka://tributary-client-ID@127.0.0.1:40123} → {@code 127.0.0.1:40123}; null or empty → {@code -}. */
  static String host(String address) {
    if (address == null || address.isEmpty()) {
      return NONE;
    }
    int at = address.lastIndexOf('@');
    return at >= 0 ? address.substring(at + 1) : address;
  }

  // ---------------------------------------------------------------------------------------------------- reset

  private void reset(Admin admin, List<TopicSpec> specs, PrintWriter out, PrintWriter err) {
    Map<TopicPartition, Long> committed = new HashMap<>();
    for (PartitionOffset o : admin.listConsumerGroupOffsets(group)) {
      if (o.offset() >= 0) {
        committed.put(new TopicPartition(o.topic(), o.partition()), o.offset());
      }
    }
    List<TopicPartition> partitions = allTopics ? sorted(committed.keySet()) : partitionsOf(admin, specs);
    if (!execute) {
      // the broker refuses --execute while the group is active; a dry run asks first, as Kafka's tool does
      refuseIfActive(admin);
    }
    Map<TopicPartition, Long> earliest = partitions.isEmpty() ? Map.of()
        : admin.listOffsets(partitions, EARLIEST_TIMESTAMP);
    Map<TopicPartition, Long> latest = partitions.isEmpty() ? Map.of()
        : admin.listOffsets(partitions, LATEST_TIMESTAMP);
    long value = toOffset != null ? toOffset : shiftBy != null ? shiftBy : 0;
    List<String> warnings = new ArrayList<>();
    Map<TopicPartition, Long> offsets =
        newOffsets(scenario(), value, partitions, earliest, latest, committed, warnings);
    warnings.forEach(w -> err.println("Warning: " + w));
    err.flush();
    if (execute && !offsets.isEmpty()) {
      admin.alterConsumerGroupOffsets(group, offsets);
    }
    resetLines(group, offsets).forEach(out::println);
    if (!execute) {
      out.flush();
      err.println("Dry run: no offsets were changed; add --execute to reset them.");
      err.flush();
    }
  }

  private void refuseIfActive(Admin admin) {
    DescribeGroupResponse d;
    try {
      d = admin.describeConsumerGroup(group);
    } catch (TributaryException e) {
      if (e.errorCode() == ErrorCode.GROUP_ID_NOT_FOUND) {
        return;
      }
      throw e;
    }
    int n = nullSafe(d.members()).size();
    if (n > 0) {
      throw new TributaryException(ErrorCode.NON_EMPTY_GROUP, "Assignments can only be reset if the group '" + group
          + "' is inactive, but the current state is " + d.state() + " with " + n + " member(s).");
    }
  }

  /** The partitions the {@code --topic} values name, checked against the topics' partition counts. */
  private static List<TopicPartition> partitionsOf(Admin admin, List<TopicSpec> specs) {
    Set<String> names = new LinkedHashSet<>();
    specs.forEach(s -> names.add(s.topic()));
    Map<String, Integer> counts = new HashMap<>();
    for (TopicDescription d : admin.describeTopics(List.copyOf(names))) {
      counts.put(d.name(), d.partitions() == null ? 0 : d.partitions().size());
    }
    Set<TopicPartition> result = new LinkedHashSet<>();
    for (TopicSpec s : specs) {
      Integer count = counts.get(s.topic());
      if (count == null) {
        throw new TributaryException(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Topic " + s.topic() + " does not exist");
      }
      if (s.partitions().isEmpty()) {
        for (int p = 0; p < count; p++) {
          result.add(new TopicPartition(s.topic(), p));
        }
      } else {
        for (int p : s.partitions()) {
          if (p >= count) {
            throw new TributaryException(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Partition " + s.topic() + "-" + p
                + " does not exist: topic " + s.topic() + " has " + count
                + (count == 1 ? " partition" : " partitions"));
          }
          result.add(new TopicPartition(s.topic(), p));
        }
      }
    }
    return sorted(result);
  }

  private static List<TopicPartition> sorted(Set<TopicPartition> partitions) {
    List<TopicPartition> list = new ArrayList<>(partitions);
    list.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
    return list;
  }

  /**
   * The new offsets of {@code --reset-offsets}, as Kafka's tool computes them: earliest/latest as listed; {@code
   * --to-offset N} is N; {@code --shift-by N} is the committed offset plus N (a partition without a committed offset
   * is an error). Offsets outside earliest..latest are moved to the nearer bound, with a warning added to {@code
   * warnings}.
   *
   * @param value N of {@code --to-offset} or {@code --shift-by}
   * @return the new offsets in the order of {@code partitions}
   * @throws CliException for {@code --shift-by} on a partition without a committed offset
   */
  static Map<TopicPartition, Long> newOffsets(
      Scenario scenario,
      long value,
      List<TopicPartition> partitions,
      Map<TopicPartition, Long> earliest,
      Map<TopicPartition, Long> latest,
      Map<TopicPartition, Long> committed,
      List<String> warnings) {
    Map<TopicPartition, Long> result = new LinkedHashMap<>();
    for (TopicPartition tp : partitions) {
      long low = earliest.get(tp);
      long high = latest.get(tp);
      long wanted = switch (scenario) {
        case TO_EARLIEST -> low;
        case TO_LATEST -> high;
        case TO_OFFSET -> value;
        case SHIFT_BY -> {
          Long current = committed.get(tp);
          if (current == null) {
            throw new CliException("Cannot shift offset for partition " + tp.topic() + "-" + tp.partition()
                + " since there is no current committed offset");
          }
          yield saturatedAdd(current, value);
        }
      };
      long offset = wanted;
      if (wanted < low) {
        warnings.add("New offset (" + wanted + ") is lower than earliest offset for topic partition " + tp.topic()
            + "-" + tp.partition() + ". Value will be set to " + low);
        offset = low;
      } else if (wanted > high) {
        warnings.add("New offset (" + wanted + ") is higher than latest offset for topic partition " + tp.topic()
            + "-" + tp.partition() + ". Value will be set to " + high);
        offset = high;
      }
      result.put(tp, offset);
    }
    return result;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    if (((a ^ r) & (b ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** The table {@code --reset-offsets} prints: {@code GROUP TOPIC PARTITION NEW-OFFSET}. */
  static List<String> resetLines(String group, Map<TopicPartition, Long> offsets) {
    List<List<String>> rows = new ArrayList<>();
    offsets.forEach((tp, o) -> rows.add(List.of(group, tp.topic(), Integer.toString(tp.partition()), o.toString())));
    return table(List.of("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"), rows);
  }

  // ---------------------------------------------------------------------------------------------------- formatting

  /**
   * A left-aligned table: each column as wide as its widest cell, columns separated by two spaces, no trailing
   * spaces.
   */
  static List<String> table(List<String> header, List<List<String>> rows) {
    int[] widths = new int[header.size()];
    for (int i = 0; i < widths.length; i++) {
      widths[i] = header.get(i).length();
    }
    for (List<String> row : rows) {
      for (int i = 0; i < widths.length; i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    List<String> lines = new ArrayList<>();
    lines.add(line(header, widths));
    for (List<String> row : rows) {
      lines.add(line(row, widths));
    }
    return lines;
  }

  private static String line(List<String> cells, int[] widths) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < widths.length; i++) {
      String cell = cells.get(i);
      b.append(cell);
      if (i < widths.length - 1) {
        b.append(" ".repeat(widths[i] - cell.length() + 2));
      }
    }
    return b.toString().stripTrailing();
  }

  private static String offset(long value) {
    return value < 0 ? NONE : Long.toString(value);
  }

  private static String orNone(String s) {
    return s == null || s.isEmpty() ? NONE : s;
  }

  private static <T> List<T> nullSafe(List<T> list) {
    return list == null ? List.of() : list;
  }
}
