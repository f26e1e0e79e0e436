package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.tributary.broker.Gw;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.record.CompressionType;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The consumer against an in-memory {@link FakeGateway} (no broker). */
class TributaryConsumerTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Duration POLL = Duration.ofSeconds(5);

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  private record Setup(FakeGateway fake, TributaryClient client) {}

  private static Setup setup() {
    FakeGateway fake = new FakeGateway();
    ActorRef<ClientRequest> gateway = testKit.spawn(fake.behavior());
    return new Setup(fake, TributaryClient.embedded(testKit.system(), gateway));
  }

  private static Consumer<String, String> consumer(TributaryClient client, Map<String, Object> config) {
    return client.consumer(config, Deserializer.string(), Deserializer.string());
  }

  /** Produces {@code count} values "prefix-i" to one partition, in batches of {@code perBatch}. */
  private static void produce(TributaryClient client, String topic, int partition, String prefix, int count)
      throws Exception {
    try (Producer<String, String> producer =
        client.producer(Map.of(ClientConfig.BATCH_SIZE, 512), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>(topic, partition, "k", prefix + "-" + i));
      }
      producer.flush();
    }
  }

  /** Polls until {@code count} records arrived (bounded). */
  private static List<ConsumerRecord<String, String>> pollFor(Consumer<String, String> consumer, int count) {
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (out.size() < count && System.nanoTime() < deadline) {
      out.addAll(consumer.poll(Duration.ofMillis(200)));
    }
    return out;
  }

  /**
   * A stored lz4 batch whose compressed section is garbage behind a valid CRC (a broker refuses it; here it is stored
   * unchecked): poll fails with a typed INVALID_RECORD after the records before it, again on every poll, until the
   * application seeks past it; the records after it are then read.
   */
  @Test
  void compressedBatchThatDoesNotDecompressFailsPollWithInvalidRecordUntilSkipped() throws Exception {
    Setup s = setup();
    s.fake().createTopic("bad", 1);
    TopicPartition tp = new TopicPartition("bad", 0);
    s.fake().appendUnchecked("bad", 0, Gw.batch("good-", 10, 1000L, CompressionType.LZ4));
    byte[] bad = Gw.batch("bad-", 10, 1000L, CompressionType.LZ4);
    byte[] noise = new byte[bad.length - RecordBatch.RECORDS_OFFSET];
    new java.util.Random(3).nextBytes(noise);
    System.arraycopy(noise, 0, bad, RecordBatch.RECORDS_OFFSET, noise.length);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(bad, RecordBatch.ATTRIBUTES_OFFSET, bad.length - RecordBatch.ATTRIBUTES_OFFSET);
    java.nio.ByteBuffer.wrap(bad).putInt(RecordBatch.CRC_OFFSET, (int) crc.getValue());
    assertTrue(RecordBatch.wrap(bad).isValid());
    s.fake().appendUnchecked("bad", 0, bad);
    s.fake().appendUnchecked("bad", 0, Gw.batch("after-", 5, 1000L, CompressionType.ZSTD));
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      consumer.assign(List.of(tp));
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      TributaryException error = null;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while ((error == null || got.size() < 10) && System.nanoTime() < deadline) {
        try {
          got.addAll(consumer.poll(Duration.ofMillis(200)));
        } catch (TributaryException e) {
          error = e;
        }
      }
      assertTrue(error != null, "poll must fail on the batch that does not decompress");
      assertEquals(ErrorCode.INVALID_RECORD, error.errorCode());
      assertEquals(10, got.size());
      for (int i = 0; i < 10; i++) {
        assertEquals("good-" + i, got.get(i).value());
        assertEquals(i, got.get(i).offset());
      }
      assertEquals(10L, consumer.position(tp));
      TributaryException again = assertThrows(TributaryException.class, () -> pollFor(consumer, 1));
      assertEquals(ErrorCode.INVALID_RECORD, again.errorCode());

      consumer.seek(tp, 20L);
      List<ConsumerRecord<String, String>> after = pollFor(consumer, 5);
      assertEquals(5, after.size());
      for (int i = 0; i < 5; i++) {
        assertEquals("after-" + i, after.get(i).value());
        assertEquals(20L + i, after.get(i).offset());
      }
    }
  }

  /**
   * As Kafka's {@code position(TopicPartition, Duration)}: a position that cannot be looked up (its partition has no
   * leader) fails with a retriable error once the given time is up, not after {@code default.api.timeout.ms} (ten
   * minutes here); once the leader is back, the same call answers.
   */
  @Test
  void positionWithATimeoutGivesUpAtThatTimeout() throws Exception {
    Setup s = setup();
    s.fake().createTopic("nolead", 1);
    TopicPartition tp = new TopicPartition("nolead", 0);
    s.fake().appendUnchecked("nolead", 0, Gw.batch("r-", 3, 1000L));
    s.fake().listOffsetsLeaderNotAvailable = true;
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.DEFAULT_API_TIMEOUT_MS, 600_000));
      consumer.assign(List.of(tp));
      consumer.seekToEnd(List.of(tp));
      TributaryException e = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60),
          () -> assertThrows(TributaryException.class, () -> consumer.position(tp, Duration.ofMillis(300))),
          "bounded by the given timeout, not by default.api.timeout.ms");
      assertTrue(e.errorCode().retriable(), e.toString());
      TributaryException end = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60),
          () -> assertThrows(TributaryException.class, () -> consumer.endOffsets(List.of(tp), Duration.ofMillis(300))),
          "endOffsets bounded by the given timeout as well");
      assertTrue(end.errorCode().retriable(), end.toString());
      s.fake().listOffsetsLeaderNotAvailable = false;
      assertEquals(Map.of(tp, 3L), consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)));
      assertEquals(Map.of(tp, 0L), consumer.beginningOffsets(List.of(tp), Duration.ofSeconds(30)));
      assertEquals(3L, consumer.position(tp, Duration.ofSeconds(30)));
    }
  }

  /**
   * A batch whose offset range ends past its last record (as log compaction leaves them; its lastOffsetDelta says 9,
   * it holds offsets 0-4): once its records are returned the position is the batch's next offset, as Kafka's
   * consumer, not the offset after the last record, and reading goes on from there.
   */
  @Test
  void thePositionMovesPastAFetchedBatchsWholeOffsetRange() throws Exception {
    Setup s = setup();
    s.fake().createTopic("gap", 1);
    TopicPartition tp = new TopicPartition("gap", 0);
    byte[] gap = Gw.batch("v", 5, 1000L, CompressionType.LZ4);
    java.nio.ByteBuffer.wrap(gap).putInt(RecordBatch.LAST_OFFSET_DELTA_OFFSET, 9);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(gap, RecordBatch.ATTRIBUTES_OFFSET, gap.length - RecordBatch.ATTRIBUTES_OFFSET);
    java.nio.ByteBuffer.wrap(gap).putInt(RecordBatch.CRC_OFFSET, (int) crc.getValue());
    s.fake().appendUnchecked("gap", 0, gap);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      consumer.assign(List.of(tp));
      List<ConsumerRecord<String, String>> first = pollFor(consumer, 5);
      assertEquals(List.of(0L, 1L, 2L, 3L, 4L), first.stream().map(ConsumerRecord::offset).toList());
      assertEquals(10L, consumer.position(tp), "past the batch's offset range 0-9");

      s.fake().appendUnchecked("gap", 0, Gw.batch("after-", 3, 1000L));
      List<ConsumerRecord<String, String>> after = pollFor(consumer, 3);
      assertEquals(List.of(10L, 11L, 12L), after.stream().map(ConsumerRecord::offset).toList());
      assertEquals("after-0", after.get(0).value());
    }
  }

  /**
   * One fetch of compressed batches holds many more records than max.poll.records: they come out max.poll.records at
   * a time, in order, each once, with the position after the last one returned.
   */
  @Test
  void aFetchOfManyCompressedBatchesIsReturnedMaxPollRecordsAtATime() throws Exception {
    Setup s = setup();
    s.fake().createTopic("many", 1);
    TopicPartition tp = new TopicPartition("many", 0);
    for (int b = 0; b < 40; b++) {
      s.fake().appendUnchecked("many", 0, Gw.batch("v", 250, 1000L + b, CompressionType.LZ4));
    }
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client,
          Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest", ClientConfig.MAX_POLL_RECORDS, 300));
      consumer.assign(List.of(tp));
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (got.size() < 10_000 && System.nanoTime() < deadline) {
        List<ConsumerRecord<String, String>> polled = consumer.poll(Duration.ofMillis(200));
        assertTrue(polled.size() <= 300, "max.poll.records: " + polled.size());
        got.addAll(polled);
        if (!polled.isEmpty()) {
          assertEquals(polled.get(polled.size() - 1).offset() + 1, consumer.position(tp));
        }
      }
      assertEquals(10_000, got.size());
      for (int i = 0; i < got.size(); i++) {
        assertEquals(i, got.get(i).offset());
        assertEquals("v" + (i % 250), got.get(i).value());
      }
    }
  }

  @Test
  void readsEveryRecordOnceInOffsetOrderFromTheBeginning() throws Exception {
    Setup s = setup();
    s.fake().createTopic("read", 2);
    try (TributaryClient client = s.client()) {
      produce(client, "read", 0, "a", 300);
      produce(client, "read", 1, "b", 200);
      Consumer<String, String> consumer =
          consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest", ClientConfig.MAX_POLL_RECORDS, 64));
      consumer.assign(List.of(new TopicPartition("read", 0), new TopicPartition("read", 1)));
      Map<Integer, Long> next = new HashMap<>();
      int total = 0;
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (total < 500 && System.nanoTime() < deadline) {
        List<ConsumerRecord<String, String>> records = consumer.poll(Duration.ofMillis(200));
        assertTrue(records.size() <= 64, "max.poll.records");
        for (ConsumerRecord<String, String> r : records) {
          long want = next.getOrDefault(r.partition(), 0L);
          assertEquals(want, r.offset(), "no skip, no repeat");
          assertEquals((r.partition() == 0 ? "a-" : "b-") + r.offset(), r.value());
          assertEquals("k", r.key());
          next.put(r.partition(), want + 1);
          total++;
        }
      }
      assertEquals(500, total);
      assertEquals(300L, consumer.position(new TopicPartition("read", 0)));
      assertEquals(200L, consumer.position(new TopicPartition("read", 1)));
      assertTrue(consumer.poll(Duration.ofMillis(50)).isEmpty());
    }
  }

  @Test
  void latestStartsAtTheEndAndLongPollsForNewRecords() throws Exception {
    Setup s = setup();
    s.fake().createTopic("tail", 1);
    TopicPartition tp = new TopicPartition("tail", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "tail", 0, "old", 10);
      Consumer<String, String> consumer = consumer(client, Map.of());
      consumer.assign(List.of(tp));
      assertEquals(10L, consumer.position(tp));
      assertTrue(consumer.poll(Duration.ofMillis(100)).isEmpty());
      produce(client, "tail", 0, "new", 3);
      List<ConsumerRecord<String, String>> records = pollFor(consumer, 3);
      assertEquals(List.of("new-0", "new-1", "new-2"), records.stream().map(ConsumerRecord::value).toList());
      assertEquals(10L, records.get(0).offset());
    }
  }

  @Test
  void seekRewindsAndSeekToBeginningAndEndMoveThePosition() throws Exception {
    Setup s = setup();
    s.fake().createTopic("seek", 1);
    TopicPartition tp = new TopicPartition("seek", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "seek", 0, "v", 50);
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      consumer.assign(List.of(tp));
      assertEquals(50, pollFor(consumer, 50).size());
      consumer.seek(tp, 45);
      List<ConsumerRecord<String, String>> tail = pollFor(consumer, 5);
      assertEquals(45L, tail.get(0).offset());
      assertEquals(5, tail.size());
      consumer.seekToBeginning(List.of(tp));
      assertEquals(0L, consumer.position(tp));
      assertEquals(0L, pollFor(consumer, 1).get(0).offset());
      consumer.seekToEnd(List.of());
      assertEquals(50L, consumer.position(tp));
      assertEquals(Map.of(tp, 0L), consumer.beginningOffsets(List.of(tp)));
      assertEquals(Map.of(tp, 50L), consumer.endOffsets(List.of(tp)));
    }
  }

  @Test
  void recordsBeyondMaxPollRecordsAreKeptForTheNextPollWithoutRefetching() throws Exception {
    Setup s = setup();
    s.fake().createTopic("buffered", 1);
    TopicPartition tp = new TopicPartition("buffered", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "buffered", 0, "v", 100);
      Consumer<String, String> consumer =
          consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest", ClientConfig.MAX_POLL_RECORDS, 10));
      consumer.assign(List.of(tp));
      List<ConsumerRecord<String, String>> first = pollFor(consumer, 1);
      assertEquals(10, first.size());
      List<ConsumerRecord<String, String>> second = consumer.poll(Duration.ZERO);
      assertEquals(10, second.size());
      assertEquals(10L, second.get(0).offset());
      assertEquals(List.of(), s.fake().requests(FetchRequest.class, f -> f.fetchOffset() > 0 && f.fetchOffset() < 100),
          "served from the buffer: nothing fetched again (a fetch ahead starts after the buffered records, at 100)");
    }
  }

  /**
   * While the application works through the records of one fetch response, the next fetch is already out, starting
   * after the buffered records; with a small fetch size (many responses) every record is still returned once, in
   * order.
   */
  @Test
  void theNextFetchGoesOutWhileTheRecordsOfOneResponseAreBuffered() throws Exception {
    Setup s = setup();
    s.fake().createTopic("ahead", 1);
    TopicPartition tp = new TopicPartition("ahead", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "ahead", 0, "a", 300);
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest",
          ClientConfig.MAX_POLL_RECORDS, 1, ClientConfig.MAX_PARTITION_FETCH_BYTES, 1024));
      consumer.assign(List.of(tp));
      List<ConsumerRecord<String, String>> first = pollFor(consumer, 1);
      assertEquals(0L, first.get(0).offset());
      // no further poll: the fetch after the first response was sent by the poll that returned its first record
      FetchRequest ahead = s.fake().awaitRequest(FetchRequest.class, f -> f.fetchOffset() > 1);
      List<FetchRequest> fetches = s.fake().requests(FetchRequest.class, f -> true);
      assertEquals(0L, fetches.get(0).fetchOffset());
      long secondStart = ahead.fetchOffset();
      assertTrue(secondStart < 300, "a full response holds at most 1024 bytes, fewer than 300 records");

      List<ConsumerRecord<String, String>> rest = pollFor(consumer, (int) secondStart); // to the second's first record
      assertEquals(secondStart, rest.get(rest.size() - 1).offset());
      // the first response is used up, the second is buffered: the third goes out while its records are returned
      FetchRequest third = s.fake().awaitRequest(FetchRequest.class, f -> f.fetchOffset() > secondStart);
      assertTrue(third.fetchOffset() < 300);

      rest.addAll(pollFor(consumer, 300 - 1 - rest.size()));
      assertEquals(299, rest.size());
      for (int i = 0; i < rest.size(); i++) {
        assertEquals(i + 1, rest.get(i).offset(), "no gap, no repeat");
        assertEquals("a-" + (i + 1), rest.get(i).value());
      }
      List<Long> offsets = s.fake().requests(FetchRequest.class, f -> true).stream()
          .map(FetchRequest::fetchOffset).toList();
      for (int i = 1; i < offsets.size(); i++) {
        assertTrue(offsets.get(i) >= offsets.get(i - 1), "fetches move forward: " + offsets);
      }
      consumer.close();
    }
  }

  @Test
  void autoOffsetResetNoneThrowsWithoutAPosition() {
    Setup s = setup();
    s.fake().createTopic("none", 1);
    TopicPartition tp = new TopicPartition("none", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "none"));
      consumer.assign(List.of(tp));
      TributaryException e = assertThrows(TributaryException.class, () -> consumer.poll(POLL));
      assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, e.errorCode());
      assertTrue(e.getMessage().contains("auto.offset.reset=none"), e.getMessage());
      assertThrows(TributaryException.class, () -> consumer.position(tp));
      consumer.seek(tp, 0);
      assertTrue(consumer.poll(Duration.ofMillis(50)).isEmpty());
    }
  }

  @Test
  void anOutOfRangePositionIsResetPerAutoOffsetReset() throws Exception {
    Setup s = setup();
    s.fake().createTopic("oor", 1);
    TopicPartition tp = new TopicPartition("oor", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "oor", 0, "v", 20);
      Consumer<String, String> earliest = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      earliest.assign(List.of(tp));
      earliest.seek(tp, 1000);
      List<ConsumerRecord<String, String>> records = pollFor(earliest, 20);
      assertEquals(0L, records.get(0).offset());

      Consumer<String, String> none = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "none"));
      none.assign(List.of(tp));
      none.seek(tp, 1000);
      TributaryException e = assertThrows(TributaryException.class, () -> none.poll(POLL));
      assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, e.errorCode());
    }
  }

  @Test
  void aPositionBelowTheLogStartIsResetToTheNewStart() throws Exception {
    Setup s = setup();
    s.fake().createTopic("retained", 1);
    TopicPartition tp = new TopicPartition("retained", 0);
    try (TributaryClient client = s.client()) {
      for (int i = 0; i < 4; i++) {
        produce(client, "retained", 0, "b" + i, 5);
      }
      s.fake().truncateBefore("retained", 0, 10);
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      consumer.assign(List.of(tp));
      consumer.seek(tp, 0);
      List<ConsumerRecord<String, String>> records = pollFor(consumer, 10);
      assertEquals(10L, records.get(0).offset());
      assertEquals(10, records.size());
    }
  }

  @Test
  void aFetchAnsweredAfterASeekIsDiscarded() throws Exception {
    Setup s = setup();
    s.fake().createTopic("epoch", 1);
    TopicPartition tp = new TopicPartition("epoch", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "epoch", 0, "v", 30);
      Consumer<String, String> consumer = consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"));
      consumer.assign(List.of(tp));
      consumer.seek(tp, 0);
      // sends a fetch from 0 and returns before handling its answer
      assertTrue(consumer.poll(Duration.ZERO).isEmpty());
      consumer.seek(tp, 25);
      List<ConsumerRecord<String, String>> records = pollFor(consumer, 5);
      assertEquals(List.of(25L, 26L, 27L, 28L, 29L), records.stream().map(ConsumerRecord::offset).toList());
    }
  }

  @Test
  void pollOnAMissingTopicThrowsUnknownTopicAfterRetryingForTheTimeout() {
    Setup s = setup();
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(client, Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest", ClientConfig.RETRY_BACKOFF_MS, 20));
      consumer.assign(List.of(new TopicPartition("ghost", 0)));
      TributaryException e = assertThrows(TributaryException.class, () -> consumer.poll(Duration.ofMillis(300)));
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, e.errorCode());
      assertTrue(e.getMessage().contains("ghost"), e.getMessage());
    }
  }

  @Test
  void assignmentRulesFollowKafka() {
    Setup s = setup();
    s.fake().createTopic("rules", 2);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, Map.of());
      assertThrows(IllegalStateException.class, () -> consumer.poll(Duration.ZERO));
      TopicPartition p0 = new TopicPartition("rules", 0);
      TopicPartition p1 = new TopicPartition("rules", 1);
      consumer.assign(List.of(p0, p1));
      assertEquals(Set.of(p0, p1), consumer.assignment());
      consumer.seek(p1, 0);
      consumer.assign(List.of(p1));
      assertEquals(Set.of(p1), consumer.assignment());
      assertEquals(0L, consumer.position(p1), "kept partitions keep their position");
      assertThrows(IllegalStateException.class, () -> consumer.seek(p0, 0));
      assertThrows(IllegalArgumentException.class, () -> consumer.seek(p1, -1));
      assertThrows(IllegalArgumentException.class, () -> consumer.assign(null));
      assertEquals(2, consumer.partitionsFor("rules"));
      consumer.close();
      assertThrows(IllegalStateException.class, () -> consumer.poll(Duration.ZERO));
      consumer.close();
    }
  }

  @Test
  void fetchErrorsOfALeaderMoveAreRetriedAtTheSamePositionWithoutSkippingOrResetting() throws Exception {
    Setup s = setup();
    s.fake().createTopic("move", 1);
    try (TributaryClient client = s.client()) {
      produce(client, "move", 0, "m", 100);
      Consumer<String, String> consumer =
          consumer(
              client,
              Map.of(
                  ClientConfig.AUTO_OFFSET_RESET, "latest", // a reset would skip everything: it must not happen
                  ClientConfig.MAX_POLL_RECORDS, 10,
                  ClientConfig.RETRY_BACKOFF_MS, 5));
      TopicPartition tp = new TopicPartition("move", 0);
      consumer.assign(List.of(tp));
      consumer.seek(tp, 20);
      List<ErrorCode> faults =
          List.of(
              ErrorCode.NOT_LEADER_OR_FOLLOWER,
              ErrorCode.LEADER_NOT_AVAILABLE,
              ErrorCode.FENCED_LEADER_EPOCH,
              ErrorCode.UNKNOWN_LEADER_EPOCH,
              ErrorCode.REQUEST_TIMED_OUT);
      s.fake().fetchFaults.addAll(faults);
      List<ConsumerRecord<String, String>> read = pollFor(consumer, 80);
      assertEquals(80, read.size());
      for (int i = 0; i < read.size(); i++) {
        assertEquals(20 + i, read.get(i).offset(), "no skip, no repeat");
        assertEquals("m-" + (20 + i), read.get(i).value());
      }
      assertTrue(s.fake().fetchFaults.isEmpty(), "every fault was met");
      List<FetchRequest> fetches = s.fake().requests(FetchRequest.class, r -> true);
      for (int i = 0; i < faults.size() + 1; i++) {
        assertEquals(20L, fetches.get(i).fetchOffset(), "refetched at the same position after " + i + " faults");
      }
      assertEquals(0, s.fake().countOf(io.tributary.protocol.ListOffsetsRequest.class), "no offset reset");
      consumer.close();
    }
  }
}
