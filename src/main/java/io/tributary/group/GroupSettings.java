package io.tributary.group;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * Settings of the group coordinator, read once from {@code tributary.broker} (Kafka's names) and
 * {@code tributary.group}; documented in reference.conf. Immutable.
 *
 * @param offsetsTopicPartitions partitions of {@code __consumer_offsets} ({@code offsets.topic.num.partitions})
 * @param offsetsTopicReplicationFactor its replication factor ({@code offsets.topic.replication.factor})
 * @param initialRebalanceDelay wait before the first rebalance of an empty group
 *     ({@code group.initial.rebalance.delay.ms})
 * @param minSessionTimeoutMs smallest session.timeout.ms a member may ask for ({@code group.min.session.timeout.ms})
 * @param maxSessionTimeoutMs largest ({@code group.max.session.timeout.ms})
 * @param checkpointRecords commits per offsets partition between two checkpoints
 * @param metadataRefreshInterval how often topic metadata is refreshed for pattern subscriptions
 */
public record GroupSettings(
    int offsetsTopicPartitions,
    short offsetsTopicReplicationFactor,
    Duration initialRebalanceDelay,
    int minSessionTimeoutMs,
    int maxSessionTimeoutMs,
    int checkpointRecords,
    Duration metadataRefreshInterval) {

  /** Name of the internal topic holding committed offsets (Kafka's). */
  public static final String OFFSETS_TOPIC = io.tributary.protocol.TopicNames.CONSUMER_OFFSETS;

  /** The sections read; values are read by their full key, so that the config library's errors name it in full. */
  private static final String B = "tributary.broker.";

  private static final String G = "tributary.group.";

  /**
   * Reads and validates the settings.
   *
   * @throws IllegalArgumentException naming the key of a value out of range
   * @throws com.typesafe.config.ConfigException naming the key (in full) when a value is missing or of the wrong type
   */
  public static GroupSettings create(Config config) {
    int partitions = config.getInt(B + "offsets.topic.num.partitions");
    if (partitions < 1) {
      throw new IllegalArgumentException("tributary.broker.offsets.topic.num.partitions must be >= 1");
    }
    int rf = config.getInt(B + "offsets.topic.replication.factor");
    if (rf < 1) {
      throw new IllegalArgumentException("tributary.broker.offsets.topic.replication.factor must be >= 1");
    }
    long delay = config.getLong(B + "group.initial.rebalance.delay.ms");
    if (delay < 0) {
      throw new IllegalArgumentException("tributary.broker.group.initial.rebalance.delay.ms must be >= 0");
    }
    int min = config.getInt(B + "group.min.session.timeout.ms");
    int max = config.getInt(B + "group.max.session.timeout.ms");
    if (min < 1 || max < min) {
      throw new IllegalArgumentException("tributary.broker.group.min.session.timeout.ms must be >= 1 and <="
          + " tributary.broker.group.max.session.timeout.ms");
    }
    int checkpoint = config.getInt(G + "offsets-checkpoint-records");
    if (checkpoint < 1) {
      throw new IllegalArgumentException("tributary.group.offsets-checkpoint-records must be >= 1");
    }
    return new GroupSettings(partitions, (short) rf, Duration.ofMillis(delay), min, max, checkpoint,
        config.getDuration(G + "metadata-refresh-interval"));
  }
}
