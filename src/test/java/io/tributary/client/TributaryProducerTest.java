package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.ProduceRequest;
import io.tributary.record.Murmur2;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The producer against an in-memory {@link FakeGateway} (no broker). */
class TributaryProducerTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

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

  private static Producer<String, String> producer(TributaryClient client, Map<String, Object> config) {
    return client.producer(config, Serializer.string(), Serializer.string());
  }

  private static RecordMetadata get(CompletionStage<RecordMetadata> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static TributaryException failure(CompletionStage<RecordMetadata> stage) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> stage.toCompletableFuture().get(30, TimeUnit.SECONDS));
    return (TributaryException) e.getCause();
  }

  @Test
  void keyedRecordsGetDenseOffsetsInTheirKeysPartition() throws Exception {
    Setup s = setup();
    s.fake().createTopic("keyed", 3);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of())) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 3000; i++) {
        sent.add(producer.send(new ProducerRecord<>("keyed", "k" + (i % 17), "v" + i)));
      }
      producer.flush();
      Map<Integer, Long> nextOffset = new HashMap<>();
      Map<Integer, List<String>> expected = new HashMap<>();
      for (int i = 0; i < sent.size(); i++) {
        CompletableFuture<RecordMetadata> f = sent.get(i).toCompletableFuture();
        assertTrue(f.isDone(), "flush waited for record " + i);
        RecordMetadata m = f.join();
        int p = Murmur2.partitionForKey(("k" + (i % 17)).getBytes(StandardCharsets.UTF_8), 3);
        assertEquals(p, m.partition());
        long want = nextOffset.getOrDefault(p, 0L);
        assertEquals(want, m.offset(), "offsets are dense and in send order");
        nextOffset.put(p, want + 1);
        expected.computeIfAbsent(p, x -> new ArrayList<>()).add("v" + i);
        assertEquals(("k" + (i % 17)).length(), m.serializedKeySize());
        assertEquals(("v" + i).length(), m.serializedValueSize());
      }
      for (int p = 0; p < 3; p++) {
        assertEquals(expected.getOrDefault(p, List.of()), s.fake().values("keyed", p));
      }
    }
  }

  /** A key whose records go to {@code partition} of a topic of {@code partitions} partitions. */
  private static String keyFor(int partition, int partitions) {
    for (int i = 0; ; i++) {
      if (Murmur2.partitionForKey(("key-" + i).getBytes(StandardCharsets.UTF_8), partitions) == partition) {
        return "key-" + i;
      }
    }
  }

  /**
   * The batches of several partitions drained together go in one {@link MultiProduceRequest} (as Kafka's one Produce
   * request per broker), a partition's second batch in a second request after its first; every record gets its
   * partition's dense offsets.
   */
  @Test
  void batchesOfSeveralPartitionsDrainedTogetherGoInOneRequest() throws Exception {
    Setup s = setup();
    s.fake().createTopic("multi", 4);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.LINGER_MS, 60_000,
            ClientConfig.BATCH_SIZE, 1024))) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int p = 0; p < 4; p++) {
        sent.add(producer.send(new ProducerRecord<>("multi", keyFor(p, 4), "one-" + p)));
      }
      // partition 3 gets a full batch and a second one behind it
      String big = "x".repeat(600);
      sent.add(producer.send(new ProducerRecord<>("multi", keyFor(3, 4), big)));
      sent.add(producer.send(new ProducerRecord<>("multi", keyFor(3, 4), big)));
      producer.flush();
      for (CompletionStage<RecordMetadata> f : sent) {
        get(f);
      }
      assertEquals(List.of(0L, 1L, 2L), List.of(get(sent.get(3)).offset(), get(sent.get(4)).offset(),
          get(sent.get(5)).offset()));
      List<MultiProduceRequest> multi = s.fake().received.stream()
          .filter(MultiProduceRequest.class::isInstance).map(MultiProduceRequest.class::cast).toList();
      assertEquals(1, multi.size(), "one request for the four partitions' first batches: " + s.fake().received);
      assertEquals(List.of(0, 1, 2, 3), multi.get(0).entries().stream()
          .map(MultiProduceRequest.Entry::partition).sorted().toList());
      List<ProduceRequest> single = s.fake().received.stream()
          .filter(ProduceRequest.class::isInstance).map(ProduceRequest.class::cast).toList();
      assertEquals(1, single.size(), "partition 3's second batch alone, after its first");
      assertEquals(3, single.get(0).partition());
      assertEquals(List.of("one-3", big, big), s.fake().values("multi", 3));
    }
  }

  /**
   * Batches go together only with batches of partitions of the same leader (as Kafka's one request per broker), so
   * that a leader that does not answer holds up no other leader's partitions.
   */
  @Test
  void batchesOfPartitionsWithDifferentLeadersGoInDifferentRequests() throws Exception {
    Setup s = setup();
    s.fake().createTopic("led", 4);
    s.fake().partitionLeaders.put("led-0", "akka://tributary@127.0.0.1:1");
    s.fake().partitionLeaders.put("led-1", "akka://tributary@127.0.0.1:2");
    s.fake().partitionLeaders.put("led-2", "akka://tributary@127.0.0.1:1");
    s.fake().partitionLeaders.put("led-3", "akka://tributary@127.0.0.1:2");
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.LINGER_MS, 60_000))) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int p = 0; p < 4; p++) {
        sent.add(producer.send(new ProducerRecord<>("led", keyFor(p, 4), "v" + p)));
      }
      producer.flush();
      for (CompletionStage<RecordMetadata> f : sent) {
        assertEquals(0L, get(f).offset());
      }
      List<List<Integer>> requests = s.fake().received.stream()
          .filter(MultiProduceRequest.class::isInstance).map(MultiProduceRequest.class::cast)
          .map(m -> m.entries().stream().map(MultiProduceRequest.Entry::partition).sorted().toList())
          .sorted(java.util.Comparator.comparing(l -> l.get(0))).toList();
      assertEquals(List.of(List.of(0, 2), List.of(1, 3)), requests);
    }
  }

  /**
   * When one partition's batch is ready (full), the batches of the other partitions that only wait for linger.ms go
   * with it, as Kafka's drain takes a batch of every partition of a ready broker: with a linger of a minute, the
   * one-record batches are still sent at once.
   */
  @Test
  void batchesWaitingForLingerGoWithABatchThatIsReady() throws Exception {
    Setup s = setup();
    s.fake().createTopic("along", 3);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.LINGER_MS, 60_000,
            ClientConfig.BATCH_SIZE, 1024))) {
      CompletionStage<RecordMetadata> p1 = producer.send(new ProducerRecord<>("along", keyFor(1, 3), "waits"));
      CompletionStage<RecordMetadata> p2 = producer.send(new ProducerRecord<>("along", keyFor(2, 3), "waits too"));
      List<CompletionStage<RecordMetadata>> full = new ArrayList<>();
      for (int i = 0; i < 3; i++) { // the third does not fit: partition 0's first batch is full, ready
        full.add(producer.send(new ProducerRecord<>("along", keyFor(0, 3), "y".repeat(400))));
      }
      assertEquals(0L, get(p1).offset(), "sent with partition 0's full batch, not after linger.ms");
      assertEquals(0L, get(p2).offset());
      assertEquals(0L, get(full.get(0)).offset());
      assertTrue(s.fake().received.stream().anyMatch(r -> r instanceof MultiProduceRequest m
          && m.entries().size() == 3), "one request for the three partitions: " + s.fake().received);
    }
  }

  @Test
  void unkeyedRecordsAreBatchedStickilyAndSpreadOverPartitions() throws Exception {
    Setup s = setup();
    s.fake().createTopic("sticky", 4);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.BATCH_SIZE, 2048))) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 2000; i++) {
        sent.add(producer.send(new ProducerRecord<>("sticky", "value-" + i)));
      }
      producer.flush();
      int[] perPartition = new int[4];
      for (CompletionStage<RecordMetadata> f : sent) {
        perPartition[get(f).partition()]++;
      }
      int used = 0;
      for (int n : perPartition) {
        used += n > 0 ? 1 : 0;
      }
      assertTrue(used >= 2, "sticky partitioning moves on after each batch");
      long requests = s.fake().countOf(ProduceRequest.class);
      assertTrue(requests < 200, "records were batched: " + requests + " requests for 2000 records");
    }
  }

  @Test
  void callbacksRunOnceWithTheMetadataOrTheErrorAndAThrowingCallbackHarmsNothing() throws Exception {
    Setup s = setup();
    s.fake().createTopic("cb", 1);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.MAX_REQUEST_SIZE, 1024))) {
      int n = 500;
      java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(n);
      long[] offsets = new long[n];
      java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
      for (int i = 0; i < n; i++) {
        int index = i;
        producer.send(new ProducerRecord<>("cb", "v" + i), (md, ex) -> {
          calls.incrementAndGet();
          offsets[index] = ex == null ? md.offset() : -2;
          done.countDown();
          if (index % 7 == 0) {
            throw new IllegalStateException("an application bug in a callback");
          }
        });
      }
      assertTrue(done.await(30, TimeUnit.SECONDS));
      producer.flush();
      for (int i = 0; i < n; i++) {
        assertEquals(i, offsets[i], "record " + i + " acknowledged in send order");
      }
      assertEquals(n, calls.get(), "each callback ran once");
      assertEquals(n, s.fake().values("cb", 0).size());

      // refused before it was buffered: the callback hears the error, and the future fails the same way
      CompletableFuture<Exception> refused = new CompletableFuture<>();
      CompletionStage<RecordMetadata> f = producer.send(new ProducerRecord<>("cb", "x".repeat(4096)),
          (md, ex) -> refused.complete(md == null ? ex : null));
      assertEquals(ErrorCode.MESSAGE_TOO_LARGE, ((TributaryException) refused.get(30, TimeUnit.SECONDS)).errorCode());
      assertEquals(ErrorCode.MESSAGE_TOO_LARGE, failure(f).errorCode());
      // and the producer still works
      assertEquals(n, get(producer.send(new ProducerRecord<>("cb", "after"))).offset());
    }
  }

  @Test
  void explicitPartitionIsUsedAndAnUnknownOneFails() throws Exception {
    Setup s = setup();
    s.fake().createTopic("explicit", 2);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.MAX_BLOCK_MS, 500))) {
      assertEquals(1, get(producer.send(new ProducerRecord<>("explicit", 1, "k", "v"))).partition());
      TributaryException e = failure(producer.send(new ProducerRecord<>("explicit", 2, "k", "v")));
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, e.errorCode());
      assertEquals(2, producer.partitionsFor("explicit"));
    }
  }

  @Test
  void anUnknownTopicFailsAfterMaxBlockMs() {
    Setup s = setup();
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.MAX_BLOCK_MS, 300))) {
      TributaryException e = failure(producer.send(new ProducerRecord<>("missing", "v")));
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, e.errorCode());
      assertTrue(e.getMessage().contains("missing"), e.getMessage());
      assertTrue(s.fake().countOf(AdminRequest.DescribeTopics.class) >= 2, "metadata was retried");
    }
  }

  /** A name no topic can have fails at once with INVALID_TOPIC_EXCEPTION, without waiting for metadata. */
  @Test
  void anInvalidTopicNameFailsAtOnceWithInvalidTopic() {
    Setup s = setup();
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.MAX_BLOCK_MS, 60000))) {
      TributaryException e = failure(producer.send(new ProducerRecord<>("bad name", "v")));
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, e.errorCode());
      assertEquals("Topic name \"bad name\" is illegal, it contains a character other than ASCII alphanumerics, '.',"
          + " '_' and '-'", e.getMessage().substring(e.getMessage().indexOf("Topic name")));
      assertEquals(0, s.fake().countOf(AdminRequest.DescribeTopics.class), "no metadata was asked for");
    }
  }

  @Test
  void aTopicCreatedWhileSendWaitsIsFound() throws Exception {
    Setup s = setup();
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of())) {
      CompletableFuture<CompletionStage<RecordMetadata>> sending =
          CompletableFuture.supplyAsync(() -> producer.send(new ProducerRecord<>("later", "v")));
      while (s.fake().countOf(AdminRequest.DescribeTopics.class) == 0) {
        Thread.onSpinWait();
      }
      s.fake().createTopic("later", 1);
      assertEquals(0L, get(sending.get(30, TimeUnit.SECONDS)).offset());
    }
  }

  @Test
  void anInvalidTopicNameFailsWithoutAskingTheBroker() {
    Setup s = setup();
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of())) {
      TributaryException e = failure(producer.send(new ProducerRecord<>("bad topic!", "v")));
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, e.errorCode());
      assertEquals(0, s.fake().received.size());
    }
  }

  @Test
  void aRecordAboveMaxRequestSizeFailsAtOnce() {
    Setup s = setup();
    s.fake().createTopic("big", 1);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.MAX_REQUEST_SIZE, 1000))) {
      TributaryException e = failure(producer.send(new ProducerRecord<>("big", "x".repeat(1000))));
      assertEquals(ErrorCode.MESSAGE_TOO_LARGE, e.errorCode());
      assertEquals(0, s.fake().countOf(ProduceRequest.class));
    }
  }

  @Test
  void retriableErrorsAreRetriedAndOrderIsKeptWithOneInFlight() throws Exception {
    Setup s = setup();
    s.fake().createTopic("retry", 1);
    s.fake().produceFaults.add(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    s.fake().produceFaults.add(ErrorCode.LEADER_NOT_AVAILABLE);
    s.fake().produceFaults.add(ErrorCode.NOT_ENOUGH_REPLICAS);
    Map<String, Object> config =
        Map.of(
            ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1,
            ClientConfig.RETRY_BACKOFF_MS, 10,
            ClientConfig.BATCH_SIZE, 200,
            ClientConfig.LINGER_MS, 0);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        values.add("value-" + i);
        sent.add(producer.send(new ProducerRecord<>("retry", 0, null, "value-" + i)));
      }
      producer.flush();
      for (int i = 0; i < sent.size(); i++) {
        assertEquals(i, get(sent.get(i)).offset());
      }
      assertEquals(values, s.fake().values("retry", 0));
      assertTrue(s.fake().produceFaults.isEmpty());
    }
  }

  /**
   * A retried error is logged at WARN with the partition and the error, as Kafka's producer does ("Got error produce
   * response ..., retrying"): before, a producer held up by NOT_ENOUGH_REPLICAS said nothing until
   * delivery.timeout.ms (a newcomer waited 136 s in silence). At most one line per 5 s.
   */
  @Test
  void aRetriedErrorIsLoggedAtWarn() throws Exception {
    Setup s = setup();
    s.fake().createTopic("held", 1);
    s.fake().produceFaults.add(ErrorCode.NOT_ENOUGH_REPLICAS);
    s.fake().produceFaults.add(ErrorCode.NOT_ENOUGH_REPLICAS);
    List<String> warnings = producerWarningsWhile(() -> {
      try (TributaryClient client = s.client();
          Producer<String, String> producer = producer(client, Map.of(ClientConfig.RETRY_BACKOFF_MS, 10))) {
        assertEquals(0L, get(producer.send(new ProducerRecord<>("held", "v"))).offset());
      }
    });
    assertFalse(warnings.isEmpty(), "the retries were logged");
    assertTrue(warnings.size() <= 2, warnings.toString());
    assertTrue(warnings.get(0).contains("held-0") && warnings.get(0).contains("NOT_ENOUGH_REPLICAS")
        && warnings.get(0).contains("retrying until delivery.timeout.ms"), warnings.get(0));
  }

  /** A batch refused as too large is split, and the warning says so instead of promising retries (newcomer). */
  @Test
  void aSplitIsLoggedAsASplit() throws Exception {
    Setup s = setup();
    s.fake().createTopic("split", 1);
    s.fake().produceFaults.add(ErrorCode.MESSAGE_TOO_LARGE);
    List<String> warnings = producerWarningsWhile(() -> {
      try (TributaryClient client = s.client();
          Producer<String, String> producer = producer(client, Map.of(ClientConfig.LINGER_MS, 600_000,
              ClientConfig.DELIVERY_TIMEOUT_MS, 700_000))) {
        CompletionStage<RecordMetadata> a = producer.send(new ProducerRecord<>("split", 0, null, "a"));
        CompletionStage<RecordMetadata> b = producer.send(new ProducerRecord<>("split", 0, null, "b"));
        producer.flush(); // one batch of both records, refused, split, the pieces appended
        assertEquals(0L, get(a).offset());
        assertEquals(1L, get(b).offset());
      }
    });
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).contains("split-0") && warnings.get(0).contains("splitting the batch of 2 records"),
        warnings.get(0));
  }

  /** The producer's WARN lines logged while {@code body} runs. */
  private static List<String> producerWarningsWhile(ThrowingRunnable body) throws Exception {
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(TributaryProducer.class);
    ch.qos.logback.classic.Level level = logger.getLevel();
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender =
        new ch.qos.logback.core.read.ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(ch.qos.logback.classic.Level.WARN);
    try {
      body.run();
    } finally {
      logger.detachAppender(appender);
      logger.setLevel(level);
    }
    return appender.list.stream()
        .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
        .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
        .toList();
  }

  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  @Test
  void aLostAnswerIsRetriedAfterRequestTimeoutAndTheIdempotentRetryIsNotWrittenTwice() throws Exception {
    Setup s = setup();
    s.fake().createTopic("lost-idem", 1);
    s.fake().dropProduceReplies.set(1);
    Map<String, Object> config =
        Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 300, ClientConfig.RETRY_BACKOFF_MS, 10, ClientConfig.LINGER_MS, 0);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      RecordMetadata m = get(producer.send(new ProducerRecord<>("lost-idem", "once")));
      assertEquals(0L, m.offset(), "the retry is answered with the original offset");
      assertEquals(List.of("once"), s.fake().values("lost-idem", 0));
      List<ProduceRequest> requests = s.fake().requests(ProduceRequest.class, r -> true);
      assertEquals(2, requests.size());
      assertTrue(java.util.Arrays.equals(requests.get(0).batch(), requests.get(1).batch()), "same bytes resent");
    }
  }

  @Test
  void withoutIdempotenceALostAnswerIsRetriedAndMayDuplicate() throws Exception {
    Setup s = setup();
    s.fake().createTopic("lost", 1);
    s.fake().dropProduceReplies.set(1);
    Map<String, Object> config =
        Map.of(
            ClientConfig.REQUEST_TIMEOUT_MS, 300,
            ClientConfig.RETRY_BACKOFF_MS, 10,
            ClientConfig.LINGER_MS, 0,
            ClientConfig.ENABLE_IDEMPOTENCE, false);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      RecordMetadata m = get(producer.send(new ProducerRecord<>("lost", "once")));
      assertEquals(1L, m.offset(), "the retry was appended after the unanswered first attempt");
      assertEquals(List.of("once", "once"), s.fake().values("lost", 0));
    }
  }

  @Test
  void nonRetriableErrorsFailTheRecords() {
    Setup s = setup();
    s.fake().createTopic("fatal", 1);
    s.fake().produceFaults.add(ErrorCode.INVALID_RECORD);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of())) {
      TributaryException e = failure(producer.send(new ProducerRecord<>("fatal", "v")));
      assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    }
  }

  @Test
  void acksZeroCompletesWithOffsetMinusOne() throws Exception {
    Setup s = setup();
    s.fake().createTopic("fire", 1);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, Map.of(ClientConfig.ACKS, "0"))) {
      RecordMetadata m = get(producer.send(new ProducerRecord<>("fire", "k", "v")));
      assertEquals(-1L, m.offset());
      assertEquals(1, m.serializedKeySize());
      ProduceRequest request = s.fake().awaitRequest(ProduceRequest.class, r -> true);
      assertEquals(0, request.acks());
      assertNotNull(request.replyTo(), "acks=0 is answered too: the answer frees the request's in-flight slot");
    }
  }

  @Test
  void flushSendsLingeringRecordsAtOnce() throws Exception {
    Setup s = setup();
    s.fake().createTopic("linger", 1);
    Map<String, Object> config = Map.of(ClientConfig.LINGER_MS, 600_000, ClientConfig.DELIVERY_TIMEOUT_MS, 700_000);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      CompletionStage<RecordMetadata> f = producer.send(new ProducerRecord<>("linger", "v"));
      producer.flush();
      assertTrue(f.toCompletableFuture().isDone());
      assertEquals(0L, get(f).offset());
    }
  }

  @Test
  void closeFailsWhatTheBrokerDidNotAcknowledgeInTime() {
    Setup s = setup();
    s.fake().createTopic("hole", 1);
    s.fake().blackholeProduce = true;
    TributaryClient client = s.client();
    Producer<String, String> producer = producer(client, Map.of());
    CompletionStage<RecordMetadata> f = producer.send(new ProducerRecord<>("hole", "v"));
    producer.close(Duration.ofMillis(200));
    assertEquals(ErrorCode.REQUEST_TIMED_OUT, failure(f).errorCode());
    TributaryException e =
        assertThrows(TributaryException.class, () -> producer.send(new ProducerRecord<>("hole", "v")));
    assertEquals(ErrorCode.INVALID_REQUEST, e.errorCode());
    client.close();
  }

  @Test
  void bufferMemoryFullBlocksSendThenThrows() {
    Setup s = setup();
    s.fake().createTopic("full", 1);
    s.fake().blackholeProduce = true;
    Map<String, Object> config =
        Map.of(ClientConfig.BUFFER_MEMORY, 1000, ClientConfig.MAX_BLOCK_MS, 200, ClientConfig.LINGER_MS, 0);
    try (TributaryClient client = s.client()) {
      Producer<String, String> producer = producer(client, config);
      TributaryException e =
          assertThrows(
              TributaryException.class,
              () -> {
                for (int i = 0; i < 100; i++) {
                  producer.send(new ProducerRecord<>("full", "x".repeat(100)));
                }
              });
      assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode());
      assertTrue(e.getMessage().contains("buffer.memory"), e.getMessage());
      producer.close(Duration.ZERO);
    }
  }

  @Test
  void callbacksRunOnTheSenderThreadWhereFlushIsRefusedButSendWorks() throws Exception {
    Setup s = setup();
    s.fake().createTopic("cb", 1);
    Map<String, Object> config = Map.of(ClientConfig.LINGER_MS, 600_000, ClientConfig.DELIVERY_TIMEOUT_MS, 700_000);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      CompletableFuture<Throwable> flushFailure = new CompletableFuture<>();
      CompletableFuture<CompletionStage<RecordMetadata>> second = new CompletableFuture<>();
      producer
          .send(new ProducerRecord<>("cb", "first"))
          .whenComplete(
              (m, e) -> {
                try {
                  producer.flush();
                  flushFailure.complete(null);
                } catch (Throwable t) {
                  flushFailure.complete(t);
                }
                second.complete(producer.send(new ProducerRecord<>("cb", "second")));
              });
      producer.flush(); // the first record lingers until now; its callback runs before flush returns
      assertTrue(flushFailure.get(30, TimeUnit.SECONDS) instanceof IllegalStateException);
      producer.flush();
      assertEquals(1L, get(second.get(30, TimeUnit.SECONDS)).offset());
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Idempotence and retries

  /** For every base sequence sent, all requests that carried it had the same bytes (a retry resends them). */
  private static void assertRetriesResendTheSameBytes(List<ProduceRequest> requests) {
    Map<Integer, byte[]> bySequence = new HashMap<>();
    for (ProduceRequest r : requests) {
      io.tributary.record.RecordBatch b = io.tributary.record.RecordBatch.wrap(r.batch().clone());
      b.setBaseOffset(0);
      byte[] bytes = b.bytes();
      byte[] first = bySequence.putIfAbsent(b.baseSequence(), bytes);
      if (first != null) {
        assertTrue(java.util.Arrays.equals(first, bytes), "sequence " + b.baseSequence() + " resent unchanged");
      }
    }
  }

  @Test
  void fiveInFlightFirstFailsRetriablyAllAreResentInOrderAndWrittenOnce() throws Exception {
    Setup s = setup();
    s.fake().createTopic("five", 1);
    s.fake().holdProduceUntil = 5; // the fake answers nothing until five batches are in flight
    s.fake().produceFaults.add(ErrorCode.NOT_LEADER_OR_FOLLOWER); // the first of them
    Map<String, Object> config =
        Map.of(ClientConfig.BATCH_SIZE, 0, ClientConfig.LINGER_MS, 0, ClientConfig.RETRY_BACKOFF_MS, 10);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        values.add("v" + i);
        sent.add(producer.send(new ProducerRecord<>("five", 0, null, "v" + i)));
      }
      producer.flush();
      for (int i = 0; i < sent.size(); i++) {
        assertEquals(i, get(sent.get(i)).offset(), "record " + i + " succeeded at its place");
      }
      assertEquals(values, s.fake().values("five", 0), "in order, each once");
      List<ErrorCode> answers = s.fake().produceAnswers;
      assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, answers.get(0));
      for (int i = 1; i < 5; i++) {
        // the leader knows nothing of this producer yet: its batches 1..4 do not start at sequence 0
        assertEquals(ErrorCode.UNKNOWN_PRODUCER_ID, answers.get(i), "answer " + i);
      }
      List<ProduceRequest> requests = s.fake().requests(ProduceRequest.class, r -> true);
      assertEquals(12 + 5, requests.size(), "the five were sent twice, the others once");
      assertRetriesResendTheSameBytes(requests);
      long pid = io.tributary.record.RecordBatch.wrap(requests.get(0).batch()).producerId();
      assertTrue(pid > 0, "a positive producer id");
    }
  }

  @Test
  void everyRetriableBrokerErrorIsRetriedAndTheRecordsLandOnceInOrder() throws Exception {
    Setup s = setup();
    s.fake().createTopic("errors", 1);
    List<ErrorCode> errors =
        List.of(
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            ErrorCode.LEADER_NOT_AVAILABLE,
            ErrorCode.NOT_ENOUGH_REPLICAS,
            ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            ErrorCode.REQUEST_TIMED_OUT,
            ErrorCode.NETWORK_EXCEPTION,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ErrorCode.FENCED_LEADER_EPOCH);
    s.fake().produceFaults.addAll(errors);
    Map<String, Object> config =
        Map.of(ClientConfig.BATCH_SIZE, 0, ClientConfig.LINGER_MS, 0, ClientConfig.RETRY_BACKOFF_MS, 5);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      List<String> values = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        values.add("v" + i);
        sent.add(producer.send(new ProducerRecord<>("errors", 0, null, "v" + i)));
      }
      producer.flush();
      for (int i = 0; i < sent.size(); i++) {
        assertEquals(i, get(sent.get(i)).offset());
      }
      assertEquals(values, s.fake().values("errors", 0));
      assertTrue(s.fake().produceFaults.isEmpty(), "every injected error was met");
      assertTrue(s.fake().produceAnswers.containsAll(errors));
      assertRetriesResendTheSameBytes(s.fake().requests(ProduceRequest.class, r -> true));
    }
  }

  @Test
  void outOfOrderWithNothingEarlierPendingIsResentWithANewEpoch() throws Exception {
    Setup s = setup();
    s.fake().createTopic("ooo", 1);
    s.fake().produceFaults.add(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    Map<String, Object> config = Map.of(ClientConfig.LINGER_MS, 0, ClientConfig.RETRY_BACKOFF_MS, 10);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      assertEquals(0L, get(producer.send(new ProducerRecord<>("ooo", "refused once"))).offset());
      assertEquals(1L, get(producer.send(new ProducerRecord<>("ooo", "next"))).offset());
      List<ProduceRequest> requests = s.fake().requests(ProduceRequest.class, r -> true);
      assertEquals(3, requests.size());
      io.tributary.record.RecordBatch resent = io.tributary.record.RecordBatch.wrap(requests.get(1).batch());
      assertEquals(1, resent.producerEpoch());
      assertEquals(0, resent.baseSequence());
      io.tributary.record.RecordBatch last = io.tributary.record.RecordBatch.wrap(requests.get(2).batch());
      assertEquals(1, last.producerEpoch());
      assertEquals(1, last.baseSequence());
      assertEquals(List.of("refused once", "next"), s.fake().values("ooo", 0));
    }
  }

  /**
   * The producer's very first batch on the partition is refused by the leader (not appended); the two batches in
   * flight behind it are refused with UNKNOWN_PRODUCER_ID (the leader has no state for the producer, and they do not
   * start at sequence 0). They are resent with the bumped epoch from sequence 0 and written once, in order.
   */
  @Test
  void batchesInFlightBehindARefusedFirstBatchAreResentWithANewEpochNotFailed() throws Exception {
    Setup s = setup();
    s.fake().createTopic("first-refused", 1);
    s.fake().holdProduceUntil = 3;
    s.fake().produceFaults.add(ErrorCode.MESSAGE_TOO_LARGE);
    Map<String, Object> config =
        Map.of(ClientConfig.BATCH_SIZE, 0, ClientConfig.LINGER_MS, 0, ClientConfig.RETRY_BACKOFF_MS, 10);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        sent.add(producer.send(new ProducerRecord<>("first-refused", 0, null, "v" + i)));
      }
      producer.flush();
      assertEquals(ErrorCode.MESSAGE_TOO_LARGE, failure(sent.get(0)).errorCode());
      assertEquals(0L, get(sent.get(1)).offset());
      assertEquals(1L, get(sent.get(2)).offset());
      assertEquals(List.of("v1", "v2"), s.fake().values("first-refused", 0));
      assertEquals(
          List.of(ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.UNKNOWN_PRODUCER_ID, ErrorCode.UNKNOWN_PRODUCER_ID,
              ErrorCode.NONE, ErrorCode.NONE),
          s.fake().produceAnswers);
      List<ProduceRequest> requests = s.fake().requests(ProduceRequest.class, r -> true);
      for (int i = 3; i < 5; i++) {
        io.tributary.record.RecordBatch b = io.tributary.record.RecordBatch.wrap(requests.get(i).batch());
        assertEquals(1, b.producerEpoch(), "request " + i);
        assertEquals(i - 3, b.baseSequence(), "request " + i);
      }
    }
  }

  @Test
  void explicitIdempotenceWithAConflictingSettingIsRefused() {
    Setup s = setup();
    try (TributaryClient client = s.client()) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> producer(client, Map.of(ClientConfig.ENABLE_IDEMPOTENCE, true, ClientConfig.ACKS, "1")));
      assertTrue(e.getMessage().contains("enable.idempotence"), e.getMessage());
    }
  }

  @Test
  void outOfOrderAfterAPredecessorsRetriableFailureIsRetriedNotSurfaced() throws Exception {
    Setup s = setup();
    s.fake().createTopic("ooo-retry", 1);
    Map<String, Object> config =
        Map.of(ClientConfig.BATCH_SIZE, 0, ClientConfig.LINGER_MS, 0, ClientConfig.RETRY_BACKOFF_MS, 10);
    try (TributaryClient client = s.client();
        Producer<String, String> producer = producer(client, config)) {
      assertEquals(0L, get(producer.send(new ProducerRecord<>("ooo-retry", 0, null, "first"))).offset());
      s.fake().holdProduceUntil = 3;
      s.fake().produceFaults.add(ErrorCode.NOT_ENOUGH_REPLICAS);
      List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        sent.add(producer.send(new ProducerRecord<>("ooo-retry", 0, null, "v" + i)));
      }
      producer.flush();
      for (int i = 0; i < 3; i++) {
        assertEquals(i + 1, get(sent.get(i)).offset());
      }
      List<ErrorCode> answers = s.fake().produceAnswers;
      assertEquals(
          List.of(ErrorCode.NONE, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
              ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
          answers.subList(0, 4));
      assertEquals(List.of("first", "v0", "v1", "v2"), s.fake().values("ooo-retry", 0));
    }
  }
}
