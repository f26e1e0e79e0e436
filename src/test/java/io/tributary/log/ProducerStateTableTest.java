package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.log.ProducerStateTable.Check;
import io.tributary.log.ProducerStateTable.InvalidProducerStateException;
import io.tributary.log.ProducerStateTable.Result;
import io.tributary.protocol.ErrorCode;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ProducerStateTableTest {

  private static final long PID = 4242L;
  private static final short EPOCH = 0;

  /** A log of one partition: appends batches of {@code records} records and feeds the table as a leader would. */
  private static final class Log {
    final ProducerStateTable table = new ProducerStateTable();
    long nextOffset;

    /** Checks, and appends if told so; returns the check. */
    Check produce(long pid, short epoch, int baseSeq, int records, long timestampMs) {
      int lastSeq = ProducerStateTable.incrementSequence(baseSeq, records - 1);
      Check c = table.check(pid, epoch, baseSeq, lastSeq);
      if (c.result() == Result.APPEND) {
        long base = nextOffset;
        nextOffset += records;
        table.onAppended(pid, epoch, baseSeq, lastSeq, base, nextOffset - 1, timestampMs);
      }
      return c;
    }
  }

  @Test
  void inOrderBatchesAreAppended() {
    Log log = new Log();
    int seq = 0;
    for (int i = 0; i < 20; i++) {
      Check c = log.produce(PID, EPOCH, seq, 3, 1000 + i);
      assertEquals(Result.APPEND, c.result(), "batch " + i);
      assertEquals(ErrorCode.NONE, c.errorCode());
      seq += 3;
    }
    assertEquals(60, log.nextOffset);
    assertEquals(1, log.table.size());
    assertEquals(59, log.table.lastSequence(PID));
    assertEquals(EPOCH, log.table.producerEpoch(PID));
  }

  @Test
  void nonIdempotentBatchesAreAlwaysAppendedAndNotRemembered() {
    Log log = new Log();
    for (int i = 0; i < 3; i++) {
      assertEquals(Result.APPEND, log.produce(ProducerStateTable.NO_PRODUCER_ID, (short) -1, -1, 2, 0).result());
    }
    assertEquals(0, log.table.size());
  }

  @Test
  void retriesOfEachOfTheLastFiveBatchesAreDuplicatesWithTheirOriginalOffsets() {
    Log log = new Log();
    long[] baseOffsets = new long[8];
    for (int i = 0; i < 8; i++) {
      baseOffsets[i] = log.nextOffset;
      assertEquals(Result.APPEND, log.produce(PID, EPOCH, i * 2, 2, 0).result());
    }
    long end = log.nextOffset;
    for (int i = 3; i < 8; i++) {
      Check c = log.produce(PID, EPOCH, i * 2, 2, 0);
      assertEquals(Result.DUPLICATE, c.result(), "batch " + i);
      assertEquals(ErrorCode.NONE, c.errorCode(), "a duplicate is answered as a success");
      assertEquals(baseOffsets[i], c.baseOffset());
      assertEquals(baseOffsets[i] + 1, c.lastOffset());
    }
    assertEquals(end, log.nextOffset, "nothing appended twice");
  }

  @Test
  void aRetryOlderThanTheWindowIsOutOfOrder() {
    Log log = new Log();
    for (int i = 0; i < 6; i++) {
      log.produce(PID, EPOCH, i, 1, 0);
    }
    Check c = log.produce(PID, EPOCH, 0, 1, 0); // batch 0 fell out of the window of 5
    assertEquals(Result.OUT_OF_ORDER_SEQUENCE, c.result());
    assertEquals(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, c.errorCode());
    assertNotNull(c.message());
  }

  @Test
  void gapsAndOverlapsAreOutOfOrder() {
    Log log = new Log();
    log.produce(PID, EPOCH, 0, 5, 0);
    assertEquals(Result.OUT_OF_ORDER_SEQUENCE, log.produce(PID, EPOCH, 6, 1, 0).result(), "gap");
    assertEquals(Result.OUT_OF_ORDER_SEQUENCE, log.produce(PID, EPOCH, 3, 2, 0).result(), "overlap");
    assertEquals(
        Result.OUT_OF_ORDER_SEQUENCE, log.produce(PID, EPOCH, 0, 2, 0).result(), "same start, other length");
    assertEquals(Result.OUT_OF_ORDER_SEQUENCE, log.produce(PID, EPOCH, -1, 1, 0).result(), "negative");
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, 5, 1, 0).result());
    assertEquals(6, log.nextOffset);
  }

  @Test
  void anUnknownProducerMustStartAtZero() {
    Log log = new Log();
    Check c = log.produce(PID, EPOCH, 7, 1, 0);
    assertEquals(Result.UNKNOWN_PRODUCER_ID, c.result());
    assertEquals(ErrorCode.UNKNOWN_PRODUCER_ID, c.errorCode());
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, 0, 1, 0).result());
  }

  @Test
  void aHigherEpochRestartsSequencesAndFencesTheOlderOne() {
    Log log = new Log();
    log.produce(PID, (short) 0, 0, 3, 0);
    log.produce(PID, (short) 0, 3, 3, 0);
    assertEquals(Result.OUT_OF_ORDER_SEQUENCE, log.produce(PID, (short) 1, 6, 1, 0).result(), "must restart at 0");
    assertEquals(Result.APPEND, log.produce(PID, (short) 1, 0, 2, 0).result());
    assertEquals(1, log.table.producerEpoch(PID));
    Check old = log.produce(PID, (short) 0, 6, 1, 0);
    assertEquals(Result.INVALID_PRODUCER_EPOCH, old.result());
    assertEquals(ErrorCode.INVALID_PRODUCER_EPOCH, old.errorCode());
    assertEquals(Result.INVALID_PRODUCER_EPOCH, log.produce(PID, (short) 0, 3, 3, 0).result(), "no old duplicate");
    assertEquals(Result.APPEND, log.produce(PID, (short) 1, 2, 1, 0).result());
  }

  @Test
  void sequencesWrapAtIntegerMaxValue() {
    Log log = new Log();
    int start = Integer.MAX_VALUE - 4;
    log.table.markStateMayBeIncomplete(); // lets an unknown producer start anywhere
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, start, 3, 0).result()); // MAX-4 .. MAX-2
    assertEquals(Integer.MAX_VALUE - 2, log.table.lastSequence(PID));
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, Integer.MAX_VALUE - 1, 4, 0).result()); // MAX-1, MAX, 0, 1
    assertEquals(1, log.table.lastSequence(PID));
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, 2, 1, 0).result());
    Check dup = log.produce(PID, EPOCH, Integer.MAX_VALUE - 1, 4, 0);
    assertEquals(Result.DUPLICATE, dup.result());
    assertEquals(3, dup.baseOffset());
    assertEquals(0, ProducerStateTable.incrementSequence(Integer.MAX_VALUE, 1));
    assertEquals(5, ProducerStateTable.incrementSequence(Integer.MAX_VALUE - 2, 8));
    assertEquals(10, ProducerStateTable.incrementSequence(3, 7));
  }

  @Test
  void truncationForgetsTheLostSuffix() {
    Log log = new Log();
    long other = 99L;
    log.produce(PID, EPOCH, 0, 2, 0); // offsets 0-1
    log.produce(PID, EPOCH, 2, 2, 0); // 2-3
    log.produce(other, EPOCH, 0, 2, 0); // 4-5
    log.produce(PID, EPOCH, 4, 2, 0); // 6-7
    log.table.truncateTo(4);
    log.nextOffset = 4;
    assertEquals(1, log.table.size(), "the other producer had only lost batches");
    assertEquals(3, log.table.lastSequence(PID));
    assertTrue(log.table.stateMayBeIncomplete());
    // the producer's retry of the lost batch is appended again, at the new end of the log
    assertEquals(Result.APPEND, log.produce(PID, EPOCH, 4, 2, 0).result());
    assertEquals(4, log.table.check(PID, EPOCH, 4, 5).baseOffset());
    // the forgotten producer retries with its old sequence: accepted since state was lost
    assertEquals(Result.APPEND, log.produce(other, EPOCH, 0, 2, 0).result());
    assertEquals(Result.APPEND, log.table.check(77L, EPOCH, 12, 12).result(), "any unknown producer now");
  }

  @Test
  void truncationThatForgetsNobodyKeepsTheStrictRule() {
    Log log = new Log();
    log.produce(PID, EPOCH, 0, 2, 0);
    log.produce(PID, EPOCH, 2, 2, 0);
    log.table.truncateTo(2);
    assertFalse(log.table.stateMayBeIncomplete());
    assertEquals(Result.UNKNOWN_PRODUCER_ID, log.table.check(77L, EPOCH, 12, 12).result());
  }

  @Test
  void producersExpireAfterTheirLastAppend() {
    Log log = new Log();
    log.produce(1L, EPOCH, 0, 1, 1_000);
    log.produce(2L, EPOCH, 0, 1, 5_000);
    log.produce(1L, EPOCH, 1, 1, 2_000);
    log.table.expire(11_999, 10_000);
    assertEquals(2, log.table.size());
    log.table.expire(12_000, 10_000);
    assertEquals(1, log.table.size());
    assertEquals(-1, log.table.lastSequence(1L));
    assertEquals(Result.UNKNOWN_PRODUCER_ID, log.produce(1L, EPOCH, 2, 1, 13_000).result());
    assertEquals(Result.APPEND, log.produce(2L, EPOCH, 1, 1, 13_000).result());
  }

  @Test
  void bytesRoundTrip() {
    Log log = new Log();
    for (long pid = 1; pid <= 4; pid++) {
      for (int i = 0; i < (int) pid * 2; i++) {
        log.produce(pid, (short) pid, i * 3, 3, 1000 * pid + i);
      }
    }
    log.table.truncateTo(log.nextOffset - 1); // forgets nobody, trims the last batch, sets nothing
    byte[] bytes = log.table.toBytes();
    ProducerStateTable copy = ProducerStateTable.fromBytes(bytes);
    assertEquals(log.table.size(), copy.size());
    assertEquals(log.table.stateMayBeIncomplete(), copy.stateMayBeIncomplete());
    assertTrue(Arrays.equals(bytes, copy.toBytes()), "same bytes again");
    for (long pid = 1; pid <= 4; pid++) {
      assertEquals(log.table.producerEpoch(pid), copy.producerEpoch(pid));
      assertEquals(log.table.lastSequence(pid), copy.lastSequence(pid));
      int last = log.table.lastSequence(pid);
      assertEquals(log.table.check(pid, (short) pid, last - 2, last), copy.check(pid, (short) pid, last - 2, last));
      assertEquals(
          log.table.check(pid, (short) pid, last + 1, last + 1), copy.check(pid, (short) pid, last + 1, last + 1));
    }
    copy.expire(Long.MAX_VALUE, 0);
    assertEquals(0, copy.size());
    log.table.markStateMayBeIncomplete();
    assertTrue(ProducerStateTable.fromBytes(log.table.toBytes()).stateMayBeIncomplete());
    assertEquals(0, ProducerStateTable.fromBytes(new ProducerStateTable().toBytes()).size());
  }

  @Test
  void garbageBytesAreRejectedWithATypedException() {
    Log log = new Log();
    log.produce(PID, EPOCH, 0, 2, 0);
    log.produce(PID + 1, EPOCH, 0, 2, 0);
    byte[] good = log.table.toBytes();
    assertThrows(InvalidProducerStateException.class, () -> ProducerStateTable.fromBytes(null));
    assertThrows(InvalidProducerStateException.class, () -> ProducerStateTable.fromBytes(new byte[0]));
    for (int n = 0; n < good.length; n++) {
      byte[] cut = Arrays.copyOf(good, n);
      assertThrows(InvalidProducerStateException.class, () -> ProducerStateTable.fromBytes(cut), "length " + n);
    }
    byte[] longer = Arrays.copyOf(good, good.length + 1);
    assertThrows(InvalidProducerStateException.class, () -> ProducerStateTable.fromBytes(longer));
    for (int i = 0; i < good.length; i++) {
      byte[] flipped = good.clone();
      flipped[i] ^= 0x10;
      assertThrows(InvalidProducerStateException.class, () -> ProducerStateTable.fromBytes(flipped), "byte " + i);
    }
    Random random = new Random(42);
    for (int i = 0; i < 1000; i++) {
      byte[] noise = new byte[random.nextInt(200)];
      random.nextBytes(noise);
      try {
        ProducerStateTable.fromBytes(noise);
      } catch (IllegalArgumentException expected) {
        assertTrue(expected instanceof InvalidProducerStateException);
      }
    }
  }
}
