package io.tributary.group.assignor;

import static io.tributary.group.assignor.AssignmentChecks.group;
import static io.tributary.group.assignor.AssignmentChecks.partitions;
import static io.tributary.group.assignor.AssignmentChecks.topics;
import static io.tributary.group.assignor.AssignmentChecks.tps;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RoundRobinAssignorTest {
  private final PartitionAssignor roundRobin = new RoundRobinAssignor();

  @Test
  void nameIsRoundrobinAndItIsEager() {
    assertEquals("roundrobin", roundRobin.name());
    assertFalse(roundRobin.cooperative());
  }

  @Test
  void kafkaDocumentationExampleTwoMembersTwoTopicsThreePartitions() {
    Map<String, Integer> topics = partitions("t0", 3, "t1", 3);
    Map<String, MemberSubscription> group =
        group(new MemberSubscription("C0", topics("t0", "t1")), new MemberSubscription("C1", topics("t0", "t1")));
    assertEquals(
        Map.of("C0", tps("t0-0 t0-2 t1-1"), "C1", tps("t0-1 t1-0 t1-2")),
        roundRobin.assign(topics, group));
  }

  @Test
  void kafkaDocumentationExampleDifferentSubscriptionsSkipsNonSubscribers() {
    Map<String, Integer> topics = partitions("t0", 1, "t1", 2, "t2", 3);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("C0", topics("t0")),
        new MemberSubscription("C1", topics("t0", "t1")),
        new MemberSubscription("C2", topics("t0", "t1", "t2")));
    assertEquals(
        Map.of("C0", tps("t0-0"), "C1", tps("t1-0"), "C2", tps("t1-1 t2-0 t2-1 t2-2")),
        roundRobin.assign(topics, group));
  }

  @Test
  void dealingPositionCarriesOverFromTopicToTopic() {
    Map<String, Integer> topics = partitions("a", 1, "b", 1, "c", 1, "d", 1);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("m0", topics("a", "b", "c", "d")),
        new MemberSubscription("m1", topics("a", "b", "c", "d")),
        new MemberSubscription("m2", topics("a", "b", "c", "d")));
    assertEquals(
        Map.of("m0", tps("a-0 d-0"), "m1", tps("b-0"), "m2", tps("c-0")), roundRobin.assign(topics, group));
  }

  @Test
  void staticMembersComeFirstOrderedByGroupInstanceIdAsKafka() {
    Map<String, Integer> topics = partitions("t", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", null, topics("t"), Set.of()),
        new MemberSubscription("b", "zeta", topics("t"), Set.of()),
        new MemberSubscription("c", "alpha", topics("t"), Set.of()));
    assertEquals(
        Map.of("c", tps("t-0 t-3"), "b", tps("t-1"), "a", tps("t-2")), roundRobin.assign(topics, group));
  }
}
