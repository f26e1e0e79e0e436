package io.tributary.it;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRebalanceListener;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.client.WakeupException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A consumer group member in its own JVM, for {@link GroupFailoverIT}: subscribes to a topic in a group, processes
 * records, commits after every poll, and logs everything it does, one line each, flushed at once:
 *
 * <pre>
 * A ms partition,partition,...     partitions assigned (listener), with the wall-clock time
 * V ms partition,partition,...     partitions revoked
 * L ms partition,partition,...     partitions lost
 * R ms partition offset value      a record processed
 * C ms partition offset            an offset committed (the next offset to read)
 * </pre>
 *
 * Args: bootstrap group topic logFile memberName. Stops cleanly (commit, leave) on SIGTERM.
 */
public final class GroupMemberMain {
  /** How long the shutdown hook waits for main to finish closing. */
  private static final long STOP_BOUND_SECONDS = 55;

  private GroupMemberMain() {}

  public static void main(String[] args) throws IOException {
    String bootstrap = args[0];
    String group = args[1];
    String topic = args[2];
    PrintStream log = new PrintStream(new FileOutputStream(args[3], true), true, StandardCharsets.UTF_8);
    CountDownLatch stopped = new CountDownLatch(1);
    try (TributaryClient client = TributaryClient.connect(bootstrap)) {
      Consumer<String, String> consumer = client.consumer(Map.of(
              "group.id", group,
              "client.id", args[4],
              "auto.offset.reset", "earliest",
              "enable.auto.commit", "false",
              "session.timeout.ms", "6000",
              "heartbeat.interval.ms", "500",
              "max.poll.records", "200"),
          Deserializer.string(), Deserializer.string());
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        consumer.wakeup();
        try {
          // the consumer's close (20 s) and the client's are bounded; this bound only keeps a bug from hanging the JVM
          if (!stopped.await(STOP_BOUND_SECONDS, TimeUnit.SECONDS)) {
            System.err.println("GroupMemberMain: not stopped within " + STOP_BOUND_SECONDS + " s of SIGTERM");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) {
            commit(consumer, log);
            log.println("V " + System.currentTimeMillis() + " " + join(partitions));
          }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          log.println("A " + System.currentTimeMillis() + " " + join(partitions));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
          log.println("L " + System.currentTimeMillis() + " " + join(partitions));
        }
      });
      try {
        while (true) {
          List<ConsumerRecord<String, String>> records = consumer.poll(Duration.ofMillis(200));
          for (ConsumerRecord<String, String> r : records) {
            log.println("R " + System.currentTimeMillis() + " " + r.partition() + " " + r.offset() + " " + r.value());
          }
          if (!records.isEmpty()) {
            commit(consumer, log);
          }
        }
      } catch (WakeupException e) {
        long closing = System.nanoTime();
        consumer.close(Duration.ofSeconds(20));
        System.err.println("GroupMemberMain: consumer closed in " + (System.nanoTime() - closing) / 1_000_000
            + " ms after SIGTERM");
      } finally {
        // logged before the client (and with it the member actor) goes away
        log.println("X " + System.currentTimeMillis());
      }
    } finally {
      log.close();
      stopped.countDown();
    }
  }

  /** Commits the positions; a commit refused because the group moved on is logged (as Kafka apps handle it). */
  private static void commit(Consumer<String, String> consumer, PrintStream log) {
    try {
      consumer.commitSync();
      long now = System.currentTimeMillis();
      for (TopicPartition tp : consumer.assignment()) {
        log.println("C " + now + " " + tp.partition() + " " + consumer.position(tp));
      }
    } catch (TributaryException e) {
      log.println("E " + System.currentTimeMillis() + " " + e.errorCode());
    }
  }

  private static String join(Collection<TopicPartition> partitions) {
    StringBuilder b = new StringBuilder();
    for (TopicPartition tp : partitions) {
      b.append(b.length() == 0 ? "" : ",").append(tp.partition());
    }
    return b.length() == 0 ? "-" : b.toString();
  }
}
