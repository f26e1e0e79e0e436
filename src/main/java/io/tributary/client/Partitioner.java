package io.tributary.client;

import io.tributary.record.Murmur2;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The producer's default partitioner, as Kafka's: an explicit partition wins; else a key goes to {@code
 * toPositive(murmur2(key)) % partitions} ({@link Murmur2#partitionForKey}, so the same key lands in the same
 * partition as with Kafka); else the record goes to the topic's current <em>sticky</em> partition, which moves to
 * another (random) partition each time a new batch would be needed for it — i.e. when its batch was sent or filled (as
 * Kafka's {@code StickyPartitionCache} with {@code abortOnNewBatch}).
 *
 * <p>Thread-safe.
 */
final class Partitioner {

  private final Map<String, AtomicInteger> sticky = new ConcurrentHashMap<>();

  /** The partition of a record with a non-null key: as Kafka's {@code BuiltInPartitioner.partitionForKey}. */
  static int partitionForKey(byte[] keyBytes, int numPartitions) {
    return Murmur2.partitionForKey(keyBytes, numPartitions);
  }

  /**
   * The current sticky partition of {@code topic}, chosen at random the first time (or when the partition count
   * shrank under it).
   */
  int stickyPartition(String topic, int numPartitions) {
    AtomicInteger current = sticky.get(topic);
    if (current == null) {
      current = sticky.computeIfAbsent(topic, t -> new AtomicInteger(random(numPartitions)));
    }
    int partition = current.get();
    if (partition >= numPartitions) {
      int replacement = random(numPartitions);
      partition = current.compareAndSet(partition, replacement) ? replacement : current.get() % numPartitions;
    }
    return partition;
  }

  /** Whether {@code partition} is the current sticky partition of {@code topic} (records without a key go there). */
  boolean isSticky(String topic, int partition) {
    AtomicInteger current = sticky.get(topic);
    return current != null && current.get() == partition;
  }

  /**
   * A new batch would be needed for {@code previous}: move the sticky partition of {@code topic} to another one, unless
   * another thread already moved it.
   */
  void onNewBatch(String topic, int previous, int numPartitions) {
    AtomicInteger current = sticky.get(topic);
    if (current == null || current.get() != previous || numPartitions <= 1) {
      return;
    }
    int next = ThreadLocalRandom.current().nextInt(numPartitions - 1);
    if (next >= previous) {
      next++;
    }
    current.compareAndSet(previous, next);
  }

  private static int random(int numPartitions) {
    return ThreadLocalRandom.current().nextInt(numPartitions);
  }
}
