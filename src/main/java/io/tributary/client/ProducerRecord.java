package io.tributary.client;

import io.tributary.record.Header;
import java.util.List;

/**
 * A record to send, as Kafka's {@code ProducerRecord}.
 *
 * @param topic the topic
 * @param partition the partition, or {@code null} to let the partitioner choose (murmur2 of the key; sticky batches
 *     for a null key)
 * @param timestamp ms since the epoch, or {@code null} for the producer's current time
 * @param key the key, may be {@code null}
 * @param value the value, may be {@code null}
 * @param headers headers, never {@code null} (use {@link List#of()})
 */
public record ProducerRecord<K, V>(
    String topic, Integer partition, Long timestamp, K key, V value, List<Header> headers) {

  public ProducerRecord {
    if (topic == null) {
      throw new IllegalArgumentException("topic must not be null");
    }
    if (partition != null && partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0, was " + partition);
    }
    if (timestamp != null && timestamp < 0) {
      throw new IllegalArgumentException("timestamp must be >= 0, was " + timestamp);
    }
    headers = headers == null ? List.of() : List.copyOf(headers);
  }

  /** A record with a key, partitioned by key. */
  public ProducerRecord(String topic, K key, V value) {
    this(topic, null, null, key, value, List.of());
  }

  /** A record without key (sticky partitioning). */
  public ProducerRecord(String topic, V value) {
    this(topic, null, null, null, value, List.of());
  }

  /** A record for a given partition. */
  public ProducerRecord(String topic, Integer partition, K key, V value) {
    this(topic, partition, null, key, value, List.of());
  }
}
