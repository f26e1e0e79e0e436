package io.tributary.cli;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary perf consume}: Kafka's {@code ConsumerPerformance}. Reads {@code --messages} records from the
 * beginning of every partition of the topic (manual assignment, so the rebalance time is 0) with polls of 100 ms, as
 * Kafka, and prints Kafka's header and result line. Bytes are key plus value sizes. If the messages do not arrive
 * before {@code --timeout-ms} passes without a record, it prints Kafka 4.4's warning on stderr, still prints the
 * line, and exits 1 (Kafka's tool exits 0 there; a script should be able to tell that the run fell short).
 */
@Command(
    name = "consume",
    description = "Consumer throughput (as Kafka's kafka-consumer-perf-test).")
final class PerfConsumeCommand implements Callable<Integer> {
  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to read.")
  String topic;

  @Option(
      names = {"--messages", "--num-records"},
      required = true,
      paramLabel = "N",
      description = "Records to consume (--num-records is Kafka 4's name).")
  long messages;

  @Option(
      names = {"--timeout-ms", "--timeout"},
      paramLabel = "MS",
      description = "Give up when no record arrived for this long (default 10000, as Kafka).")
  long timeoutMs = 10_000;

  @Option(
      names = {"--consumer-props", "--command-property"},
      arity = "1..*",
      paramLabel = "KEY=VALUE",
      description = "Consumer settings, Kafka's names, e.g. max.poll.records=2000 fetch.max.wait.ms=100"
          + " (--command-property is Kafka 4's name).")
  Map<String, String> consumerProps = new LinkedHashMap<>();

  @Option(names = "--hide-header", description = "Do not print the header line.")
  boolean hideHeader;

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    if (messages < 1) {
      throw new CommandLine.ParameterException(cl, "--messages must be at least 1, was " + messages);
    }
    if (timeoutMs < 0) {
      throw new CommandLine.ParameterException(cl, "--timeout-ms must be >= 0, was " + timeoutMs);
    }
    PrintWriter out = cl.getOut();
    Map<String, Object> config = new HashMap<>(consumerProps);
    ClientSettingsCheck.check(cl, "--consumer-props", ClientSettingsCheck.Kind.CONSUMER, config);
    long messagesRead = 0;
    long bytesRead = 0;
    long startMs;
    long endMs;
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      int count = BootstrapOption.partitionCount(client, topic);
      Consumer<byte[], byte[]> consumer =
          client.consumer(config, Deserializer.byteArray(), Deserializer.byteArray());
      if (!hideHeader) {
        out.println(PerfFormat.CONSUMER_HEADER);
        out.flush();
      }
      startMs = System.currentTimeMillis();
      List<TopicPartition> partitions = new ArrayList<>();
      for (int p = 0; p < count; p++) {
        partitions.add(new TopicPartition(topic, p));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long lastConsumedMs = System.currentTimeMillis();
      long nowMs = lastConsumedMs;
      while (messagesRead < messages && nowMs - lastConsumedMs <= timeoutMs) {
        List<ConsumerRecord<byte[], byte[]>> records = consumer.poll(Duration.ofMillis(100));
        nowMs = System.currentTimeMillis();
        if (!records.isEmpty()) {
          lastConsumedMs = nowMs;
        }
        for (ConsumerRecord<byte[], byte[]> r : records) {
          messagesRead++;
          bytesRead += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
        }
      }
      endMs = System.currentTimeMillis();
      consumer.close();
    }
    boolean complete = messagesRead >= messages;
    if (!complete) {
      PrintWriter err = cl.getErr();
      err.println("WARNING: Exiting before consuming the expected number of records: timeout (" + timeoutMs
          + " ms) exceeded. You can use the --timeout option to increase the timeout.");
      err.flush();
    }
    out.println(PerfFormat.consumerLine(startMs, endMs, bytesRead, messagesRead, 0, TimeZone.getDefault()));
    out.flush();
    return complete ? Main.EXIT_OK : Main.EXIT_FAILURE;
  }
}
