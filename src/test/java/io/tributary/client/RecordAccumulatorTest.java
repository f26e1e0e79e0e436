package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.protocol.ErrorCode;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RecordAccumulatorTest {

  private final AtomicLong clock = new AtomicLong(1_000_000L);
  private final AtomicInteger wakeups = new AtomicInteger();
  private final List<Long> drainAts = new ArrayList<>();
  private final RecordAccumulator.Listener listener =
      new RecordAccumulator.Listener() {
        @Override
        public void wakeup() {
          wakeups.incrementAndGet();
        }

        @Override
        public void drainAt(long deadlineMs) {
          synchronized (drainAts) {
            drainAts.add(deadlineMs);
          }
        }
      };

  private RecordAccumulator accumulator(Map<String, Object> overrides) {
    Map<String, Object> config = new HashMap<>();
    config.put(ClientConfig.LINGER_MS, 10);
    config.put(ClientConfig.BATCH_SIZE, 1024);
    config.put(ClientConfig.RETRY_BACKOFF_MS, 100);
    config.put(ClientConfig.REQUEST_TIMEOUT_MS, 1000);
    config.put(ClientConfig.DELIVERY_TIMEOUT_MS, 5000);
    config.putAll(overrides);
    return new RecordAccumulator(ProducerSettings.from(config), clock::get, listener);
  }

  private static byte[] bytes(int size, int fill) {
    byte[] b = new byte[size];
    java.util.Arrays.fill(b, (byte) fill);
    return b;
  }

  private static CompletableFuture<RecordMetadata> append(
      RecordAccumulator acc, String topic, int partition, byte[] value) {
    int size = RecordBatchBuilder.estimateSizeInBytes(null, value, null);
    acc.reserve(size, 0);
    return acc.append(topic, partition, 1234L, null, value, null, size, false, null);
  }

  /**
   * With compression, batches are filled to an estimated compressed size of batch.size (Kafka's ratio estimator): the
   * first batch holds batch.size uncompressed bytes, later ones of compressible data grow past it, but never past
   * max.request.size less the allowance.
   */
  @Test
  void compressedBatchesFillUpToTheEstimatedCompressedSizeCappedByMaxRequestSize() {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.COMPRESSION_TYPE, "lz4", ClientConfig.MAX_REQUEST_SIZE, 16 * 1024));
    List<Integer> uncompressedCounts = new ArrayList<>();
    for (int round = 0; round < 400; round++) {
      while (true) { // one full batch
        append(acc, "z", 0, bytes(50, 'a'));
        RecordAccumulator.Drained d = acc.drain();
        if (!d.batches().isEmpty()) {
          ProducerBatch b = d.batches().get(0);
          assertTrue(b.sizeInBytes() <= 16 * 1024 - RecordAccumulator.COMPRESSION_OVERHEAD_ALLOWANCE + 100,
              "uncompressed " + b.sizeInBytes());
          uncompressedCounts.add(b.recordCount());
          RecordBatch wire = RecordBatch.validate(acc.close(b));
          assertEquals(RecordBatch.COMPRESSION_LZ4, wire.compressionType());
          assertEquals(b.recordCount(), wire.records().size());
          acc.onSuccess(b, 0L, -1L);
          break;
        }
      }
    }
    int first = uncompressedCounts.get(0);
    int last = uncompressedCounts.get(uncompressedCounts.size() - 1);
    assertTrue(first < 25, "the first batch holds about batch.size (1 KiB) uncompressed: " + first + " records");
    assertTrue(last > 5 * first, "later batches grow as the ratio estimate falls: " + first + " then " + last);
    assertTrue(acc.compressionRatio("z") < 0.5f, "ratio " + acc.compressionRatio("z"));
  }

  /**
   * A built batch's buffer is reused by the next batch (as Kafka's BufferPool): the batches' bytes stay intact and
   * distinct, while the arrays written into are at most two.
   */
  @Test
  void builtBatchesGiveTheirBufferToLaterBatches() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0));
    java.util.Set<byte[]> builtArrays = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    List<byte[]> built = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      append(acc, "t", 0, bytes(100, i));
      List<ProducerBatch> drained = acc.drain().batches();
      assertEquals(1, drained.size());
      byte[] wire = acc.close(drained.get(0));
      assertTrue(builtArrays.add(wire), "each batch's bytes are an array of their own");
      built.add(wire);
      acc.onSuccess(drained.get(0), i, -1L);
    }
    for (int i = 0; i < 20; i++) {
      RecordBatch b = RecordBatch.validate(built.get(i));
      assertEquals(1, b.records().size());
      assertTrue(java.util.Arrays.equals(bytes(100, i), b.records().get(0).value()), "batch " + i + " intact");
    }
    assertEquals(1, acc.spareBuffersForTest(), "the one batch.size array in use went back after each build");
  }

  /**
   * acks=0: a batch's futures complete when it is sent (offset -1), but it keeps its in-flight slot until its answer
   * frees it, so no more than max.in.flight batches of a partition are unanswered (before, acks=0 had no bound and a
   * fast producer's requests were dropped on the way).
   */
  @Test
  void anAcksZeroBatchCompletesAtOnceButHoldsItsInFlightSlotUntilReleased() throws Exception {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.ACKS, "0", ClientConfig.LINGER_MS, 0,
            ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));
    CompletableFuture<RecordMetadata> first = append(acc, "t", 0, bytes(10, 1));
    List<ProducerBatch> sent = acc.drain().batches();
    assertEquals(1, sent.size());
    acc.onSentWithoutAcks(sent.get(0));
    assertEquals(-1L, first.get(1, TimeUnit.SECONDS).offset(), "sent: the future completes without an offset");

    CompletableFuture<RecordMetadata> second = append(acc, "t", 0, bytes(10, 2));
    CompletableFuture<RecordMetadata> otherPartition = append(acc, "t", 1, bytes(10, 3));
    List<ProducerBatch> next = acc.drain().batches();
    assertEquals(1, next.size(), "partition 0's one slot is held by the unanswered batch; partition 1 is free");
    assertEquals(1, next.get(0).partition);
    acc.onSentWithoutAcks(next.get(0));
    assertFalse(second.isDone());

    int before = wakeups.get();
    acc.releaseInFlight(sent.get(0));
    assertTrue(wakeups.get() > before, "a freed slot wakes the sender");
    List<ProducerBatch> afterAnswer = acc.drain().batches();
    assertEquals(1, afterAnswer.size());
    assertEquals(0, afterAnswer.get(0).partition);
    acc.releaseInFlight(sent.get(0)); // twice (a late answer after a timeout): no second slot
    acc.onSentWithoutAcks(afterAnswer.get(0));
    assertEquals(-1L, second.get(1, TimeUnit.SECONDS).offset());
    CompletableFuture<RecordMetadata> third = append(acc, "t", 0, bytes(10, 4));
    assertTrue(acc.drain().batches().isEmpty(), "the second batch holds the slot, the repeated release freed none");
    acc.releaseInFlight(afterAnswer.get(0));
    assertEquals(1, acc.drain().batches().size());
    assertTrue(otherPartition.isDone());
    assertFalse(third.isDone());
  }

  /**
   * A drain that finds a batch ready takes the other partitions' head batches that only wait for linger.ms along (as
   * Kafka's drain takes a batch of every partition of a ready broker), one per partition (not the batch that started
   * filling behind the ready one) and not those the producer names as being filled (its sticky partitions); a drain
   * that finds nothing ready takes nothing.
   */
  @Test
  void aReadyBatchTakesTheOtherPartitionsLingeringBatchesAlong() {
    RecordAccumulator acc = accumulator(Map.of());
    append(acc, "t", 1, bytes(10, 1));
    append(acc, "t", 2, bytes(10, 2));
    append(acc, "u", 0, bytes(10, 3));
    assertTrue(acc.drain().batches().isEmpty(), "nothing is ready: nothing goes");
    clock.addAndGet(5);
    int appended = 0;
    while (wakeups.get() == 0) { // fills t-0's batch; the record that does not fit starts its next batch
      append(acc, "t", 0, bytes(100, 4));
      appended++;
    }
    List<ProducerBatch> drained = acc.drain((topic, partition) -> topic.equals("u")).batches();
    assertEquals(List.of("t-0", "t-1", "t-2"),
        drained.stream().map(b -> b.topic + "-" + b.partition).sorted().toList());
    assertEquals(appended - 1, drained.stream().filter(b -> b.partition == 0).findFirst().orElseThrow().recordCount());
    assertTrue(acc.drain().batches().isEmpty(), "t-0's new batch and u-0 still linger");
    clock.addAndGet(5);
    assertEquals(List.of("t-0", "u-0"),
        acc.drain().batches().stream().map(b -> b.topic + "-" + b.partition).sorted().toList());
  }

  /**
   * Answers may come out of order (a batch's answer waits for its request's other partitions): a partition sends no
   * more than max.in.flight batches from its oldest unanswered one on, even when later ones were answered, so that a
   * retry of that oldest batch is still among the last batches its leader remembers for the producer.
   */
  @Test
  void aPartitionSendsNoFurtherThanMaxInFlightPastItsOldestUnansweredBatch() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0,
        ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 2));
    append(acc, "t", 0, bytes(10, 1));
    ProducerBatch first = acc.drain().batches().get(0);
    append(acc, "t", 0, bytes(10, 2));
    ProducerBatch second = acc.drain().batches().get(0);
    acc.onSuccess(second, 1L, -1L); // answered before the first
    append(acc, "t", 0, bytes(10, 3));
    assertTrue(acc.drain().batches().isEmpty(), "one slot is free, but two were sent since the oldest unanswered one");
    acc.onSuccess(first, 0L, -1L);
    assertEquals(1, acc.drain().batches().size());
  }

  @Test
  void recordsOfOnePartitionShareABatchUntilLingerExpires() {
    RecordAccumulator acc = accumulator(Map.of());
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      futures.add(append(acc, "t", 0, bytes(10, i)));
    }
    assertEquals(List.of(clock.get() + 10), drainAts, "one new batch, one linger deadline");
    RecordAccumulator.Drained early = acc.drain();
    assertTrue(early.batches().isEmpty());
    assertEquals(clock.get() + 10, early.nextDeadlineMs());

    clock.addAndGet(10);
    RecordAccumulator.Drained drained = acc.drain();
    assertEquals(1, drained.batches().size());
    ProducerBatch batch = drained.batches().get(0);
    assertEquals(5, batch.recordCount());
    RecordBatch wire = RecordBatch.validate(batch.close());
    List<Record> records = wire.records();
    assertEquals(5, records.size());
    for (int i = 0; i < 5; i++) {
      assertEquals(i, records.get(i).offset());
      assertEquals(1234L, records.get(i).timestamp());
    }

    acc.onSuccess(batch, 100L, -1L);
    for (int i = 0; i < 5; i++) {
      RecordMetadata m = futures.get(i).join();
      assertEquals(new RecordMetadata("t", 0, 100L + i, 1234L, -1, 10), m);
    }
    assertFalse(acc.hasIncomplete());
  }

  @Test
  void aFullBatchIsReadyAtOnceAndTheNextRecordStartsANewOne() {
    RecordAccumulator acc = accumulator(Map.of());
    int appended = 0;
    while (wakeups.get() == 0) {
      append(acc, "t", 0, bytes(100, appended));
      appended++;
    }
    // batch.size=1024 with ~108-byte records: the batch that no longer fits is full
    RecordAccumulator.Drained drained = acc.drain();
    assertEquals(1, drained.batches().size());
    ProducerBatch full = drained.batches().get(0);
    assertTrue(full.close().length <= 1024, "batch of " + full.close().length + " bytes");
    assertEquals(appended - 1, full.recordCount(), "the last record went to a new batch");
  }

  @Test
  void aRecordLargerThanBatchSizeGoesAloneAndIsReadyAtOnce() {
    RecordAccumulator acc = accumulator(Map.of());
    append(acc, "t", 0, bytes(5000, 1));
    assertEquals(1, wakeups.get());
    List<ProducerBatch> batches = acc.drain().batches();
    assertEquals(1, batches.size());
    assertEquals(1, batches.get(0).recordCount());
    assertTrue(batches.get(0).close().length > 5000);
  }

  @Test
  void abortOnNewBatchAppendsNothingWhenANewBatchWouldBeNeeded() {
    RecordAccumulator acc = accumulator(Map.of());
    byte[] value = bytes(10, 1);
    int size = RecordBatchBuilder.estimateSizeInBytes(null, value, null);
    assertNull(acc.append("t", 0, 1L, null, value, null, size, true, null), "no open batch yet");
    assertNotNull(acc.append("t", 0, 1L, null, value, null, size, false, null));
    acc.reserve(size, 0);
    assertNotNull(acc.append("t", 0, 1L, null, value, null, size, true, null), "the open batch has room");
  }

  @Test
  void atMostMaxInFlightBatchesPerPartition() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 2));
    for (int i = 0; i < 40; i++) {
      append(acc, "t", 0, bytes(100, i)); // several full batches
      append(acc, "u", 3, bytes(100, i));
    }
    List<ProducerBatch> first = acc.drain().batches();
    assertEquals(4, first.size(), "two per partition");
    assertTrue(acc.drain().batches().isEmpty(), "no slot free");
    ProducerBatch t0 = first.stream().filter(b -> b.topic.equals("t")).findFirst().orElseThrow();
    acc.onSuccess(t0, 0L, -1L);
    List<ProducerBatch> next = acc.drain().batches();
    assertEquals(1, next.size());
    assertEquals("t", next.get(0).topic);
    assertEquals(t0.sequence + 2, next.get(0).sequence, "in order");
  }

  @Test
  void aRetriableFailureIsRetriedAfterBackoffBeforeAnyNewerBatch() {
    RecordAccumulator acc = accumulator(Map.of());
    for (int i = 0; i < 40; i++) {
      append(acc, "t", 0, bytes(100, i));
    }
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertEquals(4, inFlight.size(), "the four full batches; the open one lingers");
    ProducerBatch b0 = inFlight.get(0);
    ProducerBatch b1 = inFlight.get(1);
    TributaryException notLeader = new TributaryException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "moved");
    assertTrue(acc.onFailure(b1, notLeader));
    assertTrue(acc.onFailure(b0, notLeader));
    acc.onSuccess(inFlight.get(2), 20L, -1L);
    acc.onSuccess(inFlight.get(3), 30L, -1L);
    clock.addAndGet(50);
    RecordAccumulator.Drained waiting = acc.drain();
    assertTrue(waiting.batches().isEmpty(), "backoff");
    assertEquals(clock.get() + 50, waiting.nextDeadlineMs());

    clock.addAndGet(50);
    assertEquals(List.of(b0), acc.drain().batches(), "oldest retry first, alone");
    assertTrue(acc.drain().batches().isEmpty(), "one at a time while retrying");
    acc.onSuccess(b0, 40L, -1L);
    assertEquals(List.of(b1), acc.drain().batches());
    acc.onSuccess(b1, 50L, -1L);
    clock.addAndGet(10);
    List<ProducerBatch> rest = acc.drain().batches();
    assertEquals(1, rest.size(), "the lingering batch, now that retries are done");
    assertTrue(rest.get(0).sequence > b1.sequence);
  }

  @Test
  void nonRetriableErrorsFailEveryRecordOfTheBatch() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0));
    CompletableFuture<RecordMetadata> f1 = append(acc, "t", 0, bytes(10, 1));
    CompletableFuture<RecordMetadata> f2 = append(acc, "t", 0, bytes(10, 2));
    ProducerBatch batch = acc.drain().batches().get(0);
    acc.close(batch);
    TributaryException invalid = new TributaryException(ErrorCode.INVALID_RECORD, "bad");
    assertFalse(acc.onFailure(batch, invalid));
    assertSame(invalid, cause(f1));
    assertSame(invalid, cause(f2));
    assertFalse(acc.hasIncomplete());
  }

  @Test
  void retriesAreBoundedByTheRetriesSetting() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0, ClientConfig.RETRIES, 1));
    CompletableFuture<RecordMetadata> f = append(acc, "t", 0, bytes(10, 1));
    ProducerBatch batch = acc.drain().batches().get(0);
    TributaryException timeout = new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "slow");
    assertTrue(acc.onFailure(batch, timeout));
    clock.addAndGet(100);
    assertEquals(List.of(batch), acc.drain().batches());
    assertFalse(acc.onFailure(batch, timeout));
    assertSame(timeout, cause(f));
  }

  @Test
  void queuedBatchesExpireAfterDeliveryTimeout() {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.LINGER_MS, 0, ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));
    append(acc, "t", 0, bytes(10, 1));
    ProducerBatch first = acc.drain().batches().get(0);
    clock.addAndGet(1);
    CompletableFuture<RecordMetadata> queued = append(acc, "t", 0, bytes(10, 2));
    assertTrue(acc.drain().batches().isEmpty(), "blocked behind the in-flight batch");
    clock.addAndGet(5000);
    assertTrue(acc.drain().batches().isEmpty());
    TributaryException e = cause(queued);
    assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode());
    assertTrue(e.getMessage().contains("delivery.timeout.ms"), e.getMessage());
    assertTrue(acc.hasIncomplete(), "the in-flight batch waits for its answer");
    assertFalse(acc.onFailure(first, new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer")));
    assertFalse(acc.hasIncomplete());
  }

  @Test
  void aRetriableFailureAfterDeliveryTimeoutFailsWithRequestTimedOut() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0));
    CompletableFuture<RecordMetadata> f = append(acc, "t", 0, bytes(10, 1));
    ProducerBatch batch = acc.drain().batches().get(0);
    clock.addAndGet(6000);
    assertFalse(acc.onFailure(batch, new TributaryException(ErrorCode.NOT_ENOUGH_REPLICAS, "isr")));
    TributaryException e = cause(f);
    assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode());
    assertTrue(e.getMessage().contains("NOT_ENOUGH_REPLICAS"), e.getMessage());
  }

  @Test
  void flushMakesLingeringBatchesReady() {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.LINGER_MS, 60_000, ClientConfig.DELIVERY_TIMEOUT_MS, 120_000));
    append(acc, "t", 0, bytes(10, 1));
    assertTrue(acc.drain().batches().isEmpty());
    acc.beginFlush();
    assertEquals(1, acc.drain().batches().size());
    acc.endFlush();
  }

  @Test
  void bufferMemoryIsReservedPerRecordAndReleasedWhenTheBatchCompletes() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.BUFFER_MEMORY, 300, ClientConfig.LINGER_MS, 0));
    append(acc, "t", 0, bytes(100, 1));
    append(acc, "t", 0, bytes(100, 2));
    int free = acc.availableMemory();
    assertTrue(free < 100, "free " + free);
    TributaryException e = assertThrows(TributaryException.class, () -> acc.reserve(108, 20));
    assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode());
    assertTrue(e.getMessage().contains("buffer.memory"), e.getMessage());
    ProducerBatch batch = acc.drain().batches().get(0);
    acc.onSuccess(batch, 0L, -1L);
    assertEquals(300, acc.availableMemory());
    acc.reserve(108, 0);
  }

  @Test
  void awaitIncompleteWaitsForEveryBatchAndAbortAllFailsThem() throws Exception {
    RecordAccumulator acc = accumulator(Map.of());
    CompletableFuture<RecordMetadata> queued = append(acc, "t", 0, bytes(10, 1));
    CompletableFuture<RecordMetadata> other = append(acc, "u", 1, bytes(10, 1));
    acc.beginClose();
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertEquals(2, inFlight.size(), "closing makes every batch ready");
    assertFalse(acc.awaitIncomplete(10));
    acc.onSuccess(inFlight.get(0), 7L, -1L);
    TributaryException closed = new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "closed");
    acc.abortAll(closed);
    assertTrue(acc.awaitIncomplete(10));
    long succeeded = List.of(queued, other).stream().filter(f -> !f.isCompletedExceptionally()).count();
    assertEquals(1, succeeded);
    // an answer that arrives after the abort changes nothing
    acc.onSuccess(inFlight.get(1), 9L, -1L);
    assertFalse(acc.hasIncomplete());
  }

  @Test
  void logAppendTimeFromTheBrokerReplacesRecordTimestamps() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.LINGER_MS, 0));
    CompletableFuture<RecordMetadata> f = append(acc, "t", 0, "v".getBytes(StandardCharsets.UTF_8));
    acc.onSuccess(acc.drain().batches().get(0), 5L, 999L);
    assertEquals(999L, f.join().timestamp());
  }

  private static TributaryException cause(CompletableFuture<RecordMetadata> f) {
    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    return (TributaryException) e.getCause();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Idempotent producer

  private static final long PID = 777L;

  private RecordAccumulator idempotentAccumulator(Map<String, Object> overrides) {
    Map<String, Object> config = new HashMap<>();
    config.put(ClientConfig.LINGER_MS, 10);
    config.put(ClientConfig.BATCH_SIZE, 1024);
    config.put(ClientConfig.RETRY_BACKOFF_MS, 100);
    config.put(ClientConfig.REQUEST_TIMEOUT_MS, 1000);
    config.put(ClientConfig.DELIVERY_TIMEOUT_MS, 5000);
    config.put(ClientConfig.ENABLE_IDEMPOTENCE, true);
    config.putAll(overrides);
    AtomicLong ids = new AtomicLong(PID);
    return new RecordAccumulator(ProducerSettings.from(config), clock::get, listener, ids::getAndIncrement);
  }

  private static RecordBatch header(ProducerBatch batch) {
    return RecordBatch.validate(batch.close());
  }

  @Test
  void idempotentBatchesAreSealedWithConsecutiveSequencesWhenFirstDrained() {
    RecordAccumulator acc = idempotentAccumulator(Map.of());
    for (int i = 0; i < 40; i++) {
      append(acc, "t", 0, bytes(100, i));
      append(acc, "u", 1, bytes(100, i));
    }
    List<ProducerBatch> drained = acc.drain().batches();
    assertEquals(8, drained.size(), "four full batches per partition");
    Map<String, Integer> next = new HashMap<>();
    for (ProducerBatch b : drained) {
      RecordBatch h = header(b);
      assertEquals(PID, h.producerId());
      assertEquals(0, h.producerEpoch());
      int expected = next.getOrDefault(b.topic, 0);
      assertEquals(expected, h.baseSequence(), "sequences count records per partition, from 0");
      assertEquals(expected + h.recordCount() - 1, h.lastSequence());
      next.put(b.topic, expected + h.recordCount());
    }
    assertEquals(PID, acc.producerId());
  }

  @Test
  void fiveInFlightFirstFailsRetriablyAllAreResentInOrderWithTheirSequencesAndBytes() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0)); // one record per batch
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      futures.add(append(acc, "t", 0, bytes(10, i)));
    }
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertEquals(5, inFlight.size(), "max.in.flight.requests.per.connection=5");
    List<byte[]> sentBytes = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      sentBytes.add(inFlight.get(i).close());
      assertEquals(i, header(inFlight.get(i)).baseSequence());
    }
    // the leader refused the first (it moved); the four after it arrive out of sequence
    assertTrue(acc.onFailure(inFlight.get(0), new TributaryException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "moved")));
    TributaryException outOfOrder = new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "expected 0");
    for (int i = 1; i < 5; i++) {
      assertTrue(acc.onFailure(inFlight.get(i), outOfOrder), "retried, not surfaced: batch " + i);
    }
    for (CompletableFuture<RecordMetadata> f : futures) {
      assertFalse(f.isDone());
    }
    clock.addAndGet(100);
    List<ProducerBatch> resent = new ArrayList<>();
    for (int round = 0; round < 5; round++) {
      List<ProducerBatch> drained = acc.drain().batches();
      assertEquals(1, drained.size(), "one at a time while retrying, oldest first; round " + round);
      ProducerBatch b = drained.get(0);
      resent.add(b);
      acc.onSuccess(b, round, -1L);
    }
    List<ProducerBatch> newer = acc.drain().batches();
    assertEquals(2, newer.size(), "retries done: the newer batches go together");
    resent.addAll(newer);
    acc.onSuccess(newer.get(0), 5, -1L);
    acc.onSuccess(newer.get(1), 6, -1L);
    assertEquals(inFlight, resent.subList(0, 5), "the five again, in sequence order, before the newer ones");
    for (int i = 0; i < 5; i++) {
      assertSame(sentBytes.get(i), resent.get(i).close(), "a retry sends the same bytes");
    }
    assertEquals(5, header(resent.get(5)).baseSequence());
    assertEquals(6, header(resent.get(6)).baseSequence());
    for (int i = 0; i < 7; i++) {
      assertEquals(i, futures.get(i).join().offset());
    }
  }

  @Test
  void outOfOrderWhileTheEarlierBatchIsStillInFlightIsRetried() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    append(acc, "t", 0, bytes(10, 0));
    append(acc, "t", 0, bytes(10, 1));
    List<ProducerBatch> inFlight = acc.drain().batches();
    // the second arrived first (the first was lost on the way and will time out)
    assertTrue(
        acc.onFailure(
            inFlight.get(1), new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "expected 0")));
    assertTrue(acc.onFailure(inFlight.get(0), new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer")));
    clock.addAndGet(100);
    assertEquals(List.of(inFlight.get(0)), acc.drain().batches());
  }

  @Test
  void aFinalFailureBumpsTheEpochOnceNoSealedBatchIsPendingAndSequencesRestartAtZero() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    CompletableFuture<RecordMetadata> f0 = append(acc, "t", 0, bytes(10, 0));
    append(acc, "u", 0, bytes(10, 0));
    List<ProducerBatch> first = acc.drain().batches();
    ProducerBatch t0 = first.stream().filter(b -> b.topic.equals("t")).findFirst().orElseThrow();
    ProducerBatch u0 = first.stream().filter(b -> b.topic.equals("u")).findFirst().orElseThrow();
    TributaryException invalid = new TributaryException(ErrorCode.INVALID_RECORD, "bad record");
    assertFalse(acc.onFailure(t0, invalid));
    assertSame(invalid, cause(f0));
    append(acc, "t", 0, bytes(10, 1));
    assertTrue(acc.drain().batches().isEmpty(), "no new sequence while a batch of the old epoch is pending");
    assertEquals(0, acc.producerEpoch());
    acc.onSuccess(u0, 0L, -1L);
    List<ProducerBatch> next = acc.drain().batches();
    assertEquals(1, next.size());
    RecordBatch h = header(next.get(0));
    assertEquals(1, h.producerEpoch(), "epoch bumped");
    assertEquals(PID, h.producerId());
    assertEquals(0, h.baseSequence(), "sequences restart at 0");
    append(acc, "u", 0, bytes(10, 1));
    assertEquals(0, header(acc.drain().batches().get(0)).baseSequence(), "on every partition");
  }

  /**
   * OUT_OF_ORDER_SEQUENCE_NUMBER with no earlier batch pending: the gap is real and the batch was not appended (a
   * batch that was would be answered as a duplicate); as Kafka since KIP-360, it is resent with the bumped epoch from
   * sequence 0, once no batch sealed with the old epoch is pending, and before the newer batch of its partition.
   */
  @Test
  void outOfOrderWithNothingEarlierPendingIsResentWithTheBumpedEpochBeforeNewerBatches() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    CompletableFuture<RecordMetadata> f0 = append(acc, "t", 0, bytes(10, 0));
    append(acc, "u", 0, bytes(10, 0));
    List<ProducerBatch> first = acc.drain().batches();
    ProducerBatch t0 = first.stream().filter(b -> b.topic.equals("t")).findFirst().orElseThrow();
    ProducerBatch u0 = first.stream().filter(b -> b.topic.equals("u")).findFirst().orElseThrow();
    assertTrue(acc.onFailure(t0, new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "gap")));
    assertFalse(t0.retryBehindKnownGap, "a gap the producer did not know of: the producer warns");
    CompletableFuture<RecordMetadata> f1 = append(acc, "t", 0, bytes(10, 1));
    clock.addAndGet(100);
    assertTrue(acc.drain().batches().isEmpty(), "nothing is sealed while a batch of the old epoch is pending");
    assertEquals(0, acc.producerEpoch());
    acc.onSuccess(u0, 0L, -1L);
    assertEquals(List.of(t0), acc.drain().batches(), "the retried batch alone, first");
    RecordBatch h0 = header(t0);
    assertEquals(1, h0.producerEpoch());
    assertEquals(0, h0.baseSequence());
    acc.onSuccess(t0, 7L, -1L);
    List<ProducerBatch> next = acc.drain().batches();
    assertEquals(1, next.size());
    assertEquals(1, header(next.get(0)).baseSequence());
    acc.onSuccess(next.get(0), 8L, -1L);
    assertEquals(7L, f0.join().offset());
    assertEquals(8L, f1.join().offset());
  }

  /**
   * Behind a batch the leader refused, a batch whose answer was a timeout cannot have been appended either (the
   * leader appends sequences only contiguously): it is resent with the new epoch at once, not first with its old
   * sequence; and a batch behind it that was answered out of sequence follows it.
   */
  @Test
  void aTimeoutBehindABatchTheLeaderRefusedIsResentWithTheNewEpoch() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    for (int i = 0; i < 3; i++) {
      append(acc, "t", 0, bytes(10, i));
    }
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertFalse(acc.onFailure(inFlight.get(0), new TributaryException(ErrorCode.INVALID_TIMESTAMP, "bad")));
    assertTrue(acc.onFailure(inFlight.get(2), new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "")));
    assertTrue(acc.onFailure(inFlight.get(1), new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer")));
    clock.addAndGet(100);
    for (int i = 1; i < 3; i++) {
      List<ProducerBatch> drained = acc.drain().batches();
      assertEquals(List.of(inFlight.get(i)), drained);
      RecordBatch h = header(drained.get(0));
      assertEquals(1, h.producerEpoch());
      assertEquals(i - 1, h.baseSequence());
      acc.onSuccess(drained.get(0), i, -1L);
    }
    assertFalse(acc.hasIncomplete());
  }

  /**
   * A batch that awaits its retry with its old sequence when the leader refuses an earlier one can never be appended
   * with it: it is unsealed at once. (Were it left sealed behind an unsealed batch, the epoch bump, which waits for
   * every sealed batch, and that batch, which waits for the bump, would wait for each other.)
   */
  @Test
  void aSealedBatchAwaitingItsRetryBehindARefusedBatchIsResentWithTheNewEpoch() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      futures.add(append(acc, "t", 0, bytes(10, i)));
    }
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertTrue(acc.onFailure(inFlight.get(2), new TributaryException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "moved")));
    assertFalse(acc.onFailure(inFlight.get(0), new TributaryException(ErrorCode.MESSAGE_TOO_LARGE, "too large")));
    assertTrue(acc.onFailure(inFlight.get(1), new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "")));
    clock.addAndGet(100);
    for (int i = 1; i < 3; i++) {
      List<ProducerBatch> drained = acc.drain().batches();
      assertEquals(List.of(inFlight.get(i)), drained, "batch " + i);
      RecordBatch h = header(drained.get(0));
      assertEquals(1, h.producerEpoch());
      assertEquals(i - 1, h.baseSequence());
      acc.onSuccess(drained.get(0), i, -1L);
      assertEquals(i, futures.get(i).join().offset());
    }
  }

  /**
   * A refusal does not prove a batch was never appended if an earlier attempt ended without an answer (that attempt
   * may have been appended, e.g. before the topic's limit changed): the batches after it keep their seal.
   */
  @Test
  void aRefusalAfterAnAttemptWithoutAnswerLeavesNoKnownGap() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    append(acc, "t", 0, bytes(10, 0));
    append(acc, "t", 0, bytes(10, 1));
    List<ProducerBatch> inFlight = acc.drain().batches();
    ProducerBatch b0 = inFlight.get(0);
    ProducerBatch b1 = inFlight.get(1);
    byte[] b1Sealed = b1.close();
    TributaryException timeout = new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer");
    assertTrue(acc.onFailure(b0, timeout));
    assertTrue(acc.onFailure(b1, timeout));
    clock.addAndGet(100);
    assertEquals(List.of(b0), acc.drain().batches());
    assertFalse(acc.onFailure(b0, new TributaryException(ErrorCode.MESSAGE_TOO_LARGE, "too large now")));
    clock.addAndGet(100);
    assertEquals(List.of(b1), acc.drain().batches());
    assertSame(b1Sealed, b1.close(), "resent with its seal");
  }

  /**
   * A batch that finally fails after a timeout may have been appended: nothing is assumed about the batch after it,
   * which is resent as it was sealed (were the first appended, the leader would take it). Only when the leader
   * answers it out of sequence is it sealed again with the new epoch.
   */
  @Test
  void afterABatchThatMayHaveBeenAppendedTheNextIsResentWithItsSealFirst() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 0));
    append(acc, "t", 0, bytes(10, 0));
    ProducerBatch b0 = acc.drain().batches().get(0);
    clock.addAndGet(4000);
    append(acc, "t", 0, bytes(10, 1));
    ProducerBatch b1 = acc.drain().batches().get(0);
    byte[] b1Sealed = b1.close();
    clock.addAndGet(1000); // b0's delivery.timeout.ms is up, b1's is not
    TributaryException timeout = new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer");
    assertFalse(acc.onFailure(b0, timeout));
    assertTrue(acc.onFailure(b1, timeout));
    clock.addAndGet(100);
    assertEquals(List.of(b1), acc.drain().batches());
    assertSame(b1Sealed, b1.close(), "the same bytes: epoch 0, sequence 1");
    assertTrue(acc.onFailure(b1, new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "expected 1")));
    clock.addAndGet(100);
    assertEquals(List.of(b1), acc.drain().batches());
    RecordBatch h = header(b1);
    assertEquals(1, h.producerEpoch());
    assertEquals(0, h.baseSequence());
  }

  /**
   * The bug seen with {@code bin/tributary produce}: batch 0 is refused by the leader as too large (not appended), so
   * batches 1 and 2, in flight behind it, arrive out of sequence. They are resent (new epoch, sequences from 0, in
   * their order, one at a time and before the newer batch 3) instead of failing; the bytes first sent are left as
   * they were (the leader may hold them), the new ones carry the new producer state and a valid CRC.
   */
  @Test
  void batchesInFlightBehindOneTheLeaderRefusedAreResentWithANewEpochInOrder() {
    RecordAccumulator acc =
        idempotentAccumulator(
            Map.of(ClientConfig.BATCH_SIZE, 0, ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 3));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      futures.add(append(acc, "t", 0, bytes(10, i)));
    }
    List<ProducerBatch> inFlight = acc.drain().batches();
    assertEquals(3, inFlight.size());
    List<byte[]> firstSent = new ArrayList<>();
    for (ProducerBatch b : inFlight) {
      firstSent.add(b.close());
    }
    TributaryException tooLarge = new TributaryException(ErrorCode.MESSAGE_TOO_LARGE, "above max.message.bytes");
    assertFalse(acc.onFailure(inFlight.get(0), tooLarge));
    assertSame(tooLarge, cause(futures.get(0)));
    TributaryException outOfOrder = new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "expected 1");
    assertTrue(acc.onFailure(inFlight.get(1), outOfOrder), "retried, not surfaced");
    assertTrue(acc.onFailure(inFlight.get(2), outOfOrder), "retried, not surfaced");
    assertTrue(inFlight.get(1).retryBehindKnownGap && inFlight.get(2).retryBehindKnownGap,
        "the expected answers behind the refused batch: the producer does not warn about them");
    for (int i = 1; i < 4; i++) {
      assertFalse(futures.get(i).isDone(), "record " + i);
    }

    clock.addAndGet(100); // retry.backoff.ms
    List<ProducerBatch> resent = new ArrayList<>();
    for (int round = 0; round < 2; round++) {
      List<ProducerBatch> drained = acc.drain().batches();
      assertEquals(1, drained.size(), "one at a time while retrying; round " + round);
      ProducerBatch b = drained.get(0);
      resent.add(b);
      RecordBatch h = header(b); // validates the CRC too
      assertEquals(PID, h.producerId());
      assertEquals(1, h.producerEpoch(), "the epoch was bumped");
      assertEquals(round, h.baseSequence(), "sequences restart at 0");
      assertArrayEquals(bytes(10, round + 1), h.iterator().next().value(), "the same record");
      acc.onSuccess(b, 10L + round, -1L);
    }
    assertEquals(inFlight.subList(1, 3), resent, "the two, in their order");
    List<ProducerBatch> newer = acc.drain().batches();
    assertEquals(1, newer.size(), "then the newer batch");
    RecordBatch h3 = header(newer.get(0));
    assertEquals(1, h3.producerEpoch());
    assertEquals(2, h3.baseSequence());
    acc.onSuccess(newer.get(0), 12L, -1L);
    for (int i = 1; i < 4; i++) {
      assertEquals(9L + i, futures.get(i).join().offset());
    }
    for (int i = 1; i < 3; i++) {
      RecordBatch first = RecordBatch.validate(firstSent.get(i));
      assertEquals(0, first.producerEpoch(), "the bytes first sent are not changed");
      assertEquals(i, first.baseSequence());
    }
    assertFalse(acc.hasIncomplete());
  }

  @Test
  void sequencesWrapAtIntegerMaxValue() {
    assertEquals(0, RecordAccumulator.incrementSequence(Integer.MAX_VALUE, 1));
    assertEquals(2, RecordAccumulator.incrementSequence(Integer.MAX_VALUE - 1, 4));
    assertEquals(7, RecordAccumulator.incrementSequence(3, 4));
  }

  @Test
  void withoutIdempotenceBatchesCarryNoProducerState() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.ACKS, "1", ClientConfig.LINGER_MS, 0));
    append(acc, "t", 0, bytes(10, 0));
    RecordBatch h = header(acc.drain().batches().get(0));
    assertEquals(-1L, h.producerId());
    assertEquals(-1, h.baseSequence());
    assertFalse(acc.idempotent());
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Splitting a batch the leader refuses as too large

  private static final TributaryException TOO_LARGE =
      new TributaryException(ErrorCode.MESSAGE_TOO_LARGE, "The record batch is larger than max.message.bytes 1000");

  /** The value of record {@code i} (0-based) of the ten: the fifth (index 4) is 3000 bytes, the others small. */
  private static byte[] tenValue(int i) {
    return i == 4 ? bytes(3000, 'x') : ("line-" + (i + 1)).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Appends the ten records to t-0 (one batch: batch.size is large), each with a callback that logs "i@offset" or
   * "i:ERROR", and drains and builds their batch once linger.ms is up.
   */
  private ProducerBatch appendTen(
      RecordAccumulator acc, List<CompletableFuture<RecordMetadata>> futures, List<String> callbacks) {
    for (int i = 0; i < 10; i++) {
      byte[] value = tenValue(i);
      int size = RecordBatchBuilder.estimateSizeInBytes(null, value, null);
      acc.reserve(size, 0);
      int index = i;
      futures.add(
          acc.append("t", 0, 1234L + i, null, value, null, size, false, (md, ex) -> {
            synchronized (callbacks) {
              callbacks.add(ex == null ? index + "@" + md.offset()
                  : index + ":" + ((TributaryException) ex).errorCode());
            }
          }));
    }
    clock.addAndGet(10);
    List<ProducerBatch> drained = acc.drain().batches();
    assertEquals(1, drained.size());
    ProducerBatch batch = drained.get(0);
    assertEquals(10, batch.recordCount(), "the ten in one batch");
    acc.close(batch);
    return batch;
  }

  /** The values of a drained batch, decoded from the bytes it would send. */
  private static List<String> valuesOf(RecordAccumulator acc, ProducerBatch batch) {
    List<String> values = new ArrayList<>();
    for (Record r : RecordBatch.validate(acc.close(batch))) {
      values.add(r.value().length > 100 ? "big" : new String(r.value(), StandardCharsets.UTF_8));
    }
    return values;
  }

  private static final List<String> FIRST_FOUR = List.of("line-1", "line-2", "line-3", "line-4");
  private static final List<String> LAST_FIVE = List.of("line-6", "line-7", "line-8", "line-9", "line-10");

  /**
   * The leader refuses the batch of ten as too large: it is split (not failed) into [1-4], [5] and [6-10] (at most half
   * its size each), resent in that order with each record's own future and callback; only the fifth, still too large
   * alone, fails. The split is not an attempt (retries=0 here), and the buffer memory comes back in full.
   */
  @Test
  void aBatchRefusedAsTooLargeIsSplitInOrderAndOnlyTheRecordTooLargeAloneFails() {
    RecordAccumulator acc =
        accumulator(
            Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384, ClientConfig.RETRIES, 0));
    int memory = acc.availableMemory();
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    List<String> callbacks = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, callbacks);

    assertTrue(acc.onFailure(batch, TOO_LARGE), "split and resent, not failed");
    assertTrue(futures.stream().noneMatch(CompletableFuture::isDone));
    assertTrue(batch.isDone(), "the refused batch is retired");
    List<ProducerBatch> pieces = acc.drain().batches();
    assertEquals(3, pieces.size(), "ready at once, no backoff");
    assertEquals(FIRST_FOUR, valuesOf(acc, pieces.get(0)));
    assertEquals(List.of("big"), valuesOf(acc, pieces.get(1)));
    assertEquals(LAST_FIVE, valuesOf(acc, pieces.get(2)));
    for (ProducerBatch p : pieces) {
      assertEquals(batch.createdMs, p.createdMs, "delivery.timeout.ms counts from the first append");
      assertEquals(-1L, RecordBatch.validate(acc.close(p)).producerId());
      assertTrue(acc.close(p).length <= 16384);
    }
    assertEquals(1239L, RecordBatch.validate(acc.close(pieces.get(2))).baseTimestamp(), "record timestamps kept");

    acc.onSuccess(pieces.get(0), 0L, -1L);
    assertFalse(acc.onFailure(pieces.get(1), TOO_LARGE), "one record too large: not split, fails");
    acc.onSuccess(pieces.get(2), 4L, -1L);

    for (int i = 0; i < 10; i++) {
      if (i == 4) {
        assertSame(TOO_LARGE, cause(futures.get(i)));
      } else {
        RecordMetadata m = futures.get(i).join();
        assertEquals(i < 4 ? i : i - 1, m.offset(), "record " + i);
        assertEquals(1234L + i, m.timestamp());
        assertEquals(tenValue(i).length, m.serializedValueSize());
      }
    }
    assertEquals(List.of("0@0", "1@1", "2@2", "3@3", "4:MESSAGE_TOO_LARGE", "5@4", "6@5", "7@6", "8@7", "9@8"),
        callbacks, "each callback once, in record order");
    assertFalse(acc.hasIncomplete());
    assertEquals(memory, acc.availableMemory(), "the buffer memory is all given back");
    assertTrue(acc.drain().batches().isEmpty());
  }

  @Test
  void aBatchOfOneRecordRefusedAsTooLargeFailsWithoutASplit() {
    RecordAccumulator acc = accumulator(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.LINGER_MS, 0));
    CompletableFuture<RecordMetadata> f = append(acc, "t", 0, bytes(3000, 1));
    ProducerBatch batch = acc.drain().batches().get(0);
    acc.close(batch);
    assertFalse(acc.onFailure(batch, TOO_LARGE));
    assertSame(TOO_LARGE, cause(f));
    assertTrue(acc.drain().batches().isEmpty());
    assertFalse(acc.hasIncomplete());
  }

  /**
   * The pieces go back at the refused batch's place: after an older batch that awaits its retry, before a newer batch
   * that was queued meanwhile.
   */
  @Test
  void thePiecesGoAfterOlderRetriesAndBeforeEveryNewerBatch() {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384));
    CompletableFuture<RecordMetadata> older = append(acc, "t", 0, "older".getBytes(StandardCharsets.UTF_8));
    clock.addAndGet(10);
    ProducerBatch olderBatch = acc.drain().batches().get(0);
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    CompletableFuture<RecordMetadata> newer = append(acc, "t", 0, "newer".getBytes(StandardCharsets.UTF_8));

    assertTrue(acc.onFailure(olderBatch, new TributaryException(ErrorCode.NOT_LEADER_OR_FOLLOWER, "moved")));
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    clock.addAndGet(100); // retry.backoff.ms of the older batch, linger.ms of the newer
    List<List<String>> sent = new ArrayList<>();
    answerAsALeader(acc, false, b -> {
      List<String> values = valuesOf(acc, b);
      sent.add(values);
      return values.equals(List.of("big"));
    });
    assertEquals(List.of(List.of("older"), FIRST_FOUR, List.of("big"), LAST_FIVE, List.of("newer")), sent);
    assertEquals(0L, older.join().offset());
    assertEquals(1L, futures.get(0).join().offset());
    assertEquals(9L, futures.get(9).join().offset());
    assertEquals(10L, newer.join().offset());
    assertFalse(acc.hasIncomplete());
  }

  /**
   * Idempotent, with a later batch in flight behind the refused one: the refused batch's sequences 0-9 are a gap, so
   * the later batch (answered out of sequence) is unsealed; after the epoch bump the pieces are sealed first, from
   * sequence 0, then the later batch, then the newer one. The fifth, refused alone, leaves a gap again: the pieces
   * after it are sealed with the next epoch.
   */
  @Test
  void idempotentTheSplitBumpsTheEpochAndThePiecesAreSealedFirstWithFreshSequences() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 16384));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    RecordBatch sealed = header(batch);
    assertEquals(0, sealed.producerEpoch());
    assertEquals(0, sealed.baseSequence());
    CompletableFuture<RecordMetadata> later = append(acc, "t", 0, "later".getBytes(StandardCharsets.UTF_8));
    clock.addAndGet(10);
    ProducerBatch laterBatch = acc.drain().batches().get(0);
    assertEquals(10, header(laterBatch).baseSequence(), "sealed after the ten");
    CompletableFuture<RecordMetadata> newer = append(acc, "t", 0, "newer".getBytes(StandardCharsets.UTF_8));

    assertTrue(acc.onFailure(batch, TOO_LARGE));
    assertTrue(acc.onFailure(laterBatch, new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "expected 0")));
    clock.addAndGet(100);
    List<String> sealedAs = new ArrayList<>();
    answerAsALeader(acc, true, b -> {
      RecordBatch h = header(b);
      assertEquals(PID, h.producerId());
      sealedAs.add(valuesOf(acc, b).get(0) + " e" + h.producerEpoch() + " s" + h.baseSequence());
      return b.recordCount() == 1 && h.iterator().next().value().length == 3000;
    });
    assertEquals(
        List.of("line-1 e1 s0", "big e1 s4", "line-6 e2 s0", "later e2 s5", "newer e2 s6"),
        sealedAs,
        "the pieces first, with fresh sequences in order, then the later batch, then the newer");
    for (int i = 0; i < 10; i++) {
      if (i == 4) {
        assertSame(TOO_LARGE, cause(futures.get(i)));
      } else {
        assertEquals(i < 4 ? i : i - 1, futures.get(i).join().offset(), "record " + i);
      }
    }
    assertEquals(9L, later.join().offset());
    assertEquals(10L, newer.join().offset());
    assertEquals(2, acc.producerEpoch());
    assertFalse(acc.hasIncomplete());
  }

  /**
   * Idempotent, nothing else pending: the pieces go out together (sealed with the bumped epoch, sequences 0, 4 and 5),
   * and the one behind the fifth, refused as out of sequence, is sealed again with the next epoch.
   */
  @Test
  void idempotentThePiecesBehindTheOneStillTooLargeAreResealedWithTheNextEpoch() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 16384));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    List<ProducerBatch> pieces = acc.drain().batches();
    assertEquals(3, pieces.size());
    int[] sequences = {0, 4, 5};
    for (int i = 0; i < 3; i++) {
      RecordBatch h = header(pieces.get(i));
      assertEquals(1, h.producerEpoch());
      assertEquals(sequences[i], h.baseSequence());
    }
    acc.onSuccess(pieces.get(0), 0L, -1L);
    assertFalse(acc.onFailure(pieces.get(1), TOO_LARGE));
    assertTrue(acc.onFailure(pieces.get(2), new TributaryException(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, "")));
    clock.addAndGet(100);
    assertEquals(List.of(pieces.get(2)), acc.drain().batches());
    RecordBatch h = header(pieces.get(2));
    assertEquals(2, h.producerEpoch());
    assertEquals(0, h.baseSequence());
    assertEquals(LAST_FIVE, valuesOf(acc, pieces.get(2)));
    acc.onSuccess(pieces.get(2), 4L, -1L);
    assertEquals(8L, futures.get(9).join().offset());
    assertFalse(acc.hasIncomplete());
  }

  /**
   * A sealed batch that may have been appended by an attempt without answer is not split (its records could be
   * written twice): it fails as it is.
   */
  @Test
  void idempotentABatchThatMayHaveBeenAppendedIsNotSplit() {
    RecordAccumulator acc = idempotentAccumulator(Map.of(ClientConfig.BATCH_SIZE, 16384));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    assertTrue(acc.onFailure(batch, new TributaryException(ErrorCode.REQUEST_TIMED_OUT, "no answer")));
    clock.addAndGet(100);
    assertEquals(List.of(batch), acc.drain().batches());
    assertFalse(acc.onFailure(batch, TOO_LARGE));
    for (CompletableFuture<RecordMetadata> f : futures) {
      assertSame(TOO_LARGE, cause(f));
    }
    assertFalse(acc.hasIncomplete());
  }

  /** A piece still too large is split again, and its pieces go before the rest of the first split. */
  @Test
  void aPieceStillTooLargeIsSplitAgainInOrder() {
    RecordAccumulator acc =
        accumulator(
            Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384,
                ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      futures.add(append(acc, "t", 0, bytes(200, 'a' + i)));
    }
    clock.addAndGet(10);
    ProducerBatch batch = acc.drain().batches().get(0);
    assertEquals(8, batch.recordCount());
    acc.close(batch);
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    // a leader that takes at most 2 records per batch
    List<Integer> counts = new ArrayList<>();
    long offset = answerAsALeader(acc, true, b -> {
      if (b.recordCount() > 2) {
        return true;
      }
      counts.add(b.recordCount());
      return false;
    });
    assertEquals(8, offset);
    assertTrue(counts.size() >= 4, "counts " + counts);
    for (int i = 0; i < 8; i++) {
      assertEquals(i, futures.get(i).join().offset(), "record " + i + " at its place");
    }
    assertFalse(acc.hasIncomplete());
  }

  /** The pieces keep the refused batch's creation time: queued past its delivery.timeout.ms, they expire. */
  @Test
  void thePiecesExpireAtTheRefusedBatchsDeliveryTimeout() {
    RecordAccumulator acc =
        accumulator(
            Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384,
                ClientConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    clock.addAndGet(4000);
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    ProducerBatch first = acc.drain().batches().get(0);
    assertEquals(4, first.recordCount());
    clock.addAndGet(1000); // 5000 ms since the ten were appended
    assertTrue(acc.drain().batches().isEmpty(), "the other pieces expire while queued");
    for (int i = 4; i < 10; i++) {
      assertEquals(ErrorCode.REQUEST_TIMED_OUT, cause(futures.get(i)).errorCode(), "record " + i);
    }
    acc.onSuccess(first, 0L, -1L);
    assertEquals(3L, futures.get(3).join().offset());
    assertFalse(acc.hasIncomplete());
  }

  /** Refused as too large after its delivery.timeout.ms: not split; every record fails with REQUEST_TIMED_OUT. */
  @Test
  void aBatchRefusedAsTooLargeAfterItsDeliveryTimeoutIsNotSplit() {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    clock.addAndGet(5000);
    assertFalse(acc.onFailure(batch, TOO_LARGE));
    for (CompletableFuture<RecordMetadata> f : futures) {
      TributaryException e = cause(f);
      assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode());
      assertTrue(e.getMessage().contains("MESSAGE_TOO_LARGE"), e.getMessage());
    }
    assertTrue(acc.drain().batches().isEmpty());
    assertFalse(acc.hasIncomplete());
  }

  /**
   * A compressed batch is split from its decompressed records, and each piece is compressed again when built; the
   * topic's compression ratio estimate restarts at 1.
   */
  @Test
  void aCompressedBatchIsSplitAndItsPiecesAreCompressedAgain() {
    RecordAccumulator acc =
        accumulator(
            Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384,
                ClientConfig.COMPRESSION_TYPE, "lz4"));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    assertEquals(RecordBatch.COMPRESSION_LZ4, RecordBatch.validate(acc.close(batch)).compressionType());
    assertTrue(acc.compressionRatio("t") < 1.0f, "3000 x's compress well: " + acc.compressionRatio("t"));
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    assertEquals(1.0f, acc.compressionRatio("t"), "the estimate restarts");
    List<ProducerBatch> pieces = acc.drain().batches();
    assertEquals(3, pieces.size());
    List<String> values = new ArrayList<>();
    for (ProducerBatch p : pieces) {
      RecordBatch wire = RecordBatch.validate(acc.close(p));
      assertEquals(RecordBatch.COMPRESSION_LZ4, wire.compressionType());
      values.addAll(valuesOf(acc, p));
    }
    List<String> expected = new ArrayList<>(FIRST_FOUR);
    expected.add("big");
    expected.addAll(LAST_FIVE);
    assertEquals(expected, values);
    acc.onSuccess(pieces.get(0), 0L, -1L);
    acc.onSuccess(pieces.get(1), 4L, -1L);
    acc.onSuccess(pieces.get(2), 5L, -1L);
    for (int i = 0; i < 10; i++) {
      assertEquals(i, futures.get(i).join().offset());
    }
  }

  /**
   * A flush that began before the split (waiting for the refused batch) waits for the pieces too: its records are
   * done only when they are.
   */
  @Test
  void aFlushWaitingForTheRefusedBatchWaitsForItsPieces() throws Exception {
    RecordAccumulator acc =
        accumulator(Map.of(ClientConfig.ENABLE_IDEMPOTENCE, false, ClientConfig.BATCH_SIZE, 16384));
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
    ProducerBatch batch = appendTen(acc, futures, new ArrayList<>());
    CompletableFuture<Boolean> flushed = new CompletableFuture<>();
    Thread flusher = new Thread(() -> {
      try {
        flushed.complete(acc.awaitIncomplete(Long.MAX_VALUE));
      } catch (Throwable t) {
        flushed.completeExceptionally(t);
      }
    });
    flusher.start();
    long bound = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (flusher.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < bound) {
      Thread.onSpinWait(); // until it waits for the refused batch, the only one incomplete
    }
    assertEquals(Thread.State.TIMED_WAITING, flusher.getState());
    assertTrue(acc.onFailure(batch, TOO_LARGE));
    List<ProducerBatch> pieces = acc.drain().batches();
    acc.onSuccess(pieces.get(0), 0L, -1L);
    acc.onSuccess(pieces.get(1), 4L, -1L);
    assertFalse(flushed.isDone(), "a piece is still pending");
    acc.onSuccess(pieces.get(2), 5L, -1L);
    assertTrue(flushed.get(30, TimeUnit.SECONDS));
    for (CompletableFuture<RecordMetadata> f : futures) {
      assertTrue(f.isDone());
    }
  }

  /**
   * Plays the partition leader until nothing more is ready: each drained batch (built, as the sender does) is refused
   * with {@link #TOO_LARGE} if {@code refuses} says so (then it must be split if it has several records, and fail if it
   * has one), else appended at the next offset from 0.
   *
   * @param oneAtATime whether each drain must give one batch (a retry or split is pending in the partition)
   * @return the offset after the last record appended
   */
  private long answerAsALeader(
      RecordAccumulator acc, boolean oneAtATime, java.util.function.Predicate<ProducerBatch> refuses) {
    long offset = 0;
    List<ProducerBatch> drained;
    while (!(drained = acc.drain().batches()).isEmpty()) {
      if (oneAtATime) {
        assertEquals(1, drained.size(), "one at a time while a retry is pending");
      }
      for (ProducerBatch b : drained) {
        acc.close(b);
        if (refuses.test(b)) {
          assertEquals(b.recordCount() > 1, acc.onFailure(b, TOO_LARGE), "split if it has several records");
        } else {
          acc.onSuccess(b, offset, -1L);
          offset += b.recordCount();
        }
      }
    }
    return offset;
  }
}
