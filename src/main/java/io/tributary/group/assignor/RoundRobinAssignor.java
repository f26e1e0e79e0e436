package io.tributary.group.assignor;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;

/**
 * The {@code "roundrobin"} assignor, as Kafka's {@code RoundRobinAssignor}: deals all partitions to the members like
 * cards.
 *
 * <p>All partitions of all subscribed, existing topics are listed in order (topics by name, then partition number).
 * The members are put in a circle in Kafka's member order ({@code AbstractPartitionAssignor.MemberInfo}: static
 * members first by {@code group.instance.id}, then dynamic members by member id). Each partition in turn goes to the
 * next member of the circle that subscribes to its topic, skipping those that do not; the position in the circle
 * carries over from one partition (and topic) to the next.
 *
 * <p>Examples (from Kafka's documentation): members C0 and C1 both subscribe to t0 and t1, 3 partitions each:
 * C0 gets [t0-0, t0-2, t1-1], C1 gets [t0-1, t1-0, t1-2]. With different subscriptions — C0 subscribes to t0; C1 to
 * t0 and t1; C2 to t0, t1 and t2; t0, t1, t2 having 1, 2 and 3 partitions — C0 gets [t0-0], C1 gets [t1-0] and C2
 * gets [t1-1, t2-0, t2-1, t2-2].
 *
 * <p>Guarantees: complete and exclusive (see {@link PartitionAssignor}). When all members subscribe to the same
 * topics, the members' partition counts differ by at most one; with different subscriptions the result can be
 * unbalanced (see the second example). Not sticky: owned partitions are ignored. Eager ({@link #cooperative()} is
 * false).
 */
public final class RoundRobinAssignor implements PartitionAssignor {

  /** This assignor's name. */
  public static final String NAME = "roundrobin";

  /** Creates the (stateless) assignor; {@link Assignors#byName(String)} hands out a shared instance. */
  public RoundRobinAssignor() {}

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
    List<MemberSubscription> circle = input.membersInKafkaOrder();
    int next = 0;
    for (Map.Entry<String, Integer> topic : input.topics.entrySet()) {
      // Somebody subscribes to every topic in input.topics, so the skipping below always ends.
      for (int p = 0; p < topic.getValue(); p++) {
        while (!input.isEligible(circle.get(next).memberId(), topic.getKey())) {
          next = (next + 1) % circle.size();
        }
        result.get(circle.get(next).memberId()).add(new TopicPartition(topic.getKey(), p));
        next = (next + 1) % circle.size();
      }
    }
    return AssignmentInput.freeze(result);
  }

  @Override
  public String toString() {
    return NAME;
  }
}
