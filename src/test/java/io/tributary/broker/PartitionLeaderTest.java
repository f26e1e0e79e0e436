package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.log.PartitionLeader;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceResponse;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Behaviour of the partition leader, through a node's gateway (one node for the class, a topic per test). */
class PartitionLeaderTest {
  private static BrokerNode node;
  private static Gw gw;
  private static final AtomicInteger TOPICS = new AtomicInteger();

  @BeforeAll
  static void start() {
    // a small tail, so that reads of older batches go to the journal
    node = TestNodes.start(TestNodes.tempDataDir(), Map.of("tributary.log.tail-max-bytes", "2 KiB"));
    gw = new Gw(node);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static String newTopic(Map<String, String> configs) {
    String t = "plt-" + TOPICS.incrementAndGet();
    assertEquals(ErrorCode.NONE, gw.create(t, 2, configs).error());
    return t;
  }

  private static List<Record> records(FetchResponse r) {
    List<Record> out = new ArrayList<>();
    for (byte[] b : r.batches()) {
      RecordBatch.validate(b).forEach(out::add);
    }
    return out;
  }

  /** Reads the whole partition from {@code from} up to the high watermark, following fetch responses. */
  private static List<Record> readAll(String topic, int partition, long from) {
    List<Record> out = new ArrayList<>();
    long next = from;
    while (true) {
      FetchResponse r = gw.fetch(topic, partition, next, 4096, 0);
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      if (r.batches().isEmpty()) {
        return out;
      }
      for (Record rec : records(r)) {
        if (rec.offset() >= next) {
          out.add(rec);
        }
      }
      next = out.get(out.size() - 1).offset() + 1;
    }
  }

  @Test
  void offsetsAreDenseAndConcurrentAppendsAreGroupCommitted() {
    String t = newTopic(Map.of());
    int requests = 300;
    List<CompletionStage<ProduceResponse>> acks = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      acks.add(gw.produceAsync(t, 0, Gw.batch("r" + i + "-", 3, 1000)));
    }
    List<Long> bases = new ArrayList<>();
    for (CompletionStage<ProduceResponse> a : acks) {
      ProduceResponse r = a.toCompletableFuture().join();
      assertEquals(ErrorCode.NONE, r.error());
      bases.add(r.baseOffset());
    }
    bases.sort(Long::compare);
    for (int i = 0; i < requests; i++) {
      assertEquals(3L * i, bases.get(i), "base offsets are dense, 3 records per batch");
    }
    List<Record> all = readAll(t, 0, 0);
    assertEquals(3 * requests, all.size());
    for (int i = 0; i < all.size(); i++) {
      assertEquals(i, all.get(i).offset());
    }
    PartitionLeader.PartitionStatus st = gw.status(t, 0);
    assertEquals(3L * requests, st.logEndOffset());
    assertTrue(st.journalWrites() < requests,
        "appends arriving during a persist share the next one: " + st.journalWrites() + " writes for " + requests);
  }

  /**
   * A burst of produce requests (here 4000 at once, as from many producers, or one with {@code acks=0}, which waits
   * for nothing) is stashed by Akka Persistence while the leader persists, and replayed one command at a time, each
   * from the stack of the one before: the leader persists once {@code PartitionLeader.MAX_PENDING_APPENDS} appends are
   * pending, which ends that chain, instead of letting it grow with the burst until the dispatcher thread's stack
   * overflowed (a {@code StackOverflowError} is fatal: the broker's JVM exits; seen with six producers, three of them
   * {@code acks=0}). Every request is answered, every record stored once, in dense offsets.
   */
  @Test
  void aBurstOfProduceRequestsIsAppendedWithoutAnUnboundedReplayChain() {
    String t = newTopic(Map.of());
    int requests = 4000;
    List<byte[]> batches = new ArrayList<>(requests);
    for (int i = 0; i < requests; i++) {
      batches.add(Gw.batchOfSize(200, 1000));
    }
    List<CompletionStage<ProduceResponse>> acks = new ArrayList<>(requests);
    for (byte[] b : batches) {
      acks.add(gw.produceAsync(t, 1, b));
    }
    java.util.Set<Long> bases = new java.util.HashSet<>();
    for (CompletionStage<ProduceResponse> a : acks) {
      ProduceResponse r = a.toCompletableFuture().join();
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      bases.add(r.baseOffset());
    }
    assertEquals(requests, bases.size(), "one offset per batch");
    PartitionLeader.PartitionStatus st = gw.status(t, 1);
    assertEquals(requests, st.logEndOffset());
    assertEquals(requests, readAll(t, 1, 0).size());
  }

