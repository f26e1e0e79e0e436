package io.tributary.cli.chaos;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * A verifying consumer: reads every partition of a topic from the beginning, continuously, on a thread of its own,
 * and books each record in a {@link Ledger} through a {@link Ledger.Reader} (which checks that its offsets per
 * partition are dense and never go back). Errors of {@code poll} are counted and polling goes on: the consumer is
 * meant to ride through node failures.
 *
 * <p>{@link #readAll} is the final check: a fresh consumer reading every partition from its beginning up to its end
 * offset.
 *
 * <p>Thread-safe: the consumer itself is used only by its own thread.
 */
public final class ChaosConsumer implements AutoCloseable {
  private final TributaryClient client;
  private final String topic;
  private final int partitions;
  private final Ledger.Reader reader;
  private final Thread thread;
  private volatile boolean running = true;
  private final LongAdder polls = new LongAdder();
  private final Map<String, Long> errors = new TreeMap<>();

  /**
   * A consumer of all {@code partitions} partitions of {@code topic} (not started yet).
   *
   * @param name names the reader in anomaly messages and the thread
   */
  public ChaosConsumer(TributaryClient client, String topic, int partitions, Ledger ledger, String name) {
    this.client = client;
    this.topic = topic;
    this.partitions = partitions;
    this.reader = ledger.reader(name);
    this.thread = new Thread(this::pollLoop, "chaos-consumer-" + name);
    this.thread.setDaemon(true);
  }

  /** Starts reading. */
  public void start() {
    thread.start();
  }

  private void pollLoop() {
    List<TopicPartition> tps = partitions(topic, partitions);
    try (Consumer<String, String> consumer =
        client.consumer(Map.of("auto.offset.reset", "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      while (running) {
        try {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
            reader.read(r.partition(), r.offset(), r.value());
          }
          polls.increment();
        } catch (RuntimeException e) {
          synchronized (errors) {
            errors.merge(Ledger.errorName(e), 1L, Long::sum);
          }
          // back off a little before polling again (the client has retried already)
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
      }
    }
  }

  /** Polls that failed, by error. */
  public Map<String, Long> errors() {
    synchronized (errors) {
      return new TreeMap<>(errors);
    }
  }

  /** Stops polling and closes the consumer. Idempotent. */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Partitions 0..n-1 of {@code topic}. */
  public static List<TopicPartition> partitions(String topic, int n) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      tps.add(new TopicPartition(topic, p));
    }
    return tps;
  }

  /**
   * Reads every partition of {@code topic} from its beginning to its end offset (the high watermark when this starts)
   * with a fresh consumer, booking the records through {@code reader}. Errors are retried until {@code bound}.
   *
   * @return null if everything up to the end offsets was read within {@code bound}; else what was missing
   */
  public static String readAll(TributaryClient client, String topic, int partitions, Ledger.Reader reader,
      Duration bound) {
    long deadline = System.nanoTime() + bound.toNanos();
    List<TopicPartition> tps = partitions(topic, partitions);
    String lastError = null;
    try (Consumer<String, String> consumer =
        client.consumer(Map.of("auto.offset.reset", "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> ends = null;
      while (ends == null) {
        try {
          ends = consumer.endOffsets(tps);
        } catch (RuntimeException e) {
          lastError = Ledger.errorName(e);
          if (System.nanoTime() > deadline) {
            return "no end offsets within " + bound.toSeconds() + " s (" + lastError + ")";
          }
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
      }
      Map<TopicPartition, Long> positions = new HashMap<>();
      while (true) {
        boolean done = true;
        for (TopicPartition tp : tps) {
          Long next = reader.nextOffset(tp.partition());
          long at = next == null ? positions.getOrDefault(tp, 0L) : next;
          done &= at >= ends.get(tp);
        }
        if (done) {
          return null;
        }
        if (System.nanoTime() > deadline) {
          Map<Integer, String> where = new TreeMap<>();
          for (TopicPartition tp : tps) {
            where.put(tp.partition(), reader.nextOffset(tp.partition()) + "/" + ends.get(tp));
          }
          return "not read to the end within " + bound.toSeconds() + " s: next/end offset per partition " + where
              + (lastError == null ? "" : " (last error " + lastError + ")");
        }
        try {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
            reader.read(r.partition(), r.offset(), r.value());
          }
          for (TopicPartition tp : tps) {
            positions.put(tp, consumer.position(tp));
          }
        } catch (RuntimeException e) {
          lastError = Ledger.errorName(e);
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
      }
    }
  }
}
