package io.tributary.cluster;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.protocol.CborSerializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The replicated metadata of one partition, as Kafka's partition state in the controller: which nodes hold a replica,
 * which one leads, in which leader epoch, and which replicas are in sync. Nodes are named by their Akka address
 * ({@code akka://tributary@127.0.0.1:9092}). Immutable; the {@code with…} methods return changed copies.
 *
 * @param partition the partition number, 0-based
 * @param replicas the replica nodes, preferred leader first; never two on one node
 * @param leader the leader's node, or {@code ""} when no in-sync replica is alive (the partition is offline)
 * @param leaderEpoch bumped by the controller at every leader change; written into every batch the leader appends;
 *     requests carrying an older epoch are fenced
 * @param isr the in-sync replicas (leader included while there is one); never empty after creation
 */
public record PartitionMetadata(
    @JsonProperty("partition") int partition,
    @JsonProperty("replicas") List<String> replicas,
    @JsonProperty("leader") String leader,
    @JsonProperty("leaderEpoch") int leaderEpoch,
    @JsonProperty("isr") List<String> isr)
    implements CborSerializable {

  @JsonCreator
  public PartitionMetadata {
    replicas = List.copyOf(replicas);
    leader = leader == null ? "" : leader;
    isr = List.copyOf(isr);
  }

  /** Whether the partition has a leader. */
  public boolean hasLeader() {
    return !leader.isEmpty();
  }

  /** A copy with another leader and a bumped leader epoch. */
  public PartitionMetadata withLeader(String newLeader) {
    return new PartitionMetadata(partition, replicas, newLeader, leaderEpoch + 1, isr);
  }

  /** A copy with another ISR, kept in replica order. */
  public PartitionMetadata withIsr(List<String> newIsr) {
    List<String> ordered = new ArrayList<>();
    for (String r : replicas) {
      if (newIsr.contains(r)) {
        ordered.add(r);
      }
    }
    return new PartitionMetadata(partition, replicas, leader, leaderEpoch, ordered);
  }
}
