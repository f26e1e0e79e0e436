/**
 * Partition assignors for consumer groups: pure, deterministic functions from the group's members (subscriptions,
 * currently owned partitions) and the topics' partition counts to a target assignment, as Kafka's client-side
 * assignors. No Akka and no dependency on the rest of Tributary; the group coordinator calls them.
 *
 * <ul>
 *   <li>{@link io.tributary.group.assignor.RangeAssignor} — {@code "range"}: contiguous ranges per topic.</li>
 *   <li>{@link io.tributary.group.assignor.RoundRobinAssignor} — {@code "roundrobin"}: all partitions dealt in
 *       turn.</li>
 *   <li>{@link io.tributary.group.assignor.CooperativeStickyAssignor} — {@code "cooperative-sticky"} (default):
 *       balanced and maximally sticky, for incremental cooperative rebalancing.</li>
 * </ul>
 *
 * Look them up with {@link io.tributary.group.assignor.Assignors#byName(String)}.
 */
package io.tributary.group.assignor;
