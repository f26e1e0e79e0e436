package io.tributary.cluster;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.protocol.CborSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The replicated metadata of one topic: the value of one entry of the cluster's topic map in Akka Distributed Data
 * ({@link ClusterMetadata#TOPICS}), written only by the {@link Controller} singleton with write-majority consistency,
 * kept durable on every node. Control plane, so encoded by Jackson CBOR. Immutable.
 *
 * @param name the topic name
 * @param topicId a UUID given at creation; a topic re-created under the same name has a new id
 * @param replicationFactor replicas per partition
 * @param configs the topic's config overrides
 * @param state CREATING, READY or DELETING
 * @param partitions one entry per partition, in partition order
 * @param version bumped by the controller at every write of this topic; replicas ignore an update older than one
 *     they have seen
 */
public record TopicMetadata(
    @JsonProperty("name") String name,
    @JsonProperty("topicId") String topicId,
    @JsonProperty("replicationFactor") short replicationFactor,
    @JsonProperty("configs") Map<String, String> configs,
    @JsonProperty("state") State state,
    @JsonProperty("partitions") List<PartitionMetadata> partitions,
    @JsonProperty("version") long version)
    implements CborSerializable {

  /** Lifecycle of a topic. */
  public enum State {
    /** Created in the metadata; its partitions are being created on their replicas. */
    CREATING,
    /** Every partition leader exists. */
    READY,
    /** Being deleted; it no longer takes requests. */
    DELETING
  }

  @JsonCreator
  public TopicMetadata {
    configs = Map.copyOf(configs);
    partitions = List.copyOf(partitions);
  }

  /** A copy in another state, version bumped. */
  public TopicMetadata withState(State newState) {
    return new TopicMetadata(name, topicId, replicationFactor, configs, newState, partitions, version + 1);
  }

  /** A copy with partition {@code p}'s metadata replaced, version bumped. */
  public TopicMetadata withPartition(PartitionMetadata p) {
    List<PartitionMetadata> copy = new ArrayList<>(partitions);
    copy.set(p.partition(), p);
    return new TopicMetadata(name, topicId, replicationFactor, configs, state, copy, version + 1);
  }

  /** A copy with every partition replaced, version bumped. */
  public TopicMetadata withPartitions(List<PartitionMetadata> ps) {
    return new TopicMetadata(name, topicId, replicationFactor, configs, state, ps, version + 1);
  }

  /** Partition {@code p}, or null if out of range. */
  public PartitionMetadata partition(int p) {
    return p >= 0 && p < partitions.size() ? partitions.get(p) : null;
  }
}
