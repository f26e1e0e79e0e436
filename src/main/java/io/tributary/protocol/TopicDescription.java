package io.tributary.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * Metadata of one topic, as shown by {@code topics --describe} and returned by {@code Admin.describeTopics}.
 *
 * @param name topic name
 * @param topicId unique id given at creation (a new topic with the same name gets a new id, as Kafka's topic ids)
 * @param partitions one entry per partition, in partition order
 * @param configs the topic's config overrides (Kafka names, e.g. {@code retention.ms}); defaults are not listed
 */
public record TopicDescription(
    @JsonProperty("name") String name,
    @JsonProperty("topicId") String topicId,
    @JsonProperty("partitions") List<PartitionDescription> partitions,
    @JsonProperty("configs") Map<String, String> configs)
    implements CborSerializable {
  @JsonCreator
  public TopicDescription {}
}
