package io.tributary.group.assignor;

import static io.tributary.group.assignor.AssignmentChecks.assertIdenticalSubscriptionsBalanced;
import static io.tributary.group.assignor.AssignmentChecks.assertValid;
import static io.tributary.group.assignor.AssignmentChecks.group;
import static io.tributary.group.assignor.AssignmentChecks.loads;
import static io.tributary.group.assignor.AssignmentChecks.partitions;
import static io.tributary.group.assignor.AssignmentChecks.shuffled;
import static io.tributary.group.assignor.AssignmentChecks.shuffledTopics;
import static io.tributary.group.assignor.AssignmentChecks.spread;
import static io.tributary.group.assignor.AssignmentChecks.topics;
import static io.tributary.group.assignor.AssignmentChecks.tp;
import static io.tributary.group.assignor.AssignmentChecks.tps;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The {@link PartitionAssignor} contract, checked for every assignor. */
class AssignorContractTest {

  static Stream<PartitionAssignor> assignors() {
    return Assignors.names().stream().map(Assignors::byName);
  }

  static Stream<PartitionAssignor> balancingAssignors() {
    return Stream.of(Assignors.byName("roundrobin"), Assignors.byName("cooperative-sticky"));
  }

  /** Scenarios: name, topics, members. */
  static Stream<Arguments> scenarios() {
    return assignors().flatMap(a -> Stream.of(
        Arguments.of(a, "one member one topic", partitions("t0", 5),
            group(new MemberSubscription("c0", topics("t0")))),
        Arguments.of(a, "identical subscriptions", partitions("t0", 3, "t1", 3),
            group(new MemberSubscription("c0", topics("t0", "t1")), new MemberSubscription("c1", topics("t0", "t1")))),
        Arguments.of(a, "uneven split", partitions("t0", 7, "t1", 2, "t2", 11),
            group(new MemberSubscription("a", topics("t0", "t1", "t2")),
                new MemberSubscription("b", topics("t0", "t1", "t2")),
                new MemberSubscription("c", topics("t0", "t1", "t2")))),
        Arguments.of(a, "different subscriptions (Kafka doc)", partitions("t0", 1, "t1", 2, "t2", 3),
            group(new MemberSubscription("C0", topics("t0")), new MemberSubscription("C1", topics("t0", "t1")),
                new MemberSubscription("C2", topics("t0", "t1", "t2")))),
        Arguments.of(a, "disjoint subscriptions", partitions("t0", 4, "t1", 6),
            group(new MemberSubscription("x", topics("t0")), new MemberSubscription("y", topics("t1")),
                new MemberSubscription("z", topics("t1")))),
        Arguments.of(a, "more members than partitions", partitions("t0", 2),
            group(new MemberSubscription("m1", topics("t0")), new MemberSubscription("m2", topics("t0")),
                new MemberSubscription("m3", topics("t0")), new MemberSubscription("m4", topics("t0")))),
        Arguments.of(a, "missing and empty topics", partitions("t0", 3, "empty", 0, "unsubscribed", 9),
            group(new MemberSubscription("m1", topics("t0", "missing", "empty")),
                new MemberSubscription("m2", topics("missing")))),
        Arguments.of(a, "owned partitions present", partitions("t0", 4, "t1", 4),
            group(new MemberSubscription("m1", topics("t0", "t1"), tps("t0-0 t0-1 t1-3 t9-0")),
                new MemberSubscription("m2", topics("t1"), tps("t0-2 t1-0 t1-1 t1-2"))))));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("scenarios")
  void assignsEveryPartitionExactlyOnceAndOnlyToSubscribers(
      PartitionAssignor assignor, String scenario, Map<String, Integer> topics, Map<String, MemberSubscription> group) {
    assertValid(topics, group, assignor.assign(topics, group));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("scenarios")
  void resultDoesNotDependOnIterationOrderOfTheInput(
      PartitionAssignor assignor, String scenario, Map<String, Integer> topics, Map<String, MemberSubscription> group) {
    Map<String, Set<TopicPartition>> expected = assignor.assign(topics, group);
    Random random = new Random(42);
    for (int i = 0; i < 20; i++) {
      assertEquals(expected, assignor.assign(shuffledTopics(topics, random), shuffled(group, random)));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void extraMembersGetAnEmptySetAndStayIdle(PartitionAssignor assignor) {
    Map<String, Integer> topics = partitions("t0", 3);
    Map<String, MemberSubscription> group = new TreeMap<>();
    for (int i = 0; i < 5; i++) {
      group.put("m" + i, new MemberSubscription("m" + i, topics("t0")));
    }
    Map<String, Set<TopicPartition>> result = assignor.assign(topics, group);
    assertValid(topics, group, result);
    List<Integer> counts = new ArrayList<>(loads(result).values());
    Collections.sort(counts);
    assertEquals(List.of(0, 0, 1, 1, 1), counts);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void topicsNobodySubscribesToAreNotAssigned(PartitionAssignor assignor) {
    Map<String, Integer> topics = partitions("t0", 2, "other", 5);
    Map<String, MemberSubscription> group = group(new MemberSubscription("m", topics("t0")));
    assertEquals(Map.of("m", tps("t0-0 t0-1")), assignor.assign(topics, group));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void subscribedTopicsThatDoNotExistOrHaveNoPartitionsAreIgnored(PartitionAssignor assignor) {
    Map<String, Integer> topics = partitions("t0", 2, "empty", 0);
    Map<String, MemberSubscription> group =
        group(new MemberSubscription("a", topics("t0", "later")),
            new MemberSubscription("b", topics("later", "empty")));
    Map<String, Set<TopicPartition>> result = assignor.assign(topics, group);
    assertEquals(tps("t0-0 t0-1"), result.get("a"));
    assertEquals(Set.of(), result.get("b"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void noTopicsOrNoMembersGiveEmptyAssignments(PartitionAssignor assignor) {
    assertEquals(Map.of(), assignor.assign(partitions("t0", 4), Map.of()));
    Map<String, MemberSubscription> group = group(new MemberSubscription("a", topics("t0")));
    assertEquals(Map.of("a", Set.of()), assignor.assign(Map.of(), group));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void resultIsUnmodifiable(PartitionAssignor assignor) {
    Map<String, MemberSubscription> group = group(new MemberSubscription("a", topics("t0")));
    Map<String, Set<TopicPartition>> result = assignor.assign(partitions("t0", 2), group);
    assertThrows(UnsupportedOperationException.class, () -> result.put("b", Set.of()));
    assertThrows(UnsupportedOperationException.class, () -> result.get("a").add(tp("t0", 9)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void rejectsInvalidInput(PartitionAssignor assignor) {
    Map<String, MemberSubscription> group = group(new MemberSubscription("a", topics("t0")));
    assertThrows(IllegalArgumentException.class, () -> assignor.assign(partitions("t0", -1), group));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> assignor.assign(partitions("t0", 1), Map.of("b", new MemberSubscription("a", topics("t0")))));
    assertTrue(e.getMessage().contains("'b'"), e.getMessage());
    assertThrows(NullPointerException.class, () -> assignor.assign(null, group));
    assertThrows(NullPointerException.class, () -> assignor.assign(partitions("t0", 1), null));
    Map<String, Integer> nullCount = new HashMap<>();
    nullCount.put("t0", null);
    assertThrows(NullPointerException.class, () -> assignor.assign(nullCount, group));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("balancingAssignors")
  void identicalSubscriptionsAreBalancedWithinOnePartition(PartitionAssignor assignor) {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      Map<String, Integer> topics = new TreeMap<>();
      int topicCount = 1 + random.nextInt(5);
      for (int t = 0; t < topicCount; t++) {
        topics.put("t" + t, random.nextInt(12));
      }
      Map<String, MemberSubscription> group = new TreeMap<>();
      int memberCount = 1 + random.nextInt(8);
      for (int i = 0; i < memberCount; i++) {
        group.put("m" + i, new MemberSubscription("m" + i, topics.keySet()));
      }
      Map<String, Set<TopicPartition>> result = assignor.assign(topics, group);
      assertValid(topics, group, result);
      assertTrue(spread(result) <= 1, "unbalanced: " + result);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("assignors")
  void membersWithRandomDifferentSubscriptionsGetValidAssignments(PartitionAssignor assignor) {
    Random random = new Random(11);
    for (int round = 0; round < 300; round++) {
      Map<String, Integer> topics = new TreeMap<>();
      for (int t = 0; t < 1 + random.nextInt(5); t++) {
        topics.put("t" + t, random.nextInt(9));
      }
      Map<String, MemberSubscription> group = new TreeMap<>();
      for (int i = 0; i < 1 + random.nextInt(7); i++) {
        Set<String> subscription = new TreeSet<>();
        for (int t = 0; t < 6; t++) {
          if (random.nextInt(3) == 0) {
            subscription.add("t" + t); // t5 never exists
          }
        }
        Set<TopicPartition> owned = new TreeSet<>();
        for (int k = 0; k < random.nextInt(4); k++) {
          owned.add(tp("t" + random.nextInt(6), random.nextInt(9)));
        }
        group.put("m" + i, new MemberSubscription("m" + i, i % 3 == 0 ? "s" + i : null, subscription, owned));
      }
      Map<String, Set<TopicPartition>> result = assignor.assign(topics, group);
      assertValid(topics, group, result);
      if (assignor.cooperative()) {
        assertIdenticalSubscriptionsBalanced(topics, group, result);
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"range", "roundrobin"})
  void eagerAssignorsIgnoreOwnedPartitions(String name) {
    PartitionAssignor assignor = Assignors.byName(name);
    Map<String, Integer> topics = partitions("t0", 3, "t1", 3);
    Map<String, MemberSubscription> fresh =
        group(new MemberSubscription("c0", topics("t0", "t1")), new MemberSubscription("c1", topics("t0", "t1")));
    Map<String, MemberSubscription> owning = group(
        new MemberSubscription("c0", topics("t0", "t1"), tps("t1-0 t1-1 t1-2")),
        new MemberSubscription("c1", topics("t0", "t1"), tps("t0-0 t0-1 t0-2")));
    assertEquals(assignor.assign(topics, fresh), assignor.assign(topics, owning));
  }
}
