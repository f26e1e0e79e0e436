package io.tributary.client;

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

  /** Names of all topics, sorted (internal topics excluded). */
  List<String> listTopics();

  /** Descriptions of the given topics (all topics if empty). */
  List<TopicDescription> describeTopics(Collection<String> names);

  /** Releases resources. Idempotent. */
  @Override
  void close();
}
