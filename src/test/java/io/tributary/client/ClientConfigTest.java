package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ClientConfigTest {

  @Test
  void unknownKeysAreReportedKnownOnesAndActorSystemKeysAreNot() {
    assertEquals(java.util.List.of("bogus.key", "lnger.ms"), ClientConfig.unknownKeys(java.util.Map.of(
        "acks", "all", "linger.ms", "5", "lnger.ms", "5", "bogus.key", "1", "enable.idempotence", "true",
        "tributary.client.port", "0", "akka.loglevel", "INFO")));
    assertEquals(java.util.List.of(), ClientConfig.unknownKeys(null));
  }

  @Test
  void producerDefaultsAreKafkas() {
    ProducerSettings s = ProducerSettings.from(Map.of());
    assertEquals(-1, s.acks());
    assertEquals(5L, s.lingerMs());
    assertEquals(16_384, s.batchSize());
    assertEquals(Integer.MAX_VALUE, s.retries());
    assertEquals(100L, s.retryBackoffMs());
    assertEquals(120_000L, s.deliveryTimeoutMs());
    assertEquals(30_000, s.requestTimeoutMs());
    assertEquals(1_048_576, s.maxRequestSize());
    assertEquals(33_554_432, s.bufferMemory());
    assertEquals(60_000L, s.maxBlockMs());
    assertEquals(5, s.maxInFlight());
  }

  @Test
  void consumerDefaultsAreKafkas() {
    ConsumerSettings s = ConsumerSettings.from(Map.of());
    assertEquals(500, s.maxPollRecords());
    assertEquals(500, s.fetchMaxWaitMs());
    assertEquals(1_048_576, s.maxPartitionFetchBytes());
    assertEquals("latest", s.autoOffsetReset());
    assertEquals(30_000, s.requestTimeoutMs());
    assertEquals(60_000, s.defaultApiTimeoutMs());
  }

  @Test
  void valuesMayBeStringsNumbersOrDurations() {
    Map<String, Object> config = new HashMap<>();
    config.put(ClientConfig.LINGER_MS, " 20 ");
    config.put(ClientConfig.BATCH_SIZE, 65_536);
    config.put(ClientConfig.BUFFER_MEMORY, 1_000_000L);
    config.put(ClientConfig.MAX_BLOCK_MS, Duration.ofSeconds(3));
    config.put(ClientConfig.RETRIES, (short) 3);
    ProducerSettings s = ProducerSettings.from(config);
    assertEquals(20L, s.lingerMs());
    assertEquals(65_536, s.batchSize());
    assertEquals(1_000_000, s.bufferMemory());
    assertEquals(3_000L, s.maxBlockMs());
    assertEquals(3, s.retries());
  }

  @ParameterizedTest
  @CsvSource({"all, -1", "ALL, -1", "-1, -1", "1, 1", "0, 0"})
  void acksAcceptsKafkasValues(String value, short expected) {
    assertEquals(expected, ProducerSettings.from(Map.of(ClientConfig.ACKS, value)).acks());
  }

  @Test
  void acksAcceptsNumbers() {
    assertEquals(1, ProducerSettings.from(Map.of(ClientConfig.ACKS, 1)).acks());
    assertEquals(-1, ProducerSettings.from(Map.of(ClientConfig.ACKS, -1)).acks());
  }

  @ParameterizedTest
  @ValueSource(strings = {"2", "some", ""})
  void badAcksNamesTheKey(String value) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ProducerSettings.from(Map.of(ClientConfig.ACKS, value)));
    assertTrue(e.getMessage().contains("acks"), e.getMessage());
  }

  @Test
  void badNumbersNameTheKey() {
    assertBad(ClientConfig.LINGER_MS, "five");
    assertBad(ClientConfig.LINGER_MS, -1);
    assertBad(ClientConfig.BATCH_SIZE, 1.5);
    assertBad(ClientConfig.BATCH_SIZE, 3_000_000_000L);
    assertBad(ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 0);
    assertBad(ClientConfig.MAX_REQUEST_SIZE, "0");
    assertBad(ClientConfig.BUFFER_MEMORY, "-5");
  }

  private static void assertBad(String key, Object value) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ProducerSettings.from(Map.of(key, value)));
    assertTrue(e.getMessage().contains(key), e.getMessage());
  }

  @Test
  void unknownKeysAreIgnored() {
    ProducerSettings s = ProducerSettings.from(Map.of("client.id", "x", "key.serializer", "org.Foo"));
    assertEquals(ProducerSettings.from(Map.of()), s);
  }

  @Test
  void compressionTypeAndLevelsAreKafkas() {
    ProducerSettings none = ProducerSettings.from(Map.of());
    assertEquals(io.tributary.record.CompressionType.NONE, none.compressionType());
    ProducerSettings lz4 = ProducerSettings.from(Map.of(ClientConfig.COMPRESSION_TYPE, "LZ4"));
    assertEquals(io.tributary.record.CompressionType.LZ4, lz4.compressionType());
    assertEquals(9, lz4.compressionLevel());
    ProducerSettings zstd =
        ProducerSettings.from(
            Map.of(ClientConfig.COMPRESSION_TYPE, "zstd", ClientConfig.COMPRESSION_ZSTD_LEVEL, "-3",
                ClientConfig.COMPRESSION_LZ4_LEVEL, "99")); // another codec's level is not looked at
    assertEquals(io.tributary.record.CompressionType.ZSTD, zstd.compressionType());
    assertEquals(-3, zstd.compressionLevel());
    assertEquals(-1, ProducerSettings.from(Map.of(ClientConfig.COMPRESSION_TYPE, "gzip")).compressionLevel());
    assertTrue(ClientConfig.unknownKeys(Map.of(ClientConfig.COMPRESSION_TYPE, "lz4")).isEmpty());
  }

  @Test
  void snappyUnknownCodecsAndBadLevelsFailAtCreationNamingTheKey() {
    assertBad(ClientConfig.COMPRESSION_TYPE, "snappy");
    assertBad(ClientConfig.COMPRESSION_TYPE, "brotli");
    String bogus = assertThrows(IllegalArgumentException.class,
        () -> ProducerSettings.from(Map.of(ClientConfig.COMPRESSION_TYPE, "brotli"))).getMessage();
    assertFalse(bogus.contains("snappy"), "the list offers only codecs this client has: " + bogus);
    String snappy = assertThrows(IllegalArgumentException.class,
        () -> ProducerSettings.from(Map.of(ClientConfig.COMPRESSION_TYPE, "snappy"))).getMessage();
    assertTrue(snappy.contains("snappy is not supported"), snappy);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProducerSettings.from(
                Map.of(ClientConfig.COMPRESSION_TYPE, "lz4", ClientConfig.COMPRESSION_LZ4_LEVEL, 18)));
    assertTrue(e.getMessage().contains(ClientConfig.COMPRESSION_LZ4_LEVEL), e.getMessage());
    e = assertThrows(
        IllegalArgumentException.class,
        () -> ProducerSettings.from(
            Map.of(ClientConfig.COMPRESSION_TYPE, "gzip", ClientConfig.COMPRESSION_GZIP_LEVEL, 0)));
    assertTrue(e.getMessage().contains(ClientConfig.COMPRESSION_GZIP_LEVEL), e.getMessage());
  }

  @Test
  void explicitDeliveryTimeoutBelowLingerPlusRequestTimeoutIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ProducerSettings.from(
                    Map.of(
                        ClientConfig.DELIVERY_TIMEOUT_MS, 1000,
                        ClientConfig.LINGER_MS, 10,
                        ClientConfig.REQUEST_TIMEOUT_MS, 2000)));
    assertTrue(e.getMessage().contains("delivery.timeout.ms"), e.getMessage());
  }

  @Test
  void defaultDeliveryTimeoutIsRaisedToLingerPlusRequestTimeout() {
    ProducerSettings s = ProducerSettings.from(Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 200_000));
    assertEquals(200_005L, s.deliveryTimeoutMs());
  }

  @Test
  void autoOffsetResetTakesEarliestLatestNone() {
    assertEquals("earliest", ConsumerSettings.from(Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest")).autoOffsetReset());
    assertEquals("none", ConsumerSettings.from(Map.of(ClientConfig.AUTO_OFFSET_RESET, "NONE")).autoOffsetReset());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ConsumerSettings.from(Map.of(ClientConfig.AUTO_OFFSET_RESET, "smallest")));
    assertTrue(e.getMessage().contains("auto.offset.reset"), e.getMessage());
  }

  @Test
  void consumerGroupDefaultsAreKafkas() {
    ConsumerSettings s = ConsumerSettings.from(Map.of());
    assertEquals(null, s.groupId());
    assertEquals(null, s.groupInstanceId());
    assertEquals(45_000, s.sessionTimeoutMs());
    assertEquals(3_000, s.heartbeatIntervalMs());
    assertEquals(300_000, s.maxPollIntervalMs());
    assertEquals(java.util.List.of("cooperative-sticky"), s.assignors());
    assertEquals(false, s.enableAutoCommit(), "no auto-commit without a group");
    assertEquals(5_000, s.autoCommitIntervalMs());
    assertTrue(s.clientId().startsWith("consumer-"), s.clientId());

    ConsumerSettings g = ConsumerSettings.from(Map.of(ClientConfig.GROUP_ID, "orders"));
    assertEquals("orders", g.groupId());
    assertEquals(true, g.enableAutoCommit(), "auto-commit by default with a group");
    assertTrue(g.clientId().startsWith("consumer-orders-"), g.clientId());
    assertEquals("me", ConsumerSettings.from(Map.of(ClientConfig.CLIENT_ID, "me")).clientId());
    assertEquals(
        false,
        ConsumerSettings.from(Map.of(ClientConfig.GROUP_ID, "g", ClientConfig.ENABLE_AUTO_COMMIT, false))
            .enableAutoCommit());
    assertEquals(
        true,
        ConsumerSettings.from(Map.of(ClientConfig.GROUP_ID, "g", ClientConfig.ENABLE_AUTO_COMMIT, " TRUE "))
            .enableAutoCommit());
  }

  @Test
  void assignmentStrategyTakesNamesListsAndKafkasClassNames() {
    assertEquals(
        java.util.List.of("range", "cooperative-sticky"),
        ConsumerSettings.from(Map.of(ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, " range , cooperative-sticky"))
            .assignors());
    assertEquals(
        java.util.List.of("roundrobin", "range"),
        ConsumerSettings.from(
                Map.of(ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, java.util.List.of("roundrobin", "range")))
            .assignors());
    assertEquals(
        java.util.List.of("range", "cooperative-sticky"),
        ConsumerSettings.from(
                Map.of(
                    ClientConfig.PARTITION_ASSIGNMENT_STRATEGY,
                    "org.apache.kafka.clients.consumer.RangeAssignor,"
                        + "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"))
            .assignors());
  }

  @ParameterizedTest
  @ValueSource(strings = {"sticky", "", " , ", "range,bogus"})
  void badAssignmentStrategyNamesTheKey(String value) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ConsumerSettings.from(Map.of(ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, value)));
    assertTrue(e.getMessage().contains("partition.assignment.strategy"), e.getMessage());
  }

  @Test
  void badGroupSettingsNameTheKey() {
    assertBadConsumer(
        "heartbeat.interval.ms",
        Map.of(ClientConfig.HEARTBEAT_INTERVAL_MS, 10_000, ClientConfig.SESSION_TIMEOUT_MS, 10_000));
    assertBadConsumer("enable.auto.commit", Map.of(ClientConfig.ENABLE_AUTO_COMMIT, "true"));
    assertBadConsumer("enable.auto.commit", Map.of(ClientConfig.GROUP_ID, "g", ClientConfig.ENABLE_AUTO_COMMIT, "yes"));
    assertBadConsumer("group.instance.id", Map.of(ClientConfig.GROUP_ID, "g", ClientConfig.GROUP_INSTANCE_ID, ""));
    assertBadConsumer("session.timeout.ms", Map.of(ClientConfig.SESSION_TIMEOUT_MS, 0));
    assertBadConsumer("max.poll.interval.ms", Map.of(ClientConfig.MAX_POLL_INTERVAL_MS, "soon"));
    assertBadConsumer("auto.commit.interval.ms", Map.of(ClientConfig.AUTO_COMMIT_INTERVAL_MS, -1));
    assertBadConsumer("group.id", Map.of(ClientConfig.GROUP_ID, 42));
  }

  private static void assertBadConsumer(String key, Map<String, ?> config) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConsumerSettings.from(config));
    assertTrue(e.getMessage().contains(key), e.getMessage());
  }

  @Test
  void consumerRejectsNonPositiveMaxPollRecords() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ConsumerSettings.from(Map.of(ClientConfig.MAX_POLL_RECORDS, 0)));
    assertTrue(e.getMessage().contains("max.poll.records"), e.getMessage());
  }

  @Test
  void producerMapIsLaidOverTheClientMap() {
    Map<String, Object> merged =
        ClientConfig.merge(
            Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 1000, ClientConfig.LINGER_MS, 1),
            Map.of(ClientConfig.LINGER_MS, 7));
    ProducerSettings s = ProducerSettings.from(merged);
    assertEquals(1000, s.requestTimeoutMs());
    assertEquals(7L, s.lingerMs());
  }

  @Test
  void idempotenceIsOnByDefaultAndNeedsAcksAllRetriesAndAtMostFiveInFlight() {
    assertTrue(ProducerSettings.from(Map.of()).idempotent());
    assertFalse(ProducerSettings.from(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, "false")).idempotent());
    assertTrue(ProducerSettings.from(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, "TRUE")).idempotent());
    // not set: a conflicting setting turns it off silently (Kafka 3.x)
    assertFalse(ProducerSettings.from(Map.of(ClientConfig.ACKS, "1")).idempotent());
    assertFalse(ProducerSettings.from(Map.of(ClientConfig.ACKS, "0")).idempotent());
    assertFalse(ProducerSettings.from(Map.of(ClientConfig.RETRIES, 0)).idempotent());
    assertFalse(
        ProducerSettings.from(Map.of(ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 6)).idempotent());
    assertTrue(
        ProducerSettings.from(Map.of(ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5)).idempotent());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ProducerSettings.from(
            Map.of(ClientConfig.ACKS, "1", ClientConfig.ENABLE_IDEMPOTENCE, "true"))).getMessage()
        .contains("an idempotent producer needs acks=all (-1), not 1"));
    // set explicitly: a conflict is an error naming both keys
    for (Map<String, Object> conflict :
        List.<Map<String, Object>>of(
            Map.of(ClientConfig.ACKS, "1"),
            Map.of(ClientConfig.ACKS, "0"),
            Map.of(ClientConfig.RETRIES, 0),
            Map.of(ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 6))) {
      Map<String, Object> config = new java.util.HashMap<>(conflict);
      config.put(ClientConfig.ENABLE_IDEMPOTENCE, true);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> ProducerSettings.from(config), conflict.toString());
      assertTrue(e.getMessage().contains(ClientConfig.ENABLE_IDEMPOTENCE), e.getMessage());
      assertTrue(e.getMessage().contains(conflict.keySet().iterator().next()), e.getMessage());
      assertFalse(e.getMessage().contains("needs acks must"), "reads as a sentence: " + e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class, () -> ProducerSettings.from(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, "yes")));
  }
}
