package io.tributary.cli;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary perf e2e-latency}: Kafka's {@code EndToEndLatency} tool. Sends {@code --num-records} records of
 * {@code --record-size} bytes one at a time: each is sent with {@code acks=--producer-acks} and {@code linger.ms=0},
 * waited for, and polled back by a consumer assigned to every partition of the topic (positioned at the end before
 * the first send, {@code fetch.max.wait.ms=0}, as Kafka's); the latency of a record is send → read back. Every
 * 1000th record prints {@code i<TAB>latency_ms}; the end prints Kafka's two lines:
 *
 * <pre>
 * Avg latency: 1.2345 ms
 * Percentiles: 50th = 1, 99th = 4, 99.9th = 9
 * </pre>
 *
 * <p>Percentiles are of the latencies truncated to whole milliseconds, taken as Kafka does ({@link
 * PerfFormat#endToEndPercentiles}). As Kafka's tool, a topic that does not exist is created with 1 partition and
 * replication factor 1. Exit 1 when a record is not read back within 60 s, or a different record arrives.
 */
@Command(
    name = "e2e-latency",
    description = "End-to-end latency, producer send to consumer read, one record at a time (as Kafka's"
        + " EndToEndLatency).")
final class PerfEndToEndLatencyCommand implements Callable<Integer> {
  /** How long one poll waits for the record just sent, ms (Kafka's EndToEndLatency: 60000). */
  static final long POLL_TIMEOUT_MS = 60_000;

  /** Every this many records a progress line {@code i<TAB>ms} is printed (Kafka's: 1000). */
  static final int PROGRESS_EVERY = 1000;

  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to send to and read.")
  String topic;

  @Option(names = "--num-records", required = true, paramLabel = "N", description = "Records to send, one at a time.")
  int numRecords;

  @Option(names = "--record-size", required = true, paramLabel = "BYTES", description = "Size of each record value.")
  int recordSize;

  @Option(
      names = "--producer-acks",
      required = true,
      paramLabel = "ACKS",
      description = "The producer's acks: 0, 1, all (or -1).")
  String producerAcks;

  @Option(
      names = "--command-config",
      paramLabel = "FILE",
      description = "A properties file of producer and consumer settings (Kafka's names), as Kafka's tool.")
  Path commandConfig;

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    if (numRecords < 1) {
      throw new CommandLine.ParameterException(cl, "--num-records must be at least 1, was " + numRecords);
    }
    if (recordSize < 1) {
      throw new CommandLine.ParameterException(cl, "--record-size must be at least 1, was " + recordSize);
    }
    if (!List.of("0", "1", "all", "-1").contains(producerAcks)) {
      throw new CommandLine.ParameterException(cl, "--producer-acks must be 0, 1, all or -1, was " + producerAcks);
    }
    Map<String, Object> common = loadCommandConfig(cl);
    // Kafka's tool overrides these whatever the file says
    Map<String, Object> consumerConfig = new HashMap<>(common);
    consumerConfig.put("enable.auto.commit", "false");
    consumerConfig.put("auto.offset.reset", "latest");
    consumerConfig.put("fetch.max.wait.ms", "0");
    Map<String, Object> producerConfig = new HashMap<>(common);
    producerConfig.put("linger.ms", "0");
    producerConfig.put("acks", producerAcks);
    String source = commandConfig == null ? "the tool's settings" : "--command-config " + commandConfig;
    ClientSettingsCheck.check(cl, source, ClientSettingsCheck.Kind.CONSUMER, consumerConfig);
    ClientSettingsCheck.check(cl, source, ClientSettingsCheck.Kind.PRODUCER, producerConfig);

    PrintWriter out = cl.getOut();
    long[] latenciesMs = new long[numRecords];
    double totalNanos = 0;
    try (TributaryClient client = bootstrap.connect(cl, common)) {
      int partitions = partitionCountOrZero(client);
      if (partitions == 0) {
        out.printf("Topic \"%s\" does not exist. Will create topic with %d partition(s) and replication factor = %d%n",
            topic, 1, 1);
        out.flush();
        try (io.tributary.client.Admin admin = client.admin()) {
          admin.createTopic(topic, 1, (short) 1, Map.of());
        }
        partitions = 1;
      }
      try (Consumer<byte[], byte[]> consumer =
              client.consumer(consumerConfig, Deserializer.byteArray(), Deserializer.byteArray());
          Producer<byte[], byte[]> producer =
              client.producer(producerConfig, Serializer.byteArray(), Serializer.byteArray())) {
        List<TopicPartition> assigned = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
          assigned.add(new TopicPartition(topic, p));
        }
        consumer.assign(assigned);
        consumer.seekToEnd(assigned);
        assigned.forEach(consumer::position); // resolve the end offsets now, not during the first measurement

        Random random = new Random(0);
        for (int i = 0; i < numRecords; i++) {
          byte[] value = value(random, recordSize);
          long begin = System.nanoTime();
          sendAndWait(producer, new ProducerRecord<byte[], byte[]>(topic, value));
          List<ConsumerRecord<byte[], byte[]>> records = consumer.poll(Duration.ofMillis(POLL_TIMEOUT_MS));
          long elapsed = System.nanoTime() - begin;
          validate(value, records);
          if (i % PROGRESS_EVERY == 0) {
            out.println(PerfFormat.endToEndProgress(i, elapsed));
            out.flush();
          }
          totalNanos += elapsed;
          latenciesMs[i] = elapsed / 1000 / 1000;
        }
      }
    }
    out.println(PerfFormat.endToEndAverage(totalNanos, numRecords));
    out.println(PerfFormat.endToEndPercentiles(latenciesMs));
    out.flush();
    return Main.EXIT_OK;
  }

  /** Kafka's record value: {@code size} copies of one random uppercase letter. */
  static byte[] value(Random random, int size) {
    byte[] value = PerfProduceCommand.allocate(size);
    Arrays.fill(value, (byte) (random.nextInt(26) + 65));
    return value;
  }

  /**
   * Checks that {@code records} is exactly the record just sent (Kafka's checks and messages).
   *
   * @throws CliException when nothing came back, more than one record came back, or another value
   */
  static void validate(byte[] sent, List<ConsumerRecord<byte[], byte[]>> records) {
    if (records.isEmpty()) {
      throw new CliException("poll() timed out before finding a result (timeout:[" + POLL_TIMEOUT_MS + "ms])");
    }
    byte[] read = records.get(0).value();
    if (!Arrays.equals(sent, read)) {
      throw new CliException("The message value read [" + (read == null ? "null" : new String(read,
          StandardCharsets.UTF_8)) + "] did not match the message value sent [" + new String(sent,
          StandardCharsets.UTF_8) + "]");
    }
    if (records.size() != 1) {
      throw new CliException("Only one result was expected during this test. We found [" + records.size() + "]");
    }
  }

  private static void sendAndWait(Producer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> record) {
    try {
      producer.send(record).toCompletableFuture().get();
    } catch (ExecutionException e) {
      throw new CliException("The record was not acknowledged: " + Main.message(Main.unwrap(e)), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted", e);
    }
  }

  /** The topic's partition count; 0 when it does not exist. */
  private int partitionCountOrZero(TributaryClient client) {
    try {
      return BootstrapOption.partitionCount(client, topic);
    } catch (TributaryException e) {
      if (e.errorCode() == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        return 0;
      }
      throw e;
    }
  }

  private Map<String, Object> loadCommandConfig(CommandLine cl) {
    Map<String, Object> config = new HashMap<>();
    if (commandConfig == null) {
      return config;
    }
    Properties props = new Properties();
    try (Reader r = Files.newBufferedReader(commandConfig, StandardCharsets.UTF_8)) {
      props.load(r);
    } catch (IOException e) {
      throw new CommandLine.ParameterException(cl, "--command-config " + commandConfig + " cannot be read: " + e);
    }
    props.stringPropertyNames().forEach(k -> config.put(k, props.getProperty(k)));
    return config;
  }
}
