package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The replication side of {@link PartitionLog}: the leader epoch cache, Kafka's end-offset-for-epoch lookup that
 * drives follower truncation, the truncation itself (index, tail, epochs, high watermark), and the rule by which
 * journal readers skip the batches a truncation discarded.
 */
class PartitionLogTest {

  private static RecordBatch batch(long baseOffset, int epoch, int records) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    for (int i = 0; i < records; i++) {
      b.append(1000L + i, null, new byte[] {(byte) i}, null);
    }
    RecordBatch batch = RecordBatch.wrap(b.build());
    batch.setBaseOffset(baseOffset);
    batch.setPartitionLeaderEpoch(epoch);
    return batch;
  }

  private static PartitionLog log() {
    PartitionLog log = new PartitionLog(1, 1 << 20); // a chunk per batch, everything in the tail
    log.applyCreated("id", null, 1);
    return log;
  }

  @Test
  void epochCacheRecordsWhereEachEpochStarts() {
    PartitionLog log = log();
    log.applyAppended(batch(0, 0, 10));
    log.applyAppended(batch(10, 0, 10));
    log.applyAppended(batch(20, 2, 5));
    assertEquals(List.of(new PartitionLog.EpochEntry(0, 0), new PartitionLog.EpochEntry(2, 20)), log.epochs());
    assertEquals(2, log.latestEpoch());
    // as Kafka's OffsetsForLeaderEpoch: epoch 0 ends where epoch 2 starts; an epoch never written maps to the
    // largest one below it; the latest epoch ends at the log end offset
    assertArrayEquals(new long[] {0, 20}, log.endOffsetForEpoch(0));
    assertArrayEquals(new long[] {0, 20}, log.endOffsetForEpoch(1));
    assertArrayEquals(new long[] {2, 25}, log.endOffsetForEpoch(2));
    assertArrayEquals(new long[] {2, 25}, log.endOffsetForEpoch(7));
    assertArrayEquals(new long[] {-1, -1}, log().endOffsetForEpoch(0));
  }

  @Test
  void truncationDropsTheSuffixAndItsEpochsAndReadersSkipTheDiscardedBatches() {
    PartitionLog log = log();
    log.applyAppended(batch(0, 0, 10));   // seqNr 2
    log.applyAppended(batch(10, 1, 10));  // seqNr 3, written by a leader whose epoch 1 the new leader never had
    log.setHighWatermark(10);
    log.applyTruncated(10);               // seqNr 4
    assertEquals(10, log.logEndOffset());
    assertEquals(10, log.highWatermark());
    assertEquals(List.of(new PartitionLog.EpochEntry(0, 0)), log.epochs());
    assertEquals(1, log.index().chunkCount());
    assertEquals(1, log.readTail(0, 1 << 20, log.logEndOffset()).size());

    log.applyAppended(batch(10, 2, 4));   // seqNr 5: the new leader's records at the same offsets
    assertEquals(14, log.logEndOffset());
    assertEquals(2, log.latestEpoch());
    List<PartitionLog.Truncation> t = log.truncations();
    assertEquals(List.of(new PartitionLog.Truncation(10, 4)), t);
    assertTrue(LogReader.isDead(t, 3, 10), "the discarded batch");
    assertFalse(LogReader.isDead(t, 2, 0), "a batch below the truncation point");
    assertFalse(LogReader.isDead(t, 5, 10), "the new leader's batch");

    // a snapshot keeps epochs and truncations
    PartitionLog restored = new PartitionLog(1, 1 << 20);
    restored.applySnapshot(log.toSnapshot());
    assertEquals(log.epochs(), restored.epochs());
    assertEquals(log.truncations(), restored.truncations());
    assertEquals(14, restored.logEndOffset());
  }

  @Test
  void truncationAtOrBeyondTheLogEndChangesNothing() {
    PartitionLog log = log();
    log.applyAppended(batch(0, 0, 10));
    log.applyTruncated(10);
    assertEquals(10, log.logEndOffset());
    assertTrue(log.truncations().isEmpty());
  }

  @Test
  void highWatermarkStaysWithinTheLog() {
    PartitionLog log = log();
    log.applyAppended(batch(0, 0, 10));
    log.setHighWatermark(50);
    assertEquals(10, log.highWatermark());
    log.setHighWatermark(4);
    assertEquals(4, log.highWatermark());
  }
}
