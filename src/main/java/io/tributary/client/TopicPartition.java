package io.tributary.client;

/** A topic and a partition number, as Kafka's {@code TopicPartition}. */
public record TopicPartition(String topic, int partition) {
  @Override
  public String toString() {
    return topic + "-" + partition;
  }
}