  /**
   * An idempotent producer's retry that reaches the leader while its first attempt still waits there (the producer's
   * request timed out first) is answered as a duplicate with the original offset, also when both land in the same
   * group commit: answered OUT_OF_ORDER_SEQUENCE_NUMBER, the producer would re-seal it under a new epoch and write it
   * twice. 300 batches, each sent twice back to back, concurrently (so that many pairs share a flush, as the first
   * test shows appends do).
   */
  @Test
  void aRetrySentWhileItsFirstAttemptWaitsIsAnsweredWithTheOriginalOffset() {
    String t = newTopic(Map.of());
    int batches = 300;
    List<CompletionStage<ProduceResponse>> first = new ArrayList<>();
    List<CompletionStage<ProduceResponse>> retry = new ArrayList<>();
    for (int i = 0; i < batches; i++) {
      byte[] sealed = RecordBatch.withProducerState(Gw.batch("r" + i + "-", 2, 1000), 7L, (short) 0, 2 * i);
      first.add(gw.produceAsync(t, 0, sealed.clone()));
      retry.add(gw.produceAsync(t, 0, sealed.clone()));
    }
    for (int i = 0; i < batches; i++) {
      ProduceResponse a = first.get(i).toCompletableFuture().join();
      ProduceResponse b = retry.get(i).toCompletableFuture().join();
      assertEquals(ErrorCode.NONE, a.error(), a.errorMessage());
      assertEquals(ErrorCode.NONE, b.error(), "batch " + i + "'s retry: " + b.errorMessage());
      assertEquals(2L * i, a.baseOffset());
      assertEquals(2L * i, b.baseOffset(), "the retry is answered with the original offset");
    }
    assertEquals(2L * batches, gw.status(t, 0).logEndOffset(), "every batch stored once");
    List<Record> all = readAll(t, 0, 0);
    for (int i = 0; i < all.size(); i++) {
      assertEquals("r" + (i / 2) + "-" + (i % 2), new String(all.get(i).value(), StandardCharsets.UTF_8));
    }
  }

  /**
   * A retry of a batch appended by an earlier group commit that reaches the leader after its successor's first
   * attempt, in one group commit with it (a producer resending both after a gateway failover while the first attempts
   * still travel), is answered as a duplicate with the original offset, not OUT_OF_ORDER_SEQUENCE_NUMBER (which would
   * make the producer re-seal it under a new epoch and store it twice). Sent pipelined as batch 0, then for each i
   * batch i+1 followed by the retry of batch i, so that many such pairs share a flush whose predecessor appended the
   * original.
   */
  @Test
  void aRetryThatArrivesAfterItsSuccessorIsAnsweredWithTheOriginalOffset() {
    String t = newTopic(Map.of());
    int batches = 300;
    byte[][] sealed = new byte[batches][];
    for (int i = 0; i < batches; i++) {
      sealed[i] = RecordBatch.withProducerState(Gw.batch("r" + i + "-", 2, 1000), 8L, (short) 0, 2 * i);
    }
    List<CompletionStage<ProduceResponse>> first = new ArrayList<>();
    List<CompletionStage<ProduceResponse>> retry = new ArrayList<>();
    first.add(gw.produceAsync(t, 0, sealed[0].clone()));
    for (int i = 0; i < batches; i++) {
      if (i + 1 < batches) {
        first.add(gw.produceAsync(t, 0, sealed[i + 1].clone()));
      }
      retry.add(gw.produceAsync(t, 0, sealed[i].clone()));
    }
    for (int i = 0; i < batches; i++) {
      ProduceResponse a = first.get(i).toCompletableFuture().join();
      ProduceResponse b = retry.get(i).toCompletableFuture().join();
      assertEquals(ErrorCode.NONE, a.error(), a.errorMessage());
      assertEquals(2L * i, a.baseOffset());
      assertEquals(ErrorCode.NONE, b.error(), "batch " + i + "'s retry: " + b.errorMessage());
      assertEquals(2L * i, b.baseOffset(), "the retry is answered with the original offset");
    }
    assertEquals(2L * batches, gw.status(t, 0).logEndOffset(), "every batch stored once");
  }

