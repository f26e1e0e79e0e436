package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tributary.client.Admin;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.RecordMetadata;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Durability across a crash, checked from the outside as a user would: a broker JVM acknowledges records with
 * {@code acks=1}, is killed with SIGKILL (no shutdown hook, no journal close), and is started again on the same data
 * directory and port. A fresh client must then read back every acknowledged record at the offset it was acknowledged
 * with, with the same key and value, in offset order per partition, once, and nothing else; and offsets must continue
 * densely after the restart.
 *
 * <p>Two crashes: one after every send was answered (the log must then be exactly the acknowledged records), and one
 * in the middle of a stream of sends (acknowledged records must be there; records sent but not answered may be there
 * too, as in Kafka with {@code acks=1}, but only as sent, and none twice).
 */
class DurabilityIT {
  private static final String TOPIC = "durability";
  private static final int PARTITIONS = 3;
  private static final int RECORDS = 20_000;
  private static final int MORE_RECORDS = 3_000;
  private static final int KEYS = 500;
  /** The mid-produce kill comes once this many records are acknowledged ... */
  private static final int KILL_AFTER_ACKS = 10_000;
  /** ... while the sender goes on, up to this many (so the buffer never fills). */
  private static final int MAX_SENDS_BEFORE_KILL = 200_000;
  /** Bound on producing or reading everything: only against hangs, not a performance limit. */
  private static final Duration BOUND = Duration.ofMinutes(3);

  private final Deque<AutoCloseable> cleanup = new ArrayDeque<>();

  @AfterEach
  void stopEverythingStarted() {
    while (!cleanup.isEmpty()) {
      try {
        cleanup.pop().close();
      } catch (Exception e) {
        // go on with the rest
      }
    }
  }

  @Test
  void acknowledgedRecordsSurviveSigkillAtTheirOffsetsAndOffsetsContinueDensely() {
    Path dir = JavaProcesses.testDir("DurabilityIT", "acknowledgedRecordsSurviveSigkill");
    Path dataDir = dir.resolve("data");
    int port = BrokerProcess.freePort();

    long t0 = System.nanoTime();
    BrokerProcess first = track(BrokerProcess.start("broker-before-kill", dataDir, port, dir));
    String bootstrap = first.awaitReady();
    assertEquals("127.0.0.1:" + port, bootstrap, "the broker's advertised bootstrap address");
    long started = System.nanoTime();

    Map<Integer, TreeMap<Long, Sent>> acked;
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      try (Admin admin = client.admin()) {
        admin.createTopic(TOPIC, PARTITIONS, (short) 1, Map.of());
      }
      acked = produce(client, 0, RECORDS, first);
    }
    long produced = System.nanoTime();
    assertDenseFromZero(acked, RECORDS);

    first.kill();
    assertFalse(first.isAlive(), "the first broker is gone after SIGKILL");
    long killed = System.nanoTime();

    BrokerProcess second = track(BrokerProcess.start("broker-after-kill", dataDir, port, dir));
    assertEquals(bootstrap, second.awaitReady(), "the restarted broker's bootstrap address");
    long restarted = System.nanoTime();

    Map<Integer, Long> endsAfterRestart = new HashMap<>();
    acked.forEach((p, log) -> endsAfterRestart.put(p, (long) log.size()));
    long readBack;
    long producedMore;
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      assertLogIs(acked, readFromBeginning(client, second), "after SIGKILL and restart");
      readBack = System.nanoTime();

