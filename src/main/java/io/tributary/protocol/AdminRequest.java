package io.tributary.protocol;

import akka.actor.typed.ActorRef;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;
import java.util.Map;

/**
 * Topic administration and metadata requests, answered by the controller through any node's gateway. Control plane:
 * Jackson CBOR.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
@JsonSubTypes({
  @JsonSubTypes.Type(value = AdminRequest.CreateTopic.class, name = "create"),
  @JsonSubTypes.Type(value = AdminRequest.DeleteTopic.class, name = "delete"),
  @JsonSubTypes.Type(value = AdminRequest.ListTopics.class, name = "list"),
  @JsonSubTypes.Type(value = AdminRequest.DescribeTopics.class, name = "describe")
})
public interface AdminRequest extends ClientRequest, CborSerializable {

  /** Where the {@link AdminResponse} goes. */
  ActorRef<AdminResponse> replyTo();

  /** The same request answered to {@code replyTo} (the gateway forwards requests to the controller this way). */
  AdminRequest withReplyTo(ActorRef<AdminResponse> replyTo);

  /**
   * Creates a topic, as Kafka's CreateTopics. Errors: INVALID_TOPIC_EXCEPTION (name rules), INVALID_PARTITIONS (≤ 0),
   * INVALID_REPLICATION_FACTOR, INVALID_CONFIG (unknown key or bad value), TOPIC_ALREADY_EXISTS.
   *
   * @param partitions number of partitions, ≥ 1; -1 takes the broker's {@code num.partitions}
   * @param replicationFactor replicas per partition; -1 takes {@code default.replication.factor}
   * @param configs topic config overrides by Kafka name (e.g. {@code retention.ms})
   */
  record CreateTopic(
      @JsonProperty("version") short version,
      @JsonProperty("name") String name,
      @JsonProperty("partitions") int partitions,
      @JsonProperty("replicationFactor") short replicationFactor,
      @JsonProperty("configs") Map<String, String> configs,
      @JsonProperty("replyTo") ActorRef<AdminResponse> replyTo)
      implements AdminRequest {
    @JsonCreator
    public CreateTopic {}

    @Override
    public CreateTopic withReplyTo(ActorRef<AdminResponse> to) {
      return new CreateTopic(version, name, partitions, replicationFactor, configs, to);
    }
  }

  /** Deletes a topic and all its records. Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION. */
  record DeleteTopic(
      @JsonProperty("version") short version,
      @JsonProperty("name") String name,
      @JsonProperty("replyTo") ActorRef<AdminResponse> replyTo)
      implements AdminRequest {
    @JsonCreator
    public DeleteTopic {}

    @Override
    public DeleteTopic withReplyTo(ActorRef<AdminResponse> to) {
      return new DeleteTopic(version, name, to);
    }
  }

  /** Lists topic names; internal topics (leading {@code __}) only if asked. */
  record ListTopics(
      @JsonProperty("version") short version,
      @JsonProperty("includeInternal") boolean includeInternal,
      @JsonProperty("replyTo") ActorRef<AdminResponse> replyTo)
      implements AdminRequest {
    @JsonCreator
    public ListTopics {}

    @Override
    public ListTopics withReplyTo(ActorRef<AdminResponse> to) {
      return new ListTopics(version, includeInternal, to);
    }
  }

  /**
   * Describes topics; an empty list describes all. A name that does not exist makes the whole request fail with
   * UNKNOWN_TOPIC_OR_PARTITION (the message names the topic), as Kafka's Admin does for that topic.
   */
  record DescribeTopics(
      @JsonProperty("version") short version,
      @JsonProperty("names") List<String> names,
      @JsonProperty("replyTo") ActorRef<AdminResponse> replyTo)
      implements AdminRequest {
    @JsonCreator
    public DescribeTopics {}

    @Override
    public DescribeTopics withReplyTo(ActorRef<AdminResponse> to) {
      return new DescribeTopics(version, names, to);
    }
  }
}
