package io.tributary.cli;

import com.typesafe.config.Config;
import io.tributary.broker.BrokerNode;
import io.tributary.client.Admin;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The main job, end to end on real input: start an embedded single-node broker on a free port, create a topic
 * {@code quickstart-<timestamp>} with {@value #PARTITIONS} partitions, send every line of the input as one record keyed
 * by its line number (acks=all), read everything back with a consumer assigned to all partitions from the beginning
 * (concurrently with the producer), and let {@link QuickstartVerifier} check that every line arrived exactly once, in
 * order per partition, byte-identical, where its key and its ack say. Prints progress every
 * {@link Settings#progressInterval} and a summary. Not thread-safe; run once.
 */
final class Quickstart {
  /** Partitions of the quickstart topic. */
  static final int PARTITIONS = 3;

  private static final double MB = 1024.0 * 1024.0;

  /**
   * What to run.
   *
   * @param input the lines to stream
   * @param dataDir the broker's data directory, or {@code null} for a fresh temporary one (deleted after a
   *     successful run unless {@code keepData})
   * @param keepData keep a temporary data directory after success
   * @param brokerOverrides extra broker config (tests)
   * @param stallTimeout give up when the consumer has read nothing for this long after the producer finished
   * @param progressInterval how often to print progress
   */
  record Settings(
      QuickstartInput input,
      Path dataDir,
      boolean keepData,
      Map<String, Object> brokerOverrides,
      Duration stallTimeout,
      Duration progressInterval) {}

  /** The outcome: the verifier's report and the figures of the summary. */
  record Result(
      QuickstartVerifier.Report report,
      String topic,
      Path dataDir,
      double produceSeconds,
      double consumeSeconds,
      double elapsedSeconds) {}

  private final Settings settings;
  private final PrintWriter out;
  private final AtomicLong acked = new AtomicLong();
  private final AtomicLong consumed = new AtomicLong();
  private final AtomicBoolean produceDone = new AtomicBoolean();
  private final AtomicBoolean abort = new AtomicBoolean();
  private final AtomicReference<Throwable> produceError = new AtomicReference<>();

  Quickstart(Settings settings, PrintWriter out) {
    this.settings = settings;
    this.out = out;
  }

  /**
   * Runs the job.
   *
   * @throws CliException if the broker, the producer or the consumer fails (the verdict on the data is in the result)
   */
  Result run() throws IOException {
    long t0 = System.nanoTime();
    QuickstartInput input = settings.input();
    boolean tempDir = settings.dataDir() == null;
    Path dataDir = tempDir
        ? Files.createTempDirectory("tributary-quickstart-")
        : settings.dataDir().toAbsolutePath().normalize();
    Files.createDirectories(dataDir);
    Path logFile = Logging.useServerLogging(dataDir.resolve("logs"));

    say("Starting an embedded Tributary broker, data dir " + dataDir
        + (logFile == null ? "" : ", log " + logFile) + " ...");
    BrokerNode node = BrokerNode.start(brokerConfig(dataDir));
    boolean passed = false;
    try {
      say(String.format(Locale.ROOT, "Broker ready at %s (%.1f s)", node.bootstrapServer(), seconds(t0)));
      String topic = "quickstart-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
      TributaryClient client = node.tributary().client(); // owned by the node: not closed here
      try (Admin admin = client.admin()) {
        admin.createTopic(topic, PARTITIONS, (short) 1, Map.of());
      }
      say("Created topic " + topic + " with " + PARTITIONS + " partitions");
      say(String.format(Locale.ROOT,
          "Streaming %d lines (%.2f MiB of text) of %s, one record per line keyed by line number (acks=all),"
              + " and reading them back from the beginning of all %d partitions",
          input.lines(), input.lineBytes() / MB, input.name(), PARTITIONS));

      QuickstartVerifier verifier = new QuickstartVerifier(input, PARTITIONS);
      ExecutorService consumerThread = Executors.newSingleThreadExecutor(r -> daemon(r, "quickstart-consumer"));
      ScheduledExecutorService progress = Executors.newSingleThreadScheduledExecutor(
          r -> daemon(r, "quickstart-progress"));
      double produceSeconds;
      double consumeSeconds;
      try {
        long start = System.nanoTime();
        Future<Double> consuming = consumerThread.submit(() -> consume(client, topic, verifier));
        startProgress(progress, input.lines(), start);
        produce(client, topic, input, verifier);
        produceSeconds = seconds(start);
        produceDone.set(true);
        if (produceError.get() != null) {
          abort.set(true);
          throw new CliException("Producing failed after " + acked.get() + " of " + input.lines()
              + " records were acknowledged: " + Main.message(produceError.get()), produceError.get());
        }
        consumeSeconds = await(consuming);
      } finally {
        abort.set(true);
        progress.shutdownNow();
        consumerThread.shutdownNow();
      }
      QuickstartVerifier.Report report = verifier.finish();
      Result result = new Result(report, topic, dataDir, produceSeconds, consumeSeconds, seconds(t0));
      passed = report.ok();
      return result;
    } finally {
      node.close();
      if (passed && tempDir && !settings.keepData()) {
        deleteRecursively(dataDir);
      }
    }
  }

  private Config brokerConfig(Path dataDir) throws IOException {
    // An explicit (empty) config file, so that an application.conf in the working directory cannot change the job.
    Path conf = dataDir.resolve("quickstart.conf");
    Files.writeString(conf, "# The quickstart's broker runs with the built-in defaults (tributary-broker.conf).\n");
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("tributary.data-dir", dataDir.toString());
    overrides.put("akka.remote.artery.canonical.port", 0);
    overrides.put("tributary.broker.listeners", "127.0.0.1:0");
    if (settings.brokerOverrides() != null) {
      overrides.putAll(settings.brokerOverrides());
    }
    return BrokerNode.config(conf, overrides);
  }

  private void produce(TributaryClient client, String topic, QuickstartInput input, QuickstartVerifier verifier) {
    Map<String, Object> config = Map.of("acks", "all");
    try (Producer<String, byte[]> producer = client.producer(config, Serializer.string(), Serializer.byteArray())) {
      for (int line = 1; line <= input.lines() && produceError.get() == null; line++) {
        int n = line;
        producer.send(new ProducerRecord<>(topic, Integer.toString(n), input.line(n))).whenComplete((md, ex) -> {
          if (ex == null) {
            verifier.acked(n, md.partition(), md.offset());
            acked.incrementAndGet();
          } else {
            produceError.compareAndSet(null, Main.unwrap(ex));
          }
        });
      }
      producer.flush();
    }
  }

  /** Reads until every partition's position reaches its end offset after the producer finished; returns seconds. */
  private double consume(TributaryClient client, String topic, QuickstartVerifier verifier) {
    long start = System.nanoTime();
    Map<String, Object> config = Map.of("auto.offset.reset", "earliest");
    try (Consumer<byte[], byte[]> consumer =
        client.consumer(config, Deserializer.byteArray(), Deserializer.byteArray())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        partitions.add(new TopicPartition(topic, p));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = null;
      long lastProgress = System.nanoTime();
      while (!abort.get()) {
        List<ConsumerRecord<byte[], byte[]>> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<byte[], byte[]> r : records) {
          verifier.consumed(r.key(), r.partition(), r.offset(), r.value());
        }
        consumed.addAndGet(records.size());
        if (!records.isEmpty()) {
          lastProgress = System.nanoTime();
        }
        if (produceDone.get()) {
          if (ends == null) {
            ends = consumer.endOffsets(partitions);
            lastProgress = System.nanoTime();
          }
          boolean done = true;
          for (TopicPartition tp : partitions) {
            done &= consumer.position(tp) >= ends.get(tp);
          }
          if (done) {
            break;
          }
          if (System.nanoTime() - lastProgress > settings.stallTimeout().toNanos()) {
            say("The consumer read nothing for " + settings.stallTimeout().toSeconds() + " s; stopping");
            break;
          }
        }
      }
    }
    return seconds(start);
  }

  private void startProgress(ScheduledExecutorService progress, int total, long start) {
    long periodMs = settings.progressInterval().toMillis();
    long[] last = {start, 0, 0};
    progress.scheduleAtFixedRate(() -> {
      long now = System.nanoTime();
      long p = acked.get();
      long c = consumed.get();
      double dt = (now - last[0]) / 1e9;
      say(String.format(Locale.ROOT,
          "  %5.1f s  produced %d of %d (%.0f records/s), consumed %d (%.0f records/s)",
          (now - start) / 1e9, p, total, (p - last[1]) / dt, c, (c - last[2]) / dt));
      last[0] = now;
      last[1] = p;
      last[2] = c;
    }, periodMs, periodMs, TimeUnit.MILLISECONDS);
  }

  /** The summary lines of a result. */
  static List<String> summary(Result r, QuickstartInput input) {
    QuickstartVerifier.Report rep = r.report();
    double mb = input.lineBytes() / MB;
    List<String> lines = new ArrayList<>();
    if (rep.ok()) {
      lines.add(String.format(Locale.ROOT,
          "Quickstart passed: %d lines (%.2f MiB of text) of %s went through topic %s and came back intact.",
          rep.lines(), mb, input.name(), r.topic()));
    } else {
      lines.add(String.format(Locale.ROOT, "Quickstart FAILED: %s (of %d lines, %d records consumed).",
          rep.problems(), rep.lines(), rep.consumed()));
    }
    lines.add(String.format(Locale.ROOT, "  produced (acks=all): %d records in %.2f s, %.0f records/s, %.2f MB/s",
        rep.lines(), r.produceSeconds(), rep.lines() / r.produceSeconds(), mb / r.produceSeconds()));
    lines.add(String.format(Locale.ROOT, "  consumed:            %d records in %.2f s, %.0f records/s, %.2f MB/s",
        rep.consumed(), r.consumeSeconds(), rep.consumed() / r.consumeSeconds(), mb / r.consumeSeconds()));
    StringBuilder parts = new StringBuilder("  records per partition:");
    for (int p = 0; p < rep.perPartition().length; p++) {
      parts.append(p == 0 ? " " : ", ").append(p).append(": ").append(rep.perPartition()[p]);
    }
    lines.add(parts.toString());
    if (rep.ok()) {
      lines.add("  checked: every line exactly once, in order within its partition, byte-identical, in the partition"
          + " murmur2(key) picks, at the offset its ack reported");
    } else {
      rep.examples().forEach(e -> lines.add("  " + e));
      lines.add("  data kept in " + r.dataDir());
    }
    lines.add(String.format(Locale.ROOT, "  elapsed: %.1f s", r.elapsedSeconds()));
    return lines;
  }

  private double await(Future<Double> consuming) {
    try {
      return consuming.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("Interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = Main.unwrap(e);
      throw new CliException("Consuming failed: " + Main.message(cause), cause);
    }
  }

  private void say(String line) {
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