  @Test
  void fetchAtLogEndLongPollsUntilRecordsArrive() {
    String t = newTopic(Map.of());
    CompletableFuture<FetchResponse> waiting = gw.fetchAsync(t, 1, 0, 60_000).toCompletableFuture();
    assertFalse(waiting.isDone());
    assertEquals(ErrorCode.NONE, gw.produce(t, 1, Gw.batch("x", 2, 1000)).error());
    FetchResponse r = waiting.join();
    assertEquals(ErrorCode.NONE, r.error());
    assertEquals(2, r.highWatermark());
    assertEquals(2, records(r).size());
  }

  @Test
  void fetchAtLogEndWithoutWaitAnswersEmpty() {
    String t = newTopic(Map.of());
    FetchResponse r = gw.fetch(t, 0, 0, 1024, 0);
    assertEquals(ErrorCode.NONE, r.error());
    assertTrue(r.batches().isEmpty());
    assertEquals(0, r.highWatermark());
  }

  @Test
  void fetchPastLogEndOrNegativeFailsWithOffsetOutOfRange() {
    String t = newTopic(Map.of());
    gw.produce(t, 0, Gw.batch("x", 5, 1000));
    assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, gw.fetch(t, 0, 6, 1024, 0).error());
    assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, gw.fetch(t, 0, -1, 1024, 0).error());
    assertEquals(ErrorCode.INVALID_FETCH_SIZE, gw.fetch(t, 0, 0, 0, 0).error());
  }

  @Test
  void unknownTopicPartitionAndInvalidNamesAreTypedErrors() {
    String t = newTopic(Map.of());
    assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.produce("no-such-topic", 0, Gw.batch("x", 1, 1)).error());
    assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.fetch("no-such-topic", 0, 0, 100, 0).error());
    assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.produce(t, 2, Gw.batch("x", 1, 1)).error());
    assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.produce(t, -1, Gw.batch("x", 1, 1)).error());
    assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, gw.produce("bad/name", 0, Gw.batch("x", 1, 1)).error());
    assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, gw.fetch("..", 0, 0, 100, 0).error());
  }

  @Test
  void oversizedBatchIsRejectedAndNothingIsWritten() {
    String t = newTopic(Map.of("max.message.bytes", "1000"));
    assertEquals(ErrorCode.NONE, gw.produce(t, 0, Gw.batch("keep", 1, 1000)).error());
    ProduceResponse r = gw.produce(t, 0, Gw.batchOfSize(2000, 1000));
    assertEquals(ErrorCode.MESSAGE_TOO_LARGE, r.error());
    assertEquals(1, gw.status(t, 0).logEndOffset());
    assertEquals("keep0", new String(readAll(t, 0, 0).get(0).value(), StandardCharsets.UTF_8));
  }

  @Test
  void corruptOrGarbageBatchesAreRejectedAndStoredDataIsIntact() {
    String t = newTopic(Map.of());
    assertEquals(ErrorCode.NONE, gw.produce(t, 0, Gw.batch("keep", 3, 1000)).error());
    byte[] flipped = Gw.batch("bad", 3, 1000);
    flipped[flipped.length - 2] ^= 0x55;
    assertEquals(ErrorCode.CORRUPT_MESSAGE, gw.produce(t, 0, flipped).error());
    byte[] garbage = new byte[200];
    new java.util.Random(7).nextBytes(garbage);
    ErrorCode g = gw.produce(t, 0, garbage).error();
    assertTrue(g == ErrorCode.CORRUPT_MESSAGE || g == ErrorCode.INVALID_RECORD, g.toString());
    assertEquals(ErrorCode.CORRUPT_MESSAGE, gw.produce(t, 0, new byte[0]).error());
    assertEquals(3, gw.status(t, 0).logEndOffset());
    List<Record> all = readAll(t, 0, 0);
    assertEquals(3, all.size());
    assertArrayEquals("keep2".getBytes(StandardCharsets.UTF_8), all.get(2).value());
  }

  @Test
  void invalidAcksIsRejected() {
    String t = newTopic(Map.of());
    ProduceResponse r = gw.ask(rt -> new io.tributary.protocol.ProduceRequest(
        io.tributary.protocol.ProtocolVersions.CURRENT, t, 0, (short) 2, 1000, Gw.batch("x", 1, 1), rt));
    assertEquals(ErrorCode.INVALID_REQUIRED_ACKS, r.error());
  }

  @Test
  void olderBatchesAreReadBackFromTheJournalInOrder() {
    String t = newTopic(Map.of());
    for (int i = 0; i < 50; i++) {
      assertEquals(ErrorCode.NONE, gw.produce(t, 0, Gw.batch("v" + i + "-", 10, 1000 + i)).error());
    }
    // the tail holds 2 KiB: offset 0 is only in the journal
    List<Record> all = readAll(t, 0, 0);
    assertEquals(500, all.size());
    for (int i = 0; i < 500; i++) {
      assertEquals(i, all.get(i).offset());
      assertEquals("v" + (i / 10) + "-" + (i % 10), new String(all.get(i).value(), StandardCharsets.UTF_8));
    }
    // a fetch from the middle of a batch returns that whole batch first
    FetchResponse mid = gw.fetch(t, 0, 123, 100, 0);
    assertEquals(120, RecordBatch.wrap(mid.batches().get(0)).baseOffset());
  }

  @Test
  void aJournalReadNeverSkipsABatchThatDidNotFitForASmallerOneAfterIt() {
    Gw gw = new Gw(node);
    assertEquals(ErrorCode.NONE, gw.create("mixed", 1, Map.of()).error());
    // small, large, small, ... : the in-memory tail (2 KiB) holds only the newest, so offset 0 is read from the journal
    for (int i = 0; i < 20; i++) {
      ProduceResponse r = gw.produce("mixed", 0, Gw.batchOfSize(i % 2 == 0 ? 100 : 3000, 1000L));
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
    }
    long offset = 0;
    while (offset < 20) {
      FetchResponse f = gw.fetch("mixed", 0, offset, 2000, 0); // room for a small batch, not for a large one after it
      assertEquals(ErrorCode.NONE, f.error(), f.errorMessage());
      assertFalse(f.batches().isEmpty());
      for (byte[] b : f.batches()) {
        RecordBatch batch = RecordBatch.wrap(b);
        assertEquals(offset, batch.baseOffset(), "batches are returned without gaps");
        offset = batch.nextOffset();
      }
    }
  }

  @Test
  void listOffsetsAnswersEarliestLatestAndByTimestamp() {
    String t = newTopic(Map.of());
    for (int i = 0; i < 40; i++) {
      gw.produce(t, 0, Gw.batch("x", 5, 10_000L + 1000L * i));
    }
    assertEquals(0, gw.listOffsets(t, 0, ListOffsetsRequest.EARLIEST_TIMESTAMP).offset());
    assertEquals(200, gw.listOffsets(t, 0, ListOffsetsRequest.LATEST_TIMESTAMP).offset());
    ListOffsetsResponse old = gw.listOffsets(t, 0, 10_500L); // in the journal (small tail)
    assertEquals(5, old.offset());
    assertEquals(11_000L, old.timestamp());
    ListOffsetsResponse recent = gw.listOffsets(t, 0, 48_999L);
    assertEquals(195, recent.offset());
    assertEquals(200, gw.listOffsets(t, 0, 1_000_000L).offset(), "after every record: the log end");
    assertEquals(ErrorCode.INVALID_REQUEST, gw.listOffsets(t, 0, -5).error());
  }
}
