package io.tributary.group.assignor;

import java.util.Comparator;
import java.util.Objects;

/**
 * A partition of a topic, as seen by the partition assignors.
 *
 * <p>A tiny value type of its own so that the assignors depend on nothing else in Tributary (in particular not on
 * the client package). Instances are ordered by topic name, then partition number, which is the order every
 * assignor in this package uses when it walks partitions; {@link #toString()} gives Kafka's {@code "topic-N"}.
 *
 * @param topic the topic name, never null
 * @param partition the partition number, {@code >= 0}
 */
public record TopicPartition(String topic, int partition) implements Comparable<TopicPartition> {

  private static final Comparator<TopicPartition> ORDER =
      Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

  /**
   * Creates a topic partition.
   *
   * @param topic the topic name
   * @param partition the partition number
   * @throws NullPointerException if {@code topic} is null
   * @throws IllegalArgumentException if {@code partition} is negative
   */
  public TopicPartition {
    Objects.requireNonNull(topic, "topic");
    if (partition < 0) {
      throw new IllegalArgumentException("partition must be >= 0, was " + partition + " (topic " + topic + ")");
    }
  }

  /** Orders by topic name, then by partition number. */
  @Override
  public int compareTo(TopicPartition other) {
    return ORDER.compare(this, other);
  }

  /** Kafka's notation: {@code "topic-N"}. */
  @Override
  public String toString() {
    return topic + "-" + partition;
  }
}
