package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.record.Murmur2;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PartitionerTest {

  @Test
  void sameKeyGoesToTheSamePartitionAsMurmur2() {
    for (int n = 1; n <= 16; n++) {
      for (int i = 0; i < 100; i++) {
        byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
        int p = Partitioner.partitionForKey(key, n);
        assertEquals(p, Partitioner.partitionForKey(key.clone(), n));
        assertEquals((Murmur2.murmur2(key) & 0x7fffffff) % n, p);
      }
    }
  }

  @Test
  void kafkaVectorLandsWhereKafkaPutsIt() {
    // Kafka: Utils.toPositive(Utils.murmur2("foobar".getBytes())) % 7, murmur2("foobar") = -790332482
    assertEquals((-790332482 & 0x7fffffff) % 7, Partitioner.partitionForKey("foobar".getBytes(StandardCharsets.UTF_8), 7));
  }

  @Test
  void stickyPartitionStaysUntilANewBatchIsNeeded() {
    Partitioner partitioner = new Partitioner();
    int first = partitioner.stickyPartition("t", 8);
    for (int i = 0; i < 10; i++) {
      assertEquals(first, partitioner.stickyPartition("t", 8));
    }
    partitioner.onNewBatch("t", first, 8);
    int second = partitioner.stickyPartition("t", 8);
    assertNotEquals(first, second);
    // a late onNewBatch for the old partition does not move it again
    partitioner.onNewBatch("t", first, 8);
    assertEquals(second, partitioner.stickyPartition("t", 8));
  }

  @Test
  void stickyPartitionVisitsEveryPartitionOverTime() {
    Partitioner partitioner = new Partitioner();
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 500; i++) {
      int p = partitioner.stickyPartition("t", 4);
      assertTrue(p >= 0 && p < 4);
      seen.add(p);
      partitioner.onNewBatch("t", p, 4);
    }
    assertEquals(Set.of(0, 1, 2, 3), seen);
  }

  @Test
  void singlePartitionTopicsStayOnPartitionZero() {
    Partitioner partitioner = new Partitioner();
    assertEquals(0, partitioner.stickyPartition("one", 1));
    partitioner.onNewBatch("one", 0, 1);
    assertEquals(0, partitioner.stickyPartition("one", 1));
  }

  @Test
  void stickyPartitionFollowsAShrunkPartitionCount() {
    Partitioner partitioner = new Partitioner();
    int p = partitioner.stickyPartition("t", 1000);
    int q = partitioner.stickyPartition("t", 2);
    assertTrue(q >= 0 && q < 2, "was " + p + " then " + q);
  }
}
