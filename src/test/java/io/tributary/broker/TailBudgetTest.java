package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.TestProbe;
import io.tributary.log.TailBudget;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.record.RecordBatchBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node's in-memory tails together stay near {@code tributary.log.tail-total-max-bytes} ({@link TailBudget}) however
 * many partitions are written, every record is still read back (from the journal below a trimmed tail), and a
 * partition's tail bytes go back to the budget when its actor stops.
 */
class TailBudgetTest {
  private static final int BUDGET = 8 * 1024;
  private static final int PARTITIONS = 4;
  private static final int ROUNDS = 6;
  private static final int VALUE_BYTES = 1000;
  private static BrokerNode node;
  private static Gw gw;

  @BeforeAll
  static void start() {
    node = TestNodes.start(TestNodes.tempDataDir(), Map.of("tributary.log.tail-total-max-bytes", BUDGET));
    gw = new Gw(node);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  /**
   * A partition actor that stops (here: its node shuts down, so every partition actor gets PostStop) gives its tail
   * back, not only a deleted partition (whose delete event empties the tail anyway).
   */
  @Test
  void stoppedPartitionActorsGiveTheirTailsBack() {
    BrokerNode other = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    TailBudget budget = TailBudget.get(other.system());
    try {
      Gw otherGw = new Gw(other);
      assertEquals(ErrorCode.NONE, otherGw.create("stopping", 2, Map.of()).error());
      byte[] value = new byte[VALUE_BYTES];
      assertEquals(ErrorCode.NONE, otherGw.produce("stopping", 0, randomBatch(new Random(7), value)).error());
      assertEquals(ErrorCode.NONE, otherGw.produce("stopping", 1, randomBatch(new Random(8), value)).error());
      assertTrue(budget.usedBytes() >= 2L * VALUE_BYTES, "used " + budget.usedBytes());
    } finally {
      other.close();
    }
    assertEquals(0, budget.usedBytes(), "every stopped partition actor gave its tail back");
    assertEquals(0, budget.holders());
  }

  /** One record of random bytes (the leader's LZ4 cannot shrink it, so each batch keeps its size in the tail). */
  private static byte[] randomBatch(Random random, byte[] valueOut) {
    random.nextBytes(valueOut);
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(1_000L, null, valueOut.clone(), null);
    return b.build();
  }

  @Test
  void manyPartitionsShareTheBudgetAndEveryRecordIsReadBack() {
    TailBudget budget = TailBudget.get(node.system());
    assertEquals(BUDGET, budget.maxBytes());
    long usedBefore = budget.usedBytes(); // the internal topics' tails
    int holdersBefore = budget.holders();
    assertEquals(ErrorCode.NONE, gw.create("budget", PARTITIONS, Map.of()).error());
    Random random = new Random(42);
    List<List<byte[]>> written = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      written.add(new ArrayList<>());
    }
    int largestBatch = 0;
    for (int round = 0; round < ROUNDS; round++) {
      for (int p = 0; p < PARTITIONS; p++) {
        byte[] value = new byte[VALUE_BYTES];
        byte[] batch = randomBatch(random, value);
        largestBatch = Math.max(largestBatch, batch.length);
        assertEquals(ErrorCode.NONE, gw.produce("budget", p, batch).error());
        written.get(p).add(value);
      }
    }
    // every partition's tail could hold all it was given (8 MiB each): only the budget keeps them smaller
    long tails = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      long t = gw.status("budget", p).tailBytes();
      assertTrue(t > 0, "partition " + p + " keeps at least its newest batch");
      tails += t;
    }
    long used = budget.usedBytes();
    assertTrue(tails <= used, "the budget counts the partitions' tails: " + tails + " of " + used);
    assertTrue(used <= BUDGET + (long) PARTITIONS * largestBatch,
        "tails " + used + " bytes against a budget of " + BUDGET + " (" + PARTITIONS * ROUNDS * largestBatch
            + " written)");

    for (int p = 0; p < PARTITIONS; p++) {
      List<byte[]> read = new ArrayList<>();
      for (int i = 0; i < 2 * ROUNDS && read.size() < ROUNDS; i++) { // a journal read may stop where the tail begins
        FetchResponse r = gw.fetch("budget", p, read.size(), 1 << 20, 0);
        assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
        for (byte[] b : r.batches()) {
          for (io.tributary.record.Record rec : io.tributary.record.RecordBatch.validate(b)) {
            read.add(rec.value());
          }
        }
      }
      assertEquals(ROUNDS, read.size(), "partition " + p);
      for (int i = 0; i < ROUNDS; i++) {
        assertArrayEquals(written.get(p).get(i), read.get(i), "partition " + p + " offset " + i);
      }
    }

    assertEquals(ErrorCode.NONE, gw.delete("budget").error());
    TestProbe<Object> probe = TestProbe.create(node.system());
    probe.awaitAssert(Duration.ofSeconds(20), () -> {
      assertTrue(budget.usedBytes() <= usedBefore, "a deleted partition's tail goes back to the budget");
      assertTrue(budget.holders() <= holdersBefore, "holders " + budget.holders());
      return null;
    });
  }
}
