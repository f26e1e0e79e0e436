package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link TailBudget} with {@link PartitionLog}s directly: the fair share, giving bytes back, the config value. */
class TailBudgetUnitTest {

  private static long nextOffset;

  private static RecordBatch batch(int valueBytes) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(1000L, null, new byte[valueBytes], null);
    RecordBatch batch = RecordBatch.wrap(b.build());
    batch.setBaseOffset(nextOffset++);
    return batch;
  }

  private static PartitionLog log(TailBudget budget, long tailMaxBytes) {
    PartitionLog log = new PartitionLog(1, tailMaxBytes, budget);
    log.applyCreated("id", null, 1);
    return log;
  }

  @Test
  void withinTheBudgetAPartitionKeepsItsOwnCap() {
    TailBudget budget = new TailBudget(1 << 20);
    PartitionLog a = log(budget, 10_000);
    for (int i = 0; i < 20; i++) {
      a.applyAppended(batch(1000));
    }
    assertTrue(a.tailBytes() <= 10_000 && a.tailBytes() > 8_000, "own cap, not the budget: " + a.tailBytes());
    assertEquals(a.tailBytes(), budget.usedBytes());
  }

  @Test
  void beyondTheBudgetAnAppendingPartitionTrimsToItsFairShare() {
    TailBudget budget = new TailBudget(6_000);
    PartitionLog a = log(budget, 1 << 20);
    PartitionLog b = log(budget, 1 << 20);
    PartitionLog c = log(budget, 1 << 20);
    for (int i = 0; i < 10; i++) {
      a.applyAppended(batch(900));
      b.applyAppended(batch(900));
      c.applyAppended(batch(900));
    }
    assertEquals(3, budget.holders());
    assertEquals(a.tailBytes() + b.tailBytes() + c.tailBytes(), budget.usedBytes());
    long oneBatch = batch(900).sizeInBytes();
    for (PartitionLog l : new PartitionLog[] {a, b, c}) {
      assertTrue(l.tailBytes() <= 2_000 + oneBatch, "fair share of 6000 / 3, and the newest batch: " + l.tailBytes());
    }
    assertTrue(budget.usedBytes() <= 6_000 + 3 * oneBatch, "used " + budget.usedBytes());
  }

  @Test
  void droppingTruncatingAndDeletingGiveTheBytesBack() {
    TailBudget budget = new TailBudget(1 << 20);
    PartitionLog a = log(budget, 1 << 20);
    PartitionLog b = log(budget, 1 << 20);
    long start = nextOffset;
    for (int i = 0; i < 5; i++) {
      a.applyAppended(batch(100));
    }
    b.applyAppended(batch(100));
    a.applyTruncated(start + 3); // the last two batches go
    assertEquals(a.tailBytes() + b.tailBytes(), budget.usedBytes());
    a.dropTail();
    assertEquals(1, budget.holders());
    b.applyDeleted();
    assertEquals(0, budget.usedBytes());
    assertEquals(0, budget.holders());
    a.dropTail(); // twice: nothing more to give back
    assertEquals(0, budget.usedBytes());
  }

  @Test
  void theConfigGivesASizeOrAQuarterOfTheHeap() {
    assertEquals(256L << 20, TailBudget.fromConfig(ConfigFactory.parseMap(
        Map.of(TailBudget.CONFIG_KEY, "auto")), 1L << 30));
    assertEquals(256L << 20, TailBudget.fromConfig(ConfigFactory.parseMap(
        Map.of(TailBudget.CONFIG_KEY, "AUTO")), 1L << 30), "auto in any case (a newcomer wrote AUTO)");
    assertEquals(256L << 20, TailBudget.fromConfig(ConfigFactory.empty(), 1L << 30));
    assertEquals(64L << 20, TailBudget.fromConfig(ConfigFactory.parseMap(
        Map.of(TailBudget.CONFIG_KEY, "64 MiB")), 1L << 30));
    assertThrows(ConfigException.class, () -> TailBudget.fromConfig(ConfigFactory.parseMap(
        Map.of(TailBudget.CONFIG_KEY, "-1")), 1L << 30));
    assertThrows(ConfigException.class, () -> TailBudget.fromConfig(ConfigFactory.parseMap(
        Map.of(TailBudget.CONFIG_KEY, "lots")), 1L << 30));
  }
}
