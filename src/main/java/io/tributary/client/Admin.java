package io.tributary.client;

import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.TopicDescription;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Topic administration, as Kafka's {@code Admin}. Thread-safe. Every call blocks up to {@code default.api.timeout.ms}
 * and throws {@link TributaryException} with the broker's error code: INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
 * INVALID_REPLICATION_FACTOR, INVALID_CONFIG, TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_OR_PARTITION, or REQUEST_TIMED_OUT
 * when no broker answered.
 */
public interface Admin extends AutoCloseable {
  /**
   * Creates a topic.
   *
   * @param partitions ≥ 1
   * @param replicationFactor ≥ 1, or -1 for the broker's default
   * @param configs topic config overrides (Kafka names), may be empty
   * @return the new topic's description
   */
  TopicDescription createTopic(String name, int partitions, short replicationFactor, Map<String, String> configs);

  /** Deletes a topic and its records. */
  void deleteTopic(String name);

  /** Names of all topics, sorted (internal topics excluded, as Kafka's {@code Admin.listTopics()}). */
  default List<String> listTopics() {
    return listTopics(false);
  }

  /**
   * Names of all topics, sorted; internal topics ({@code __consumer_offsets}) too if {@code listInternal}, as Kafka's
   * {@code ListTopicsOptions.listInternal}.
   */
  List<String> listTopics(boolean listInternal);

  /** Descriptions of the given topics (all topics if empty). */
  List<TopicDescription> describeTopics(Collection<String> names);

  /**
   * The offsets of {@code partitions} at {@code timestamp}: -2 the log start offsets, -1 the high watermarks, else the
   * first offset whose record timestamp is at or after it (as Kafka's {@code Admin.listOffsets}).
   */
  Map<TopicPartition, Long> listOffsets(Collection<TopicPartition> partitions, long timestamp);

  /** Consumer groups (with members or committed offsets), sorted by id, as Kafka's {@code listConsumerGroups}. */
  List<GroupProtocol.GroupListing> listConsumerGroups();

  /**
   * A group's state, generation, members with their partitions, and per partition the committed offset, log end
   * offset and lag (as {@code kafka-consumer-groups --describe}).
   *
   * @throws TributaryException GROUP_ID_NOT_FOUND, INVALID_GROUP_ID
   */
  GroupProtocol.DescribeGroupResponse describeConsumerGroup(String groupId);

  /** The committed offsets of a group (empty if none). */
  List<GroupProtocol.PartitionOffset> listConsumerGroupOffsets(String groupId);

  /**
   * Sets a group's committed offsets, as Kafka's {@code alterConsumerGroupOffsets}.
   *
   * @throws TributaryException NON_EMPTY_GROUP while the group has active members, INVALID_COMMIT_OFFSET_SIZE
   */
  void alterConsumerGroupOffsets(String groupId, Map<TopicPartition, Long> offsets);

  /**
   * Deletes an empty group and its committed offsets.
   *
   * @throws TributaryException NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND
   */
  void deleteConsumerGroup(String groupId);

  /** Releases resources. Idempotent. */
  @Override
  void close();
}
