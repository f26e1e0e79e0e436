package io.tributary.client;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads records from partitions, as Kafka's {@code KafkaConsumer} with manual assignment (consumer groups come
 * later). Not thread-safe: use one consumer from one thread.
 *
 * <p>The consumer keeps a position (the next offset to read) per assigned partition and fetches ahead in the
 * background (long polls of {@code fetch.max.wait.ms}). Records come in offset order per partition, never above the
 * high watermark. Settings: {@code max.poll.records} (500), {@code fetch.max.wait.ms} (500),
 * {@code max.partition.fetch.bytes} (1048576), {@code auto.offset.reset} (earliest|latest|none, default latest),
 * {@code request.timeout.ms} (30000), {@code default.api.timeout.ms} (60000).
 */
public interface Consumer<K, V> extends AutoCloseable {
  /**
   * Replaces the assignment with {@code partitions}. Positions of partitions kept stay; new ones start per
   * {@code auto.offset.reset} on first poll unless {@link #seek} sets them.
   */
  void assign(Collection<TopicPartition> partitions);

  /** The current assignment. */
  Set<TopicPartition> assignment();

  /**
   * Sets the position of an assigned partition. An offset out of range is detected on the next fetch and handled by
   * {@code auto.offset.reset}.
   *
   * @throws IllegalArgumentException if {@code offset} is negative
   * @throws IllegalStateException if the partition is not assigned
   */
  void seek(TopicPartition partition, long offset);

  /**
   * Moves the positions to the log start offsets, looked up lazily by the next {@link #poll} or {@link #position}. An
   * empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  void seekToBeginning(Collection<TopicPartition> partitions);

  /**
   * Moves the positions to the high watermarks (only records written from now on are read), looked up lazily by the
   * next {@link #poll} or {@link #position}. An empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  void seekToEnd(Collection<TopicPartition> partitions);

  /**
   * The position (next offset to read) of an assigned partition, looking it up if not yet known.
   *
   * @throws IllegalStateException if the partition is not assigned
   * @throws TributaryException with OFFSET_OUT_OF_RANGE when {@code auto.offset.reset=none} and no position is set
   */
  long position(TopicPartition partition);

  /**
   * Returns the records available now, waiting up to {@code timeout} for some. At most {@code max.poll.records}.
   *
   * @return records in offset order per partition; empty if none arrived in time
   * @throws TributaryException OFFSET_OUT_OF_RANGE when a position is out of range and {@code auto.offset.reset=none};
   *     UNKNOWN_TOPIC_OR_PARTITION if an assigned topic does not exist (after retrying for the timeout)
   * @throws IllegalStateException if no partition is assigned
   */
  List<ConsumerRecord<K, V>> poll(Duration timeout);

  /** The log start offsets of the partitions. */
  Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions);

  /** The high watermarks (log end offsets as a consumer sees them) of the partitions. */
  Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions);

  /** The number of partitions of {@code topic}. */
  int partitionsFor(String topic);

  /** Releases resources. Idempotent. */
  @Override
  void close();
}
