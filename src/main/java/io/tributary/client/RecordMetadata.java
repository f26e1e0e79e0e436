package io.tributary.client;

/**
 * Where an acknowledged record was stored, as Kafka's {@code RecordMetadata}.
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset the record's offset, or -1 when {@code acks=0}
 * @param timestamp the record's timestamp, ms
 * @param serializedKeySize key bytes, -1 for a null key
 * @param serializedValueSize value bytes, -1 for a null value
 */
public record RecordMetadata(
    String topic, int partition, long offset, long timestamp, int serializedKeySize, int serializedValueSize) {}
