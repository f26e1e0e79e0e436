package io.tributary.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Metadata of one partition.
 *
 * @param partition partition number
 * @param leader address of the node that leads the partition ({@code akka://system@host:port})
 * @param replicas addresses of all replicas, leader first
 * @param isr addresses of the in-sync replicas
 * @param leaderEpoch the current leader epoch (bumped on every leader change)
 */
public record PartitionDescription(
    @JsonProperty("partition") int partition,
    @JsonProperty("leader") String leader,
    @JsonProperty("replicas") List<String> replicas,
    @JsonProperty("isr") List<String> isr,
    @JsonProperty("leaderEpoch") int leaderEpoch)
    implements CborSerializable {
  @JsonCreator
  public PartitionDescription {}
}
