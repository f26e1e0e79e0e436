package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.record.CompressionType;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The idempotent producer against a real single-node broker in the same JVM (over TCP): what the application sees and
 * what the log holds when the partition leader refuses one batch while later batches of the partition are in flight,
 * and when it refuses a batch as too large, which the producer splits.
 */
class IdempotentProducerIntegrationTest {

  private static OneNode one;
  private static BrokerNode node;
  private static TributaryClient client;
  private static Gw gw;

  @BeforeAll
  static void start() {
    one = OneNode.start();
    node = one.node;
    client = one.client;
    gw = one.gw;
  }

  @AfterAll
  static void stop() {
    if (one != null) {
      one.close();
    }
  }

  /**
   * Ten records to one partition; the fifth is larger than the topic's {@code max.message.bytes} (but within the
   * producer's {@code max.request.size}). Records 1-4, 5 and 6-10 form three batches, sent together at the flush, so
   * the batch of 6-10 is in flight when the leader refuses the fifth's and is itself refused as out of sequence. Only
   * the fifth fails; every other record is acknowledged once, at its place, and is read back once, in order.
   */
  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"NONE", "LZ4"})
  void aRecordTheLeaderRefusesFailsAloneAndTheBatchesInFlightBehindItAreWrittenOnceInOrder(CompressionType type)
      throws Exception {
    String topic = "idem-too-large-" + type.configName;
    List<String> values = topicForTenWithTheFifthTooLarge(topic);
    List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
    Map<String, Object> config =
        Map.of(
            ClientConfig.LINGER_MS, 600_000, // nothing is sent before the flush
            ClientConfig.BATCH_SIZE, 1024, // the fifth does not fit the first batch and fills its own
            ClientConfig.COMPRESSION_TYPE, type.configName);
    try (Producer<String, String> producer = client.producer(config, Serializer.string(), Serializer.string())) {
      for (String v : values) {
        sent.add(producer.send(new ProducerRecord<>(topic, 0, null, v)));
      }
      producer.flush();
    }

    assertFifthRefusedOthersAtTheirPlace(sent);
    List<String> expected = new ArrayList<>(values);
    expected.remove(4);
    List<RecordBatch> stored = storedBatches(topic);
    assertEquals(2, stored.size(), "records 1-4 and 6-10");
    assertEquals(stored.get(0).producerId(), stored.get(1).producerId());
    assertEquals(0, stored.get(0).producerEpoch());
    assertEquals(0, stored.get(0).baseSequence());
    assertEquals(1, stored.get(1).producerEpoch(), "resent with the bumped epoch");
    assertEquals(0, stored.get(1).baseSequence(), "from sequence 0");

    assertReadBackInOrder(topic, expected);
    assertEquals(9L, gw.listOffsets(topic, 0, ListOffsetsRequest.LATEST_TIMESTAMP).offset(), "nothing else was written");
  }

  /**
   * Ten records to one partition in ONE batch (a large batch.size, sent at the flush); the fifth is larger than the
   * topic's {@code max.message.bytes}, so the leader refuses the batch as too large. The producer splits it into
   * [1-4], [5] and [6-10] and resends them: only the fifth fails (MESSAGE_TOO_LARGE), the nine others are acknowledged
   * at offsets 0-8, in order, written once, and every record is done when {@code flush()} returns. With idempotence
   * the pieces go out with the bumped epoch from sequence 0, and [6-10], behind the refused fifth, with the next one.
   */
  @ParameterizedTest(name = "idempotence={0}, compression={1}")
  @CsvSource({"true, NONE", "true, LZ4", "false, NONE", "false, LZ4"})
  void aBatchRefusedAsTooLargeIsSplitAndOnlyTheRecordTooLargeAloneFails(boolean idempotent, CompressionType type)
      throws Exception {
    String topic = "split-" + idempotent + "-" + type.configName;
    List<String> values = topicForTenWithTheFifthTooLarge(topic);
    List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
    Map<String, Object> config =
        Map.of(
            ClientConfig.LINGER_MS, 600_000, // nothing is sent before the flush
            ClientConfig.BATCH_SIZE, 65_536, // the ten fit one batch
            ClientConfig.ENABLE_IDEMPOTENCE, idempotent,
            ClientConfig.COMPRESSION_TYPE, type.configName);
    try (Producer<String, String> producer = client.producer(config, Serializer.string(), Serializer.string())) {
      for (String v : values) {
        sent.add(producer.send(new ProducerRecord<>(topic, 0, null, v)));
      }
      producer.flush();
      for (int i = 0; i < 10; i++) {
        assertTrue(sent.get(i).toCompletableFuture().isDone(), "record " + (i + 1) + " is done after flush()");
      }
    }

    assertFifthRefusedOthersAtTheirPlace(sent);
    List<String> expected = new ArrayList<>(values);
    expected.remove(4);
    List<RecordBatch> stored = storedBatches(topic);
    assertEquals(2, stored.size(), "records 1-4 and 6-10, each piece once");
    assertEquals(4, stored.get(0).recordCount());
    assertEquals(5, stored.get(1).recordCount());
    if (idempotent) {
      assertEquals(stored.get(0).producerId(), stored.get(1).producerId());
      assertEquals(1, stored.get(0).producerEpoch(), "the split bumped the epoch");
      assertEquals(0, stored.get(0).baseSequence());
      assertEquals(2, stored.get(1).producerEpoch(), "behind the refused fifth: the next epoch");
      assertEquals(0, stored.get(1).baseSequence());
    } else {
      assertEquals(RecordBatch.NO_PRODUCER_ID, stored.get(0).producerId());
      assertEquals(RecordBatch.NO_PRODUCER_ID, stored.get(1).producerId());
    }

    assertReadBackInOrder(topic, expected);
    assertEquals(
        9L, gw.listOffsets(topic, 0, ListOffsetsRequest.LATEST_TIMESTAMP).offset(), "nothing else was written");
  }

  private static String randomLetters(int n) {
    Random random = new Random(5);
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      sb.append((char) ('a' + random.nextInt(26)));
    }
    return sb.toString();
  }

  /** Of 10 sends, the fifth failed with MESSAGE_TOO_LARGE and the others are acknowledged at offsets 0..8 in order. */
  private static void assertFifthRefusedOthersAtTheirPlace(List<CompletionStage<RecordMetadata>> sent) throws Exception {
    ExecutionException fifth =
        assertThrows(ExecutionException.class, () -> sent.get(4).toCompletableFuture().get(30, TimeUnit.SECONDS));
    assertEquals(ErrorCode.MESSAGE_TOO_LARGE, ((TributaryException) fifth.getCause()).errorCode());
    long offset = 0;
    for (int i = 0; i < 10; i++) {
      if (i != 4) {
        RecordMetadata m = sent.get(i).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(offset++, m.offset(), "record " + (i + 1) + " acknowledged at its place");
      }
    }
  }

  /** The record batches stored in partition 0 of {@code topic}, from offset 0 (one fetch of up to 1 MiB). */
  private static List<RecordBatch> storedBatches(String topic) {
    List<RecordBatch> stored = new ArrayList<>();
    FetchResponse f = gw.fetch(topic, 0, 0L, 1 << 20, 0);
    assertEquals(ErrorCode.NONE, f.error(), f.errorMessage());
    for (byte[] b : f.batches()) {
      stored.add(RecordBatch.validate(b));
    }
    return stored;
  }

  /** A consumer of partition 0 of {@code topic} from the start reads exactly {@code expected}, at offsets 0, 1, ... */
  private static void assertReadBackInOrder(String topic, List<String> expected) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (Consumer<String, String> consumer =
        client.consumer(
            Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(List.of(tp));
      List<String> got = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (got.size() < expected.size() && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          assertEquals(got.size(), r.offset());
          got.add(r.value());
        }
      }
      assertEquals(expected, got, "every record but the fifth, once, in order");
      assertEquals(expected.size(), consumer.position(tp));
      assertTrue(consumer.poll(Duration.ZERO).isEmpty());
    }
  }

  /**
   * Creates {@code topic} (1 partition, {@code max.message.bytes=1000}) and returns the 10 values to send to it:
   * "line-1" .. "line-10", but the fifth is 3,000 random letters (too large alone, even compressed).
   */
  private static List<String> topicForTenWithTheFifthTooLarge(String topic) {
    AdminResponse created = gw.create(topic, 1, Map.of("max.message.bytes", "1000"));
    assertEquals(ErrorCode.NONE, created.error(), created.errorMessage());
    List<String> values = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      values.add(i == 5 ? randomLetters(3000) : "line-" + i);
    }
    return values;
  }
}
