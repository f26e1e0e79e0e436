package io.tributary.client;

import io.tributary.protocol.ErrorCode;
import java.util.Set;

/**
 * A partition has no position, no committed offset, and {@code auto.offset.reset=none}, as Kafka's {@code
 * NoOffsetForPartitionException}: the consumer does not know where to start. Set a position with {@link
 * Consumer#seek} (or commit one) before polling again. Its {@link #errorCode()} is {@link
 * ErrorCode#OFFSET_OUT_OF_RANGE}; not retriable.
 */
public class NoOffsetForPartitionException extends TributaryException {
  private static final long serialVersionUID = 1L;

  private final Set<TopicPartition> partitions;

  /**
   * @param partitions the partitions without a position
   */
  public NoOffsetForPartitionException(Set<TopicPartition> partitions) {
    super(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        "Undefined offset with no reset policy for partitions: " + partitions
            + " (no committed offset and auto.offset.reset=none; seek to set a position)");
    this.partitions = Set.copyOf(partitions);
  }

  /**
   * The partitions without a position.
   *
   * @return an unmodifiable set
   */
  public Set<TopicPartition> partitions() {
    return partitions;
  }
}
