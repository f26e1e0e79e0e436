package io.tributary.group.assignor;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;

/**
 * The {@code "range"} assignor, as Kafka's {@code RangeAssignor}: works topic by topic, giving each member a
 * contiguous range of the topic's partitions.
 *
 * <p>For each topic, the members that subscribe to it are put in order and the topic's {@code n} partitions are cut
 * into {@code m} contiguous ranges (one per member): each member gets {@code n / m} partitions, and the first
 * {@code n % m} members get one more. Member order is Kafka's ({@code AbstractPartitionAssignor.MemberInfo}): static
 * members (with a {@code group.instance.id}) first, ordered by instance id, then dynamic members ordered by member
 * id. For a group of dynamic members this is plain member id order; ordering static members by instance id means a
 * static member that restarts (and so gets a new member id) keeps its place and thus its partitions.
 *
 * <p>Example (from Kafka's documentation): members C0 and C1 both subscribe to t0 and t1, which have 3 partitions
 * each. Result: C0 gets [t0-0, t0-1, t1-0, t1-1], C1 gets [t0-2, t1-2].
 *
 * <p>Guarantees: complete and exclusive (see {@link PartitionAssignor}); per topic, the members' shares differ by at
 * most one. Not balanced across topics: since every topic favours the same first members, with many topics the first
 * members can get many more partitions in total. Not sticky: owned partitions are ignored. Eager
 * ({@link #cooperative()} is false). Members beyond a topic's partition count get nothing of it.
 */
public final class RangeAssignor implements PartitionAssignor {

  /** This assignor's name. */
  public static final String NAME = "range";

  /** Creates the (stateless) assignor; {@link Assignors#byName(String)} hands out a shared instance. */
  public RangeAssignor() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean cooperative() {
    return false;
  }

  @Override
  public Map<String, Set<TopicPartition>> assign(
      Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members) {
    AssignmentInput input = AssignmentInput.of(partitionsPerTopic, members);
    Map<String, SortedSet<TopicPartition>> result = input.emptyResult();
    List<MemberSubscription> ordered = input.membersInKafkaOrder();
    for (Map.Entry<String, Integer> topic : input.topics.entrySet()) {
      List<String> consumers = new ArrayList<>();
      for (MemberSubscription m : ordered) {
        if (input.isEligible(m.memberId(), topic.getKey())) {
          consumers.add(m.memberId());
        }
      }
      int n = topic.getValue();
      int m = consumers.size();
      int perMember = n / m;
      int extra = n % m;
      for (int i = 0; i < m; i++) {
        int start = perMember * i + Math.min(i, extra);
        int length = perMember + (i < extra ? 1 : 0);
        SortedSet<TopicPartition> mine = result.get(consumers.get(i));
        for (int p = start; p < start + length; p++) {
          mine.add(new TopicPartition(topic.getKey(), p));
        }
      }
    }
    return AssignmentInput.freeze(result);
  }

  @Override
  public String toString() {
    return NAME;
  }
}
