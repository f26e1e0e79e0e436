package io.tributary.cli;

import io.tributary.client.ClientConfig;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRebalanceListener;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.client.WakeupException;
import io.tributary.protocol.ErrorCode;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * {@code tributary consume}: prints the records of a topic, one per line, as Kafka's {@code kafka-console-consumer}.
 *
 * <p>Without a group: manual assignment (every partition of the topic, or {@code --partition}), starting at the end of
 * each partition (only new records) unless {@code --from-beginning} or {@code --offset}.
 *
 * <p>With {@code --group G} (or {@code --consumer-property group.id=G} without {@code --partition}): the consumer
 * subscribes to the topic as a member of group G, so the topic's partitions are shared with the group's other
 * members; each partition starts at the group's committed offset, or where {@code auto.offset.reset} says when none
 * is committed ({@code --from-beginning} means {@code earliest}; the default is {@code latest}). Offsets are committed
 * automatically ({@code enable.auto.commit}) and on exit.
 *
 * <p>Stops after {@code --max-messages}, or when no record arrived for {@code --timeout-ms} (with a group: counted
 * from the end of the first rebalance, as joining takes the broker's {@code group.initial.rebalance.delay.ms}), or on
 * Ctrl-C / SIGTERM;
 * then closes the consumer (a group member commits its offsets and leaves the group), prints {@code Processed a total
 * of N messages} on stderr and exits 0.
 */
@Command(
    name = "consume",
    description = {
      "Print the records of a topic to stdout, one per line (as Kafka's kafka-console-consumer).",
      "Properties: print.key, print.partition, print.offset, print.timestamp, print.headers, print.value"
          + " (true|false), key.separator (default \\t), line.separator (default \\n), headers.separator,"
          + " null.literal (default null)."
    })
final class ConsumeCommand implements Callable<Integer> {
  private static final long EARLIEST = -1;
  private static final long LATEST = -2;
  /** How long past {@code --timeout-ms} joining a group may take before the command fails (exit 1). */
  private static final long JOIN_GRACE_MS = 30_000;

  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to read.")
  String topic;

  @Option(
      names = "--from-beginning",
      description = "Start at the earliest record of each partition (default: only records written from now on).")
  boolean fromBeginning;

  @Option(names = "--partition", paramLabel = "N", description = "Read only this partition (not with --group).")
  Integer partition;

  @Option(
      names = "--group",
      paramLabel = "GROUP",
      description = "Consume as a member of this consumer group: share the topic's partitions with the group's other"
          + " members, start at the group's committed offsets, commit offsets automatically and on exit.")
  String group;

  @Option(
      names = "--offset",
      paramLabel = "O|earliest|latest",
      description = "With --partition: where to start (default latest).")
  String offset;

  @Option(
      names = "--max-messages",
      paramLabel = "N",
      description = "Exit after N records (default: no limit).")
  Long maxMessages;

  @Option(
      names = "--timeout-ms",
      paramLabel = "MS",
      description = "Exit when no record arrived for this long (default: wait forever); with --group counted from"
          + " when the group is joined.")
  Long timeoutMs;

  @Option(
      names = "--property",
      paramLabel = "KEY=VALUE",
      description = "Output format, e.g. print.key=true (repeatable).")
  Map<String, String> properties = new LinkedHashMap<>();

  @Option(
      names = "--consumer-property",
      paramLabel = "KEY=VALUE",
      description = "A consumer setting, Kafka's names (max.poll.records, fetch.max.wait.ms, session.timeout.ms,"
          + " partition.assignment.strategy, ...; repeatable).")
  Map<String, String> consumerProperties = new LinkedHashMap<>();

  @Spec CommandLine.Model.CommandSpec spec;

  /** Where records are printed; stdout unless a test sets it. */
  OutputStream out = System.out;

  @Override
  public Integer call() throws IOException {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    RecordFormatter formatter = new RecordFormatter(new CliProperties(properties, RecordFormatter.PROPERTIES, cl));
    String groupId = groupId(cl);
    long startOffset = validateOffsets(cl);
    if (maxMessages != null && maxMessages < 1) {
      throw new CommandLine.ParameterException(cl, "--max-messages must be at least 1, was " + maxMessages);
    }
    if (timeoutMs != null && timeoutMs < 0) {
      throw new CommandLine.ParameterException(cl, "--timeout-ms must be >= 0, was " + timeoutMs);
    }
    Map<String, Object> config = new HashMap<>(consumerProperties);
    if (groupId != null) {
      if (groupId.isEmpty()) {
        throw new TributaryException(ErrorCode.INVALID_GROUP_ID, "group.id must not be empty");
      }
      config.put(ClientConfig.GROUP_ID, groupId);
      if (fromBeginning) {
        config.put(ClientConfig.AUTO_OFFSET_RESET, "earliest");
      }
    }
    ClientSettingsCheck.check(cl, "--consumer-property", ClientSettingsCheck.Kind.CONSUMER, config);

    PrintWriter err = cl.getErr();
    AtomicLong count = new AtomicLong();
    AtomicBoolean reported = new AtomicBoolean();
    Runnable report = () -> {
      if (reported.compareAndSet(false, true)) {
        err.println("Processed a total of " + count.get() + " messages");
        err.flush();
      }
    };
    Thread hook = new Thread(report, "consume-total");
    // Ctrl-C and SIGTERM end the loop below; the consumer is then closed by this thread (committing and leaving its
    // group) before the JVM shuts down, rather than in a shutdown hook racing the client's ActorSystem
    Map<Signal, SignalHandler> previousHandlers = new HashMap<>();
    AtomicBoolean stopping = new AtomicBoolean();
    AtomicReference<Consumer<?, ?>> current = new AtomicReference<>();
    installStopHandlers(previousHandlers, () -> {
      stopping.set(true);
      Consumer<?, ?> c = current.get();
      if (c != null) {
        c.wakeup();
      }
    });
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      int partitionCount = BootstrapOption.partitionCount(client, topic);
      Consumer<byte[], byte[]> consumer =
          client.consumer(config, Deserializer.byteArray(), Deserializer.byteArray());
      current.set(consumer);
      Runtime.getRuntime().addShutdownHook(hook); // from here on, an abrupt exit prints the total as well
      BufferedOutputStream sink = new BufferedOutputStream(out, 64 * 1024);
      long limit = maxMessages == null ? Long.MAX_VALUE : maxMessages;
      try {
        // with a group, --timeout-ms counts from the end of the first rebalance: joining takes at least the broker's
        // group.initial.rebalance.delay.ms (3 s by default), which is not "no record arrived"
        AtomicBoolean joined = new AtomicBoolean(groupId == null);
        long lastRecordAt = System.nanoTime();
        if (groupId != null) {
          consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
              joined.set(true);
            }
          });
        } else {
          List<TopicPartition> partitions = partitions(partitionCount);
          consumer.assign(partitions);
          if (startOffset >= 0) {
            consumer.seek(partitions.get(0), startOffset);
            warnIfOutOfRange(consumer, partitions.get(0), startOffset, config, err, timeoutMs);
          } else if (startOffset == EARLIEST) {
            consumer.seekToBeginning(partitions);
          } else {
            consumer.seekToEnd(partitions);
            resolveLatest(consumer, partitions, lastRecordAt);
          }
        }
        while (count.get() < limit && !stopping.get()) {
          long waitMs = 1000;
          if (!joined.get()) {
            if (timeoutMs != null && System.nanoTime() - lastRecordAt > (timeoutMs + JOIN_GRACE_MS) * 1_000_000) {
              throw new CliException("Consumer group " + groupId + " was not joined within " + (timeoutMs
                  + JOIN_GRACE_MS) + " ms (--timeout-ms + " + JOIN_GRACE_MS + " ms): is its coordinator available?");
            }
          } else if (timeoutMs != null) {
            long leftMs = timeoutMs - (System.nanoTime() - lastRecordAt) / 1_000_000;
            if (leftMs <= 0) {
              break;
            }
            waitMs = Math.min(waitMs, leftMs);
          }
          boolean joinedBefore = joined.get();
          List<ConsumerRecord<byte[], byte[]>> records = consumer.poll(Duration.ofMillis(waitMs));
          if (!joinedBefore && joined.get()) {
            lastRecordAt = System.nanoTime();
          }
          Map<TopicPartition, Long> unprinted = new HashMap<>();
          for (ConsumerRecord<byte[], byte[]> r : records) {
            if (count.get() >= limit) {
              unprinted.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
              continue;
            }
            formatter.write(r, sink);
            count.incrementAndGet();
          }
          // --max-messages reached within a batch: back to the first record not printed, so that the offsets
          // committed on close cover exactly the records printed
          unprinted.forEach(consumer::seek);
          if (!records.isEmpty()) {
            sink.flush();
            lastRecordAt = System.nanoTime();
          }
        }
      } catch (WakeupException e) {
        if (!stopping.get()) {
          throw e;
        }
      }
      sink.flush();
      consumer.close();
      report.run();
    } finally {
      previousHandlers.forEach(ConsumeCommand::restoreHandler);
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // the JVM is shutting down already: the hook reports
      }
    }
    return Main.EXIT_OK;
  }

  /**
   * The group of this consumer: {@code --group}, else {@code --consumer-property group.id} unless {@code
   * --partition} is given (manual assignment then, committing to that group); null for none.
   */
  private String groupId(CommandLine cl) {
    String property = consumerProperties.get(ClientConfig.GROUP_ID);
    if (group != null) {
      if (property != null && !property.equals(group)) {
        throw new CommandLine.ParameterException(cl, "--group " + group + " and --consumer-property group.id="
            + property + " disagree; give the group once");
      }
      if (partition != null) {
        throw new CommandLine.ParameterException(cl, "--partition cannot be used with --group: the group assigns"
            + " the partitions");
      }
    }
    String groupId = group != null ? group : partition == null ? property : null;
    if (groupId != null && fromBeginning) {
      String reset = consumerProperties.get(ClientConfig.AUTO_OFFSET_RESET);
      if (reset != null && !reset.equals("earliest")) {
        throw new CommandLine.ParameterException(cl, "--from-beginning and --consumer-property auto.offset.reset="
            + reset + " disagree");
      }
    }
    return groupId;
  }

  /**
   * Says on stderr when {@code --offset} is below the partition's log start offset or above its high watermark: the
   * consumer then starts where {@code auto.offset.reset} says (as Kafka's console consumer does, which says nothing),
   * so that "no output" is not mistaken for "no records there". With {@code auto.offset.reset=none} the consumer
   * fails with OFFSET_OUT_OF_RANGE instead, which is reported as the command's error. With {@code --timeout-ms}
   * the check waits at most that long and is skipped when the partition's leader does not answer by then (the
   * command then ends after its timeout as usual).
   */
  private static void warnIfOutOfRange(Consumer<?, ?> consumer, TopicPartition tp, long offset,
      Map<String, Object> config, PrintWriter err, Long timeoutMs) {
    long start;
    long end;
    if (timeoutMs == null) {
      start = consumer.beginningOffsets(List.of(tp)).get(tp);
      end = consumer.endOffsets(List.of(tp)).get(tp);
    } else {
      long deadline = System.nanoTime() + timeoutMs * 1_000_000;
      try {
        start = consumer.beginningOffsets(List.of(tp), Duration.ofMillis(timeoutMs)).get(tp);
        end = consumer.endOffsets(List.of(tp),
            Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))).get(tp);
      } catch (TributaryException e) {
        if (e.errorCode().retriable()) {
          return;
        }
        throw e;
      }
    }
    if (offset >= start && offset <= end) {
      return;
    }
    String reset = String.valueOf(config.getOrDefault(ClientConfig.AUTO_OFFSET_RESET,
        ClientConfig.DEFAULT_AUTO_OFFSET_RESET));
    String from = switch (reset) {
      case "earliest" -> "; reading from the log start offset " + start + " (auto.offset.reset=earliest)";
      case "latest" -> "; reading from the high watermark " + end + " on (auto.offset.reset=latest)";
      default -> "";
    };
    err.println("--offset " + offset + " is outside partition " + tp + " (log start offset " + start
        + ", high watermark " + end + ")" + from);
    err.flush();
  }

  /** Installs {@code onStop} for SIGINT and SIGTERM, keeping the previous handlers; a second signal exits at once. */
  private static void installStopHandlers(Map<Signal, SignalHandler> previous, Runnable onStop) {
    AtomicBoolean signalled = new AtomicBoolean();
    for (String name : new String[] {"INT", "TERM"}) {
      try {
        Signal signal = new Signal(name);
        previous.put(signal, Signal.handle(signal, s -> {
          if (signalled.compareAndSet(false, true)) {
            onStop.run();
          } else {
            System.exit(128 + s.getNumber());
          }
        }));
      } catch (IllegalArgumentException e) {
        // the signal is not available here (e.g. -Xrs): Ctrl-C then ends the JVM as usual
      }
    }
  }

  private static void restoreHandler(Signal signal, SignalHandler handler) {
    try {
      Signal.handle(signal, handler);
    } catch (IllegalArgumentException e) {
      // leave it
    }
  }

  /**
   * Looks the end offsets of {@code partitions} up now, so that "latest" means: from when the command started (a
   * partition looked up only by the first poll would start later). With {@code --timeout-ms}, within that time from
   * {@code startNanos}: a partition whose leader does not answer by then is looked up by the polls instead, so that
   * an unavailable partition does not hold the command past its timeout (Kafka's console consumer exits after
   * {@code --timeout-ms} without a record, whatever the partitions' state).
   */
  private void resolveLatest(Consumer<byte[], byte[]> consumer, List<TopicPartition> partitions, long startNanos) {
    for (TopicPartition tp : partitions) {
      if (timeoutMs == null) {
        consumer.position(tp);
        continue;
      }
      long leftMs = timeoutMs - (System.nanoTime() - startNanos) / 1_000_000;
      try {
        consumer.position(tp, Duration.ofMillis(Math.max(0, leftMs)));
      } catch (TributaryException e) {
        if (!e.errorCode().retriable()) {
          throw e;
        }
      }
    }
  }

  /** The start offset: a number, {@link #EARLIEST} or {@link #LATEST}. */
  private long validateOffsets(CommandLine cl) {
    if (group != null && offset != null) {
      throw new CommandLine.ParameterException(cl, "--offset cannot be used with --group: a group member starts at"
          + " the group's committed offsets");
    }
    if (offset != null && partition == null) {
      throw new CommandLine.ParameterException(cl, "--offset needs --partition");
    }
    if (offset != null && fromBeginning) {
      throw new CommandLine.ParameterException(cl, "--offset and --from-beginning cannot be used together");
    }
    if (partition != null && partition < 0) {
      throw new CommandLine.ParameterException(cl, "--partition must be >= 0, was " + partition);
    }
    if (offset == null) {
      return fromBeginning ? EARLIEST : LATEST;
    }
    switch (offset) {
      case "earliest":
        return EARLIEST;
      case "latest":
        return LATEST;
      default:
        try {
          long o = Long.parseLong(offset);
          if (o >= 0) {
            return o;
          }
        } catch (NumberFormatException e) {
          // below
        }
        throw new CommandLine.ParameterException(
            cl, "--offset must be a non-negative number, earliest or latest, was '" + offset + "'");
    }
  }

  private List<TopicPartition> partitions(int count) {
    List<TopicPartition> result = new ArrayList<>();
    if (partition != null) {
      if (partition >= count) {
        throw new TributaryException(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Partition " + partition
            + " does not exist: topic " + topic + " has " + count + (count == 1 ? " partition" : " partitions"));
      }
      result.add(new TopicPartition(topic, partition));
    } else {
      for (int p = 0; p < count; p++) {
        result.add(new TopicPartition(topic, p));
      }
    }
    return result;
  }
}
