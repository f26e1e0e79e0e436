package io.tributary.group.assignor;

import java.util.Objects;
import java.util.Set;

/**
 * Everything a {@link PartitionAssignor} knows about one member of a consumer group.
 *
 * <p>The collections are copied (immutable, no null elements allowed), so a subscription never changes after it is
 * built.
 *
 * @param memberId the member id given by the group coordinator; never null. It must equal the key under which the
 *     subscription is passed to {@link PartitionAssignor#assign}
 * @param groupInstanceId the member's {@code group.instance.id} (static membership), or null for a dynamic member
 * @param topics the topics the member subscribes to (after resolving a pattern subscription). Topics that do not
 *     exist are allowed and simply ignored by the assignors
 * @param ownedPartitions the partitions the member owns right now, i.e. its assignment of the previous generation as
 *     it reported it. Only {@link CooperativeStickyAssignor} looks at them; claims on partitions of topics the member
 *     no longer subscribes to, or on partitions that no longer exist, are ignored
 */
public record MemberSubscription(
    String memberId, String groupInstanceId, Set<String> topics, Set<TopicPartition> ownedPartitions) {

  /**
   * Creates a subscription, copying the collections.
   *
   * @param memberId the member id
   * @param groupInstanceId the {@code group.instance.id}, or null
   * @param topics the subscribed topics
   * @param ownedPartitions the partitions the member owns now
   * @throws NullPointerException if {@code memberId}, {@code topics}, {@code ownedPartitions} or any element is null
   */
  public MemberSubscription {
    Objects.requireNonNull(memberId, "memberId");
    topics = Set.copyOf(Objects.requireNonNull(topics, "topics"));
    ownedPartitions = Set.copyOf(Objects.requireNonNull(ownedPartitions, "ownedPartitions"));
  }

  /**
   * A dynamic member (no {@code group.instance.id}) that owns nothing yet.
   *
   * @param memberId the member id
   * @param topics the subscribed topics
   */
  public MemberSubscription(String memberId, Set<String> topics) {
    this(memberId, null, topics, Set.of());
  }

  /**
   * A dynamic member (no {@code group.instance.id}) that owns {@code ownedPartitions}.
   *
   * @param memberId the member id
   * @param topics the subscribed topics
   * @param ownedPartitions the partitions the member owns now
   */
  public MemberSubscription(String memberId, Set<String> topics, Set<TopicPartition> ownedPartitions) {
    this(memberId, null, topics, ownedPartitions);
  }

  /**
   * A copy of this subscription with the owned partitions replaced (e.g. by the previous generation's result).
   *
   * @param owned the new owned partitions
   * @return the copy
   */
  public MemberSubscription withOwnedPartitions(Set<TopicPartition> owned) {
    return new MemberSubscription(memberId, groupInstanceId, topics, owned);
  }
}
