package io.tributary.client;

import io.tributary.record.Header;
import java.util.List;

/**
 * A record read by a consumer, as Kafka's {@code ConsumerRecord}.
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset its offset in the partition
 * @param timestamp its timestamp, ms since the epoch
 * @param key the deserialized key, may be {@code null}
 * @param value the deserialized value, may be {@code null}
 * @param headers its headers
 */
public record ConsumerRecord<K, V>(
    String topic, int partition, long offset, long timestamp, K key, V value, List<Header> headers) {}