      acked = merge(acked, produceAfter(client, second, endsAfterRestart, RECORDS, MORE_RECORDS));
      producedMore = System.nanoTime();
      assertDenseFromZero(acked, RECORDS + MORE_RECORDS);
      assertLogIs(acked, readFromBeginning(client, second), "after producing more to the restarted broker");
    }
    long end = System.nanoTime();
    assertEquals(0, second.stop(), "the restarted broker shuts down cleanly on SIGTERM\n" + second.diagnostics());

    System.out.printf(
        "DurabilityIT timings: first start %d ms, produce %d records %d ms, kill %d ms, restart %d ms,"
            + " read back %d ms, produce %d more %d ms, read all again %d ms%n",
        ms(started - t0), RECORDS, ms(produced - started), ms(killed - produced), ms(restarted - killed),
        ms(readBack - restarted), MORE_RECORDS, ms(producedMore - readBack), ms(end - producedMore));
  }

  @Test
  void recordsAcknowledgedBeforeSigkillInMidProduceSurviveAndNoRecordAppearsTwice() throws Exception {
    Path dir = JavaProcesses.testDir("DurabilityIT", "sigkillInMidProduce");
    Path dataDir = dir.resolve("data");
    int port = BrokerProcess.freePort();
    BrokerProcess first = track(BrokerProcess.start("broker-killed-mid-produce", dataDir, port, dir));
    String bootstrap = first.awaitReady();

    Map<Integer, RecordMetadata> metadata = new ConcurrentHashMap<>();
    AtomicInteger sent = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    CompletableFuture<Void> enoughAcknowledged = new CompletableFuture<>();
    int sentAtKill;
    int acknowledgedAtKill;
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      try (Admin admin = client.admin()) {
        admin.createTopic(TOPIC, PARTITIONS, (short) 1, Map.of());
      }
      Producer<String, String> producer =
          client.producer(Map.of("acks", "1"), Serializer.string(), Serializer.string());
      Thread sender = new Thread(() -> {
        for (int seq = 0; seq < MAX_SENDS_BEFORE_KILL && !stop.get(); seq++) {
          Sent s = record(seq);
          int n = seq;
          try {
            producer.send(new ProducerRecord<>(TOPIC, s.key(), s.value())).whenComplete((md, ex) -> {
              if (ex == null) {
                metadata.put(n, md);
                if (metadata.size() >= KILL_AFTER_ACKS) {
                  enoughAcknowledged.complete(null);
                }
              }
            });
          } catch (RuntimeException e) {
            return; // the producer is closed
          }
          sent.incrementAndGet();
        }
      }, "durability-sender");
      cleanup.push(() -> {
        stop.set(true);
        sender.join(BOUND.toMillis());
      });
      sender.start();
      try {
        enoughAcknowledged.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        fail(metadata.size() + " of " + KILL_AFTER_ACKS + " records acknowledged within " + BOUND.toSeconds()
            + " s\n" + first.diagnostics());
      }
      first.kill();
      sentAtKill = sent.get();
      acknowledgedAtKill = metadata.size();
      stop.set(true);
      sender.join(BOUND.toMillis());
      assertFalse(sender.isAlive(), "the sender thread stopped");
      producer.close(Duration.ZERO); // abandons what the dead broker never answered
    }
    int sentTotal = sent.get();
    Map<Integer, TreeMap<Long, Sent>> acked = byPartition(metadata, sentTotal);
    int ackedTotal = acked.values().stream().mapToInt(Map::size).sum();
    assertTrue(sentTotal > ackedTotal,
        "test precondition: sends were still unanswered when the broker was killed (sent " + sentTotal
            + ", acknowledged " + ackedTotal + ")");

    BrokerProcess second = track(BrokerProcess.start("broker-after-kill", dataDir, port, dir));
    assertEquals(bootstrap, second.awaitReady(), "the restarted broker's bootstrap address");
    Map<Integer, Long> endsAfterRestart = new HashMap<>();
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      Map<Integer, PartitionRead> read = readFromBeginning(client, second);
      assertLogHolds(acked, read, sentTotal, false, "after SIGKILL in mid-produce and restart");
      read.forEach((p, r) -> endsAfterRestart.put(p, r.highWatermark()));

      acked = merge(acked, produceAfter(client, second, endsAfterRestart, sentTotal, MORE_RECORDS));
      assertLogHolds(acked, readFromBeginning(client, second), sentTotal + MORE_RECORDS, false,
          "after producing more to the restarted broker");
    }
    assertEquals(0, second.stop(), "the restarted broker shuts down cleanly on SIGTERM\n" + second.diagnostics());
    long stored = endsAfterRestart.values().stream().mapToLong(Long::longValue).sum();
    System.out.printf(
        "DurabilityIT mid-produce kill: sent %d (%d when killed), acknowledged %d (%d when killed), found after"
            + " restart %d (high watermarks %s)%n",
        sentTotal, sentAtKill, ackedTotal, acknowledgedAtKill, stored, endsAfterRestart);
  }

  /** A record as sent: its sequence number in the test, key and value. */
  private record Sent(int seq, String key, String value) {}

  private static Sent record(int seq) {
    // about 100 bytes, with non-ASCII characters, so that bytes and not just characters must survive
    String value = "value-" + seq + "-ünïcødé-€-" + "x".repeat(seq % 64) + "-end";
    return new Sent(seq, "key-" + (seq % KEYS), value);
  }

  /**
   * Sends records {@code from .. from+count-1} with {@code acks=1} and waits (bounded) until each is answered. Every
   * send must succeed on a healthy broker.
   *
   * @return the acknowledged records by partition and offset
   */
  private Map<Integer, TreeMap<Long, Sent>> produce(
      TributaryClient client, int from, int count, BrokerProcess broker) {
    Map<Integer, RecordMetadata> metadata = new ConcurrentHashMap<>();
    Map<Integer, Throwable> failures = new ConcurrentHashMap<>();
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(count);
    try (Producer<String, String> producer =
        client.producer(Map.of("acks", "1"), Serializer.string(), Serializer.string())) {
      for (int seq = from; seq < from + count; seq++) {
        Sent s = record(seq);
        int n = seq;
        CompletableFuture<RecordMetadata> f =
            producer.send(new ProducerRecord<>(TOPIC, s.key(), s.value())).toCompletableFuture();
        f.whenComplete((md, ex) -> {
          if (ex != null) {
            failures.put(n, ex);
          } else {
            metadata.put(n, md);
          }
        });
        futures.add(f);
      }
      producer.flush();
      try {
        CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
            .handle((v, ex) -> null)
            .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        fail(metadata.size() + failures.size() + " of " + count + " sends answered within " + BOUND.toSeconds()
            + " s\n" + broker.diagnostics());
      } catch (InterruptedException | ExecutionException e) {
        throw new AssertionError(e);
      }
    }
    if (!failures.isEmpty()) {
      var firstFailure = new TreeMap<>(failures).firstEntry();
      fail(failures.size() + " of " + count + " sends failed on a healthy broker; first: record "
          + firstFailure.getKey() + ": " + firstFailure.getValue() + "\n" + broker.diagnostics(),
          firstFailure.getValue());
    }

    return byPartition(metadata, from, count);
  }

  /**
   * The acknowledged records among {@code seq} in {@code [from, from + count)} by partition and offset; fails if two
   * got one offset, a key went to two partitions, or an acknowledgement names another topic or a bad partition.
   */
  private static Map<Integer, TreeMap<Long, Sent>> byPartition(
      Map<Integer, RecordMetadata> metadata, int from, int count) {
    Map<Integer, TreeMap<Long, Sent>> byPartition = new TreeMap<>();
    Map<String, Integer> partitionOfKey = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (int seq = from; seq < from + count; seq++) {
      RecordMetadata md = metadata.get(seq);
      if (md == null) {
        continue;
      }
      Sent s = record(seq);
      if (!TOPIC.equals(md.topic()) || md.partition() < 0 || md.partition() >= PARTITIONS) {
        problems.add("record " + seq + " acknowledged as " + md);
        continue;
      }
      Integer keyPartition = partitionOfKey.putIfAbsent(s.key(), md.partition());
      if (keyPartition != null && keyPartition != md.partition()) {
        problems.add("key " + s.key() + " went to partitions " + keyPartition + " and " + md.partition());
      }
      Sent previous = byPartition.computeIfAbsent(md.partition(), p -> new TreeMap<>()).put(md.offset(), s);
      if (previous != null) {
        problems.add("records " + previous.seq() + " and " + seq + " both acknowledged at " + md.partition() + "@"
            + md.offset());
      }
    }
    assertTrue(problems.isEmpty(), "acknowledgements: " + first(problems));
    return byPartition;
  }

  private static Map<Integer, TreeMap<Long, Sent>> byPartition(Map<Integer, RecordMetadata> metadata, int count) {
    return byPartition(metadata, 0, count);
  }

  /**
   * Produces {@code count} more records (from {@code seq = from}) to the restarted broker: each partition's new
   * offsets must be exactly {@code end, end + 1, ...} where {@code end} is its high watermark after the restart.
   */
  private Map<Integer, TreeMap<Long, Sent>> produceAfter(
      TributaryClient client, BrokerProcess broker, Map<Integer, Long> ends, int from, int count) {
    Map<Integer, TreeMap<Long, Sent>> more = produce(client, from, count, broker);
    List<String> problems = new ArrayList<>();
    for (var e : more.entrySet()) {
      long end = ends.getOrDefault(e.getKey(), 0L);
      long expectedLast = end + e.getValue().size() - 1;
      if (e.getValue().firstKey() != end || e.getValue().lastKey() != expectedLast) {
        problems.add("partition " + e.getKey() + ": new records got offsets " + e.getValue().firstKey() + ".."
            + e.getValue().lastKey() + " (" + e.getValue().size() + " records), expected " + end + ".."
            + expectedLast);
      }
    }
    assertTrue(problems.isEmpty(), "offsets continue densely after the restart: " + problems);
    return more;
  }

  private static Map<Integer, TreeMap<Long, Sent>> merge(
      Map<Integer, TreeMap<Long, Sent>> a, Map<Integer, TreeMap<Long, Sent>> b) {
    Map<Integer, TreeMap<Long, Sent>> merged = new TreeMap<>();
    a.forEach((p, log) -> merged.computeIfAbsent(p, x -> new TreeMap<>()).putAll(log));
    b.forEach((p, log) -> merged.computeIfAbsent(p, x -> new TreeMap<>()).putAll(log));
    return merged;
  }

  /** Offsets acknowledged per partition are exactly 0..n-1, and all {@code total} records are among them. */
  private static void assertDenseFromZero(Map<Integer, TreeMap<Long, Sent>> acked, int total) {
    int sum = 0;
    for (var e : acked.entrySet()) {
      TreeMap<Long, Sent> log = e.getValue();
      assertEquals(0L, log.firstKey(), "first offset of partition " + e.getKey());
      assertEquals(log.size() - 1L, log.lastKey(), "offsets of partition " + e.getKey() + " have no gaps");
      sum += log.size();
    }
    assertEquals(total, sum, "acknowledged records over all partitions");
    assertEquals(PARTITIONS, acked.size(), "records went to every partition (keys spread by murmur2)");
  }

  /**
   * Reads every partition from its log start to its high watermark with a fresh consumer.
   *
   * @return per partition: the high watermark before reading, and the records in the order polled
   */
  private static Map<Integer, PartitionRead> readFromBeginning(TributaryClient client, BrokerProcess broker) {
    List<TopicPartition> partitions = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      partitions.add(new TopicPartition(TOPIC, p));
    }
    Map<Integer, PartitionRead> result = new TreeMap<>();
    try (Consumer<String, String> consumer =
        client.consumer(Map.of("auto.offset.reset", "earliest"), Deserializer.string(), Deserializer.string())) {
      assertEquals(PARTITIONS, consumer.partitionsFor(TOPIC), "partitions of " + TOPIC);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> starts = consumer.beginningOffsets(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      for (TopicPartition tp : partitions) {
        result.put(tp.partition(), new PartitionRead(starts.get(tp), ends.get(tp), new ArrayList<>()));
      }
      long deadline = System.nanoTime() + BOUND.toNanos();
      while (!partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp))) {
        if (System.nanoTime() > deadline) {
          Map<TopicPartition, Long> positions = new HashMap<>();
          partitions.forEach(tp -> positions.put(tp, consumer.position(tp)));
          fail("read back did not reach the end within " + BOUND.toSeconds() + " s: positions " + positions
              + ", end offsets " + ends + "\n" + broker.diagnostics());
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofSeconds(1))) {
          assertEquals(TOPIC, r.topic());
          result.get(r.partition()).records().add(r);
        }
      }
    }
    return result;
  }

  private record PartitionRead(long logStart, long highWatermark, List<ConsumerRecord<String, String>> records) {}

  /**
   * The partitions hold exactly {@code expected}: log start 0, high watermark = number of acknowledged records, and
   * the records polled are offsets 0, 1, 2, ... in order, each with the acknowledged key and value; within a
   * partition, records of this one producer are in send order.
   */
  private static void assertLogIs(
      Map<Integer, TreeMap<Long, Sent>> expected, Map<Integer, PartitionRead> read, String when) {
    assertLogHolds(expected, read, Integer.MAX_VALUE, true, when);
  }

  /**
   * The invariants of a log read from the beginning after a crash: per partition, log start 0 and the records polled
   * are offsets 0 .. high watermark - 1, in order, once each; every acknowledged record is at its offset with its key
   * and value; every record read is one that was sent ({@code seq < sentCount}, its key and value), none twice over
   * all partitions; within a partition, records are in send order. With {@code exact}, nothing else is there: the
   * high watermark is the number of acknowledged records.
   */
  private static void assertLogHolds(
      Map<Integer, TreeMap<Long, Sent>> acked, Map<Integer, PartitionRead> read, int sentCount, boolean exact,
      String when) {
    List<String> problems = new ArrayList<>();
    Map<Integer, String> seenAt = new HashMap<>();
    for (int p = 0; p < PARTITIONS; p++) {
      TreeMap<Long, Sent> want = acked.getOrDefault(p, new TreeMap<>());
      PartitionRead got = read.get(p);
      if (got.logStart() != 0) {
        problems.add("partition " + p + ": log start offset " + got.logStart() + ", expected 0");
      }
      if (exact ? got.highWatermark() != want.size() : got.highWatermark() < want.size()) {
        problems.add("partition " + p + ": high watermark " + got.highWatermark() + ", acknowledged " + want.size()
            + " records");
      }
      long nextOffset = 0;
      int lastSeq = -1;
      for (ConsumerRecord<String, String> r : got.records()) {
        String at = "partition " + p + "@" + r.offset();
        if (r.offset() != nextOffset) {
          problems.add(at + ": read where offset " + nextOffset + " was next ("
              + (r.offset() < nextOffset ? "duplicate or backwards" : "gap") + ")");
        }
        nextOffset = r.offset() + 1;
        Sent s = want.get(r.offset());
        if (s == null) {
          int seq = seqOf(r.value());
          if (exact || seq < 0 || seq >= sentCount) {
            problems.add(at + ": holds " + r.key() + "=" + r.value() + ", which was not "
                + (exact ? "acknowledged there" : "sent"));
            continue;
          }
          s = record(seq);
        }
        if (!s.key().equals(r.key()) || !s.value().equals(r.value())) {
          problems.add(at + ": read " + r.key() + "=" + r.value() + ", " + (want.containsKey(r.offset())
              ? "acknowledged " : "sent ") + s.key() + "=" + s.value());
        }
        String earlier = seenAt.put(s.seq(), at);
        if (earlier != null) {
          problems.add(at + ": record " + s.seq() + " is also at " + earlier + " (duplicate)");
        }
        if (s.seq() < lastSeq) {
          problems.add(at + ": record " + s.seq() + " stored after record " + lastSeq + " although sent before it");
        }
        lastSeq = Math.max(lastSeq, s.seq());
      }
      if (nextOffset != got.highWatermark()) {
        problems.add("partition " + p + ": read up to offset " + (nextOffset - 1) + ", high watermark "
            + got.highWatermark());
      }
    }
    assertTrue(problems.isEmpty(), when + ": " + problems.size() + " problems, first: " + first(problems));
  }

  /** The sequence number in a value made by {@link #record}, or -1. */
  private static int seqOf(String value) {
    if (value == null || !value.startsWith("value-")) {
      return -1;
    }
    int dash = value.indexOf('-', "value-".length());
    try {
      return Integer.parseInt(value.substring("value-".length(), dash < 0 ? value.length() : dash));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static List<String> first(List<String> problems) {
    return problems.subList(0, Math.min(20, problems.size()));
  }

  private <T extends AutoCloseable> T track(T resource) {
    cleanup.push(resource);
    return resource;
  }

  private static long ms(long nanos) {
    return nanos / 1_000_000;
  }
}
