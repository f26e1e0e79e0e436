package io.tributary.group.assignor;

import java.util.Map;
import java.util.Set;

/**
 * Computes which member of a consumer group consumes which partition, as Kafka's
 * {@code ConsumerPartitionAssignor} does on the group leader; in Tributary the group coordinator calls it.
 *
 * <p>Contract shared by every implementation in this package:
 * <ul>
 *   <li><b>Complete and exclusive.</b> Every partition of every topic that is both subscribed by at least one member
 *       and present in {@code partitionsPerTopic} is assigned to exactly one member, and only to a member that
 *       subscribes to its topic. Nothing else is assigned: topics nobody subscribes to, and subscribed topics missing
 *       from {@code partitionsPerTopic} (not created yet), are ignored.</li>
 *   <li><b>Every member has an entry</b>, possibly an empty set: with more members than partitions the extra members
 *       get nothing and stay idle until a rebalance needs them.</li>
 *   <li><b>Deterministic.</b> The result depends only on the contents of the arguments, never on map or set iteration
 *       order, time or randomness, so any coordinator computes the same assignment from the same input.</li>
 *   <li><b>Pure and thread-safe.</b> Implementations are stateless; the arguments are not modified. The returned map
 *       and sets are unmodifiable, the map sorted by member id and each set by {@link TopicPartition} order.</li>
 * </ul>
 *
 * <p>Implementations: {@link RangeAssignor} ({@code "range"}), {@link RoundRobinAssignor} ({@code "roundrobin"}) and
 * {@link CooperativeStickyAssignor} ({@code "cooperative-sticky"}, the default); look them up with
 * {@link Assignors#byName(String)}.
 */
public interface PartitionAssignor {

  /**
   * The assignor's name as used in {@code partition.assignment.strategy}: "range", "roundrobin" or
   * "cooperative-sticky".
   *
   * @return the name, as accepted by {@link Assignors#byName(String)}
   */
  String name();

  /**
   * Whether the assignor supports incremental cooperative rebalancing: its assignment keeps partitions with their
   * current owners whenever it can, so the coordinator only needs to revoke the partitions that actually move (the
   * others keep being consumed during the rebalance). True only for {@link CooperativeStickyAssignor}; with the
   * others ("eager") every member gives up everything before a new assignment is handed out.
   *
   * @return whether the assignor is cooperative
   */
  boolean cooperative();

  /**
   * Computes the target assignment.
   *
   * @param partitionsPerTopic partition count of every subscribed topic that exists (topics missing from the map are
   *     ignored; extra topics nobody subscribes to are ignored too). Counts must be {@code >= 0}
   * @param members every member of the group by member id; each value's {@link MemberSubscription#memberId()} must
   *     equal its key
   * @return an entry for EVERY member (possibly an empty set); every partition of every subscribed existing topic is
   *     assigned to exactly one member that subscribes to its topic (if any does). Unmodifiable, sorted
   * @throws NullPointerException if an argument, key or value is null
   * @throws IllegalArgumentException if a partition count is negative or a member's key differs from its member id
   */
  Map<String, Set<TopicPartition>> assign(
      Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members);
}
