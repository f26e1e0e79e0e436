package io.tributary.cli;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary consume}: prints the records of a topic, one per line, as Kafka's {@code kafka-console-consumer}
 * with manual assignment (every partition of the topic, or {@code --partition}). Starts at the end of each partition
 * (only new records) unless {@code --from-beginning} or {@code --offset}. Stops after {@code --max-messages}, or when
 * no record arrived for {@code --timeout-ms}, or on Ctrl-C; then prints {@code Processed a total of N messages} on
 * stderr and exits 0.
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

  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to read.")
  String topic;

  @Option(
      names = "--from-beginning",
      description = "Start at the earliest record of each partition (default: only records written from now on).")
  boolean fromBeginning;

  @Option(names = "--partition", paramLabel = "N", description = "Read only this partition.")
  Integer partition;

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
      description = "Exit when no record arrived for this long (default: wait forever).")
  Long timeoutMs;

  @Option(
      names = "--property",
      paramLabel = "KEY=VALUE",
      description = "Output format, e.g. print.key=true (repeatable).")
  Map<String, String> properties = new LinkedHashMap<>();

  @Option(
      names = "--consumer-property",
      paramLabel = "KEY=VALUE",
      description = "A consumer setting, Kafka's names (max.poll.records, fetch.max.wait.ms, ...; repeatable).")
  Map<String, String> consumerProperties = new LinkedHashMap<>();

  @Spec CommandLine.Model.CommandSpec spec;

  /** Where records are printed; stdout unless a test sets it. */
  OutputStream out = System.out;

  @Override
  public Integer call() throws IOException {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    RecordFormatter formatter = new RecordFormatter(new CliProperties(properties, RecordFormatter.PROPERTIES, cl));
    long startOffset = validateOffsets(cl);
    if (maxMessages != null && maxMessages < 1) {
      throw new CommandLine.ParameterException(cl, "--max-messages must be at least 1, was " + maxMessages);
    }
    if (timeoutMs != null && timeoutMs < 0) {
      throw new CommandLine.ParameterException(cl, "--timeout-ms must be >= 0, was " + timeoutMs);
    }
    Map<String, Object> config = new HashMap<>(consumerProperties);

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
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      List<TopicPartition> partitions = partitions(BootstrapOption.partitionCount(client, topic));
      Consumer<byte[], byte[]> consumer =
          client.consumer(config, Deserializer.byteArray(), Deserializer.byteArray());
      Runtime.getRuntime().addShutdownHook(hook); // from here on, Ctrl-C prints the total as well
      consumer.assign(partitions);
      if (startOffset >= 0) {
        consumer.seek(partitions.get(0), startOffset);
      } else if (startOffset == EARLIEST) {
        consumer.seekToBeginning(partitions);
      } else {
        consumer.seekToEnd(partitions);
      }
      partitions.forEach(consumer::position); // resolve now, so "latest" means: from when the command started

      BufferedOutputStream sink = new BufferedOutputStream(out, 64 * 1024);
      long lastRecordAt = System.nanoTime();
      long limit = maxMessages == null ? Long.MAX_VALUE : maxMessages;
      while (count.get() < limit) {
        long waitMs = 1000;
        if (timeoutMs != null) {
          long leftMs = timeoutMs - (System.nanoTime() - lastRecordAt) / 1_000_000;
          if (leftMs <= 0) {
            break;
          }
          waitMs = Math.min(waitMs, leftMs);
        }
        List<ConsumerRecord<byte[], byte[]>> records = consumer.poll(Duration.ofMillis(waitMs));
        for (ConsumerRecord<byte[], byte[]> r : records) {
          if (count.get() >= limit) {
            break;
          }
          formatter.write(r, sink);
          count.incrementAndGet();
        }
        if (!records.isEmpty()) {
          sink.flush();
          lastRecordAt = System.nanoTime();
        }
      }
      sink.flush();
      consumer.close();
      report.run();
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // the JVM is shutting down already: the hook reports
      }
    }
    return Main.EXIT_OK;
  }

  /** The start offset: a number, {@link #EARLIEST} or {@link #LATEST}. */
  private long validateOffsets(CommandLine cl) {
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
        throw new CliException("Partition " + partition + " does not exist: topic " + topic + " has " + count
            + (count == 1 ? " partition" : " partitions"));
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
