package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ProduceResponse;
import io.tributary.record.ByteUtils;
import io.tributary.record.CompressionType;
import io.tributary.record.Header;
import io.tributary.record.RecordBatch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Compressed batches end to end through a real single-node broker in the same JVM: the producer compresses, the
 * broker validates and stores the bytes as produced (and uncompressed batches LZ4-compressed), the consumer
 * decompresses; and the broker's refusals.
 */
class CompressionIntegrationTest {

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

  private static void createTopic(String topic) {
    AdminResponse r = gw.create(topic, 1, Map.of());
    assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
  }

  /** Polls until {@code count} records arrived (bounded), checking max.poll.records on every poll. */
  private static List<ConsumerRecord<String, String>> pollFor(
      Consumer<String, String> consumer, int count, int maxPollRecords) {
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (out.size() < count && System.nanoTime() < deadline) {
      List<ConsumerRecord<String, String>> polled = consumer.poll(Duration.ofMillis(200));
      assertTrue(polled.size() <= maxPollRecords, "max.poll.records: " + polled.size());
      out.addAll(polled);
    }
    return out;
  }

  private static String value(int i) {
    return "value-" + i + "-" + "payload".repeat(i % 9);
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"NONE", "GZIP", "LZ4", "ZSTD"})
  void producerCompressesBrokerStoresCompressedConsumerReadsTheSameRecords(CompressionType type) throws Exception {
    String topic = "comp-" + type.configName;
    createTopic(topic);
    int n = 3000;
    long t0 = 1_700_000_000_000L;
    List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
    try (Producer<String, String> producer =
        client.producer(
            Map.of(ClientConfig.COMPRESSION_TYPE, type.configName, ClientConfig.LINGER_MS, 20,
                ClientConfig.BATCH_SIZE, 8192),
            Serializer.string(),
            Serializer.string())) {
      for (int i = 0; i < n; i++) {
        List<Header> headers =
            i % 4 == 0 ? List.of() : List.of(new Header("h", ("hv" + i).getBytes(StandardCharsets.UTF_8)));
        sent.add(
            producer.send(
                new ProducerRecord<>(topic, 0, t0 + i % 17, i % 10 == 0 ? null : "key-" + i % 7, value(i),
                    headers)));
      }
      producer.flush();
    }
    for (int i = 0; i < n; i++) {
      assertEquals(i, sent.get(i).toCompletableFuture().get(30, TimeUnit.SECONDS).offset());
    }

    // stored as produced, and uncompressed batches as LZ4 record batches (the journal's event-compression = lz4).
    // The leader stores an uncompressed batch as sent when LZ4 would not save an eighth or it is under 256 bytes:
    // a producer on a busy machine may send a batch of a few records when linger.ms runs out (a CI run under load
    // stored one such batch uncompressed), so only small batches may stay uncompressed, and most are LZ4
    long stored = 0;
    int batches = 0;
    int codecBatches = 0;
    for (long offset = 0; offset < n; ) {
      FetchResponse f = gw.fetch(topic, 0, offset, 1 << 20, 0);
      assertEquals(ErrorCode.NONE, f.error(), f.errorMessage());
      for (byte[] b : f.batches()) {
        RecordBatch batch = RecordBatch.validate(b);
        if (type == CompressionType.NONE && batch.compressionType() == CompressionType.NONE.id) {
          assertTrue(b.length < 1024, "an uncompressed batch of " + b.length + " bytes was not stored as LZ4");
        } else {
          assertEquals(type == CompressionType.NONE ? CompressionType.LZ4.id : type.id, batch.compressionType());
          codecBatches++;
        }
        stored += b.length;
        batches++;
        offset = batch.nextOffset();
      }
    }
    assertTrue(batches < n / 10, batches + " batches for " + n + " records");
    assertTrue(codecBatches > batches / 2, codecBatches + " of " + batches + " batches stored with a codec");
    assertTrue(stored < 3000L * 40, type + " stored " + stored + " bytes"); // plain is ~3000 * 60

    try (Consumer<String, String> consumer =
        client.consumer(
            Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest", ClientConfig.MAX_POLL_RECORDS, 100),
            Deserializer.string(),
            Deserializer.string())) {
      consumer.assign(List.of(new TopicPartition(topic, 0)));
      List<ConsumerRecord<String, String>> got = pollFor(consumer, n, 100);
      assertEquals(n, got.size());
      for (int i = 0; i < n; i++) {
        ConsumerRecord<String, String> r = got.get(i);
        assertEquals(i, r.offset());
        assertEquals(t0 + i % 17, r.timestamp());
        assertEquals(i % 10 == 0 ? null : "key-" + i % 7, r.key());
        assertEquals(value(i), r.value());
        if (i % 4 == 0) {
          assertEquals(List.of(), r.headers());
        } else {
          assertEquals(1, r.headers().size());
          assertArrayEquals(("hv" + i).getBytes(StandardCharsets.UTF_8), r.headers().get(0).value());
        }
      }
      assertEquals((long) n, consumer.position(new TopicPartition(topic, 0)));
    }
  }

  /** As Kafka: a fetch position inside a compressed batch returns the records from that offset on. */
  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"LZ4", "ZSTD"})
  void consumerSeekingIntoTheMiddleOfACompressedBatchStartsAtThatOffset(CompressionType type) {
    String topic = "middle-" + type.configName;
    createTopic(topic);
    ProduceResponse r1 = gw.produce(topic, 0, Gw.batch("a-", 100, 1000L, type));
    assertEquals(ErrorCode.NONE, r1.error(), r1.errorMessage());
    ProduceResponse r2 = gw.produce(topic, 0, Gw.batch("b-", 100, 1000L, type));
    assertEquals(100L, r2.baseOffset());
    TopicPartition tp = new TopicPartition(topic, 0);
    try (Consumer<String, String> consumer =
        client.consumer(Map.of(ClientConfig.MAX_POLL_RECORDS, 7), Deserializer.string(), Deserializer.string())) {
      consumer.assign(List.of(tp));
      consumer.seek(tp, 37L);
      List<ConsumerRecord<String, String>> got = pollFor(consumer, 163, 7);
      assertEquals(163, got.size());
      for (int i = 0; i < got.size(); i++) {
        long offset = 37L + i;
        assertEquals(offset, got.get(i).offset());
        assertEquals(offset < 100 ? "a-" + offset : "b-" + (offset - 100), got.get(i).value());
      }
    }
  }

  /**
   * A producer may put a valid CRC over a compressed section that does not decompress: the broker refuses it with
   * INVALID_RECORD, stores nothing, and the batches before and after it are read back intact.
   */
  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void garbageCompressedSectionIsRefusedWithInvalidRecordAndStoresNothing(CompressionType type) {
    String topic = "garbage-" + type.configName;
    createTopic(topic);
    assertEquals(ErrorCode.NONE, gw.produce(topic, 0, Gw.batch("before-", 20, 1000L, type)).error());
    byte[] bad = Gw.batch("bad-", 20, 1000L, type);
    byte[] noise = new byte[bad.length - RecordBatch.RECORDS_OFFSET];
    new Random(11).nextBytes(noise);
    System.arraycopy(noise, 0, bad, RecordBatch.RECORDS_OFFSET, noise.length);
    fixCrc(bad);
    ProduceResponse refused = gw.produce(topic, 0, bad);
    assertEquals(ErrorCode.INVALID_RECORD, refused.error(), refused.errorMessage());

    ProduceResponse after = gw.produce(topic, 0, Gw.batch("after-", 20, 1000L, type));
    assertEquals(ErrorCode.NONE, after.error(), after.errorMessage());
    assertEquals(20L, after.baseOffset(), "the refused batch took no offsets");
    List<String> values = new ArrayList<>();
    FetchResponse f = gw.fetch(topic, 0, 0L, 1 << 20, 0);
    for (byte[] b : f.batches()) {
      for (io.tributary.record.Record r : RecordBatch.validate(b)) {
        values.add(new String(r.value(), StandardCharsets.UTF_8));
      }
    }
    assertEquals(40, values.size());
    assertEquals("before-0", values.get(0));
    assertEquals("after-19", values.get(39));
  }

  @Test
  void snappyBatchIsRefusedWithUnsupportedCompressionType() {
    createTopic("snappy");
    byte[] bytes = Gw.batch("s-", 3, 1000L);
    ByteUtils.writeShort((short) RecordBatch.COMPRESSION_SNAPPY, bytes, RecordBatch.ATTRIBUTES_OFFSET);
    fixCrc(bytes);
    ProduceResponse r = gw.produce("snappy", 0, bytes);
    assertEquals(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, r.error(), r.errorMessage());
  }

  @Test
  void snappyProducerFailsAtCreationNamingTheKey() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> client.producer(Map.of(ClientConfig.COMPRESSION_TYPE, "snappy"), Serializer.string(),
                Serializer.string()));
    assertTrue(e.getMessage().contains(ClientConfig.COMPRESSION_TYPE), e.getMessage());
  }

  @Test
  void topicCompressionTypeAcceptsOnlyProducer() {
    assertEquals(ErrorCode.NONE, gw.create("tc-producer", 1, Map.of("compression.type", "producer")).error());
    AdminResponse r = gw.create("tc-lz4", 1, Map.of("compression.type", "lz4"));
    assertEquals(ErrorCode.INVALID_CONFIG, r.error(), r.errorMessage());
  }

  private static void fixCrc(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, RecordBatch.ATTRIBUTES_OFFSET, bytes.length - RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeUnsignedInt(crc.getValue(), bytes, RecordBatch.CRC_OFFSET);
  }
}
