package io.tributary.group.assignor;

import static io.tributary.group.assignor.AssignmentChecks.assertValid;
import static io.tributary.group.assignor.AssignmentChecks.group;
import static io.tributary.group.assignor.AssignmentChecks.partitions;
import static io.tributary.group.assignor.AssignmentChecks.topics;
import static io.tributary.group.assignor.AssignmentChecks.tps;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RangeAssignorTest {
  private final PartitionAssignor range = new RangeAssignor();

  @Test
  void nameIsRangeAndItIsEager() {
    assertEquals("range", range.name());
    assertFalse(range.cooperative());
  }

  @Test
  void kafkaDocumentationExampleTwoMembersTwoTopicsThreePartitions() {
    Map<String, Integer> topics = partitions("t0", 3, "t1", 3);
    Map<String, MemberSubscription> group =
        group(new MemberSubscription("C0", topics("t0", "t1")), new MemberSubscription("C1", topics("t0", "t1")));
    assertEquals(
        Map.of("C0", tps("t0-0 t0-1 t1-0 t1-1"), "C1", tps("t0-2 t1-2")),
        range.assign(topics, group));
  }

  @ParameterizedTest(name = "{0} partitions over {1} members -> {2}")
  @CsvSource({
    "7, 3, '0 1 2|3 4|5 6'",
    "6, 3, '0 1|2 3|4 5'",
    "2, 3, '0|1|'",
    "1, 1, '0'",
    "10, 4, '0 1 2|3 4 5|6 7|8 9'"
  })
  void splitsEachTopicIntoContiguousRangesFirstMembersGetTheExtra(int n, int m, String expected) {
    Map<String, MemberSubscription> group = new java.util.TreeMap<>();
    for (int i = 0; i < m; i++) {
      group.put("c" + i, new MemberSubscription("c" + i, topics("t")));
    }
    Map<String, Set<TopicPartition>> result = range.assign(partitions("t", n), group);
    String[] ranges = expected.split("\\|", -1);
    for (int i = 0; i < m; i++) {
      String spec = i < ranges.length ? ranges[i].trim() : "";
      assertEquals(tps(spec.isEmpty() ? "" : ("t-" + spec.replace(" ", " t-"))), result.get("c" + i), "c" + i);
    }
  }

  @Test
  void membersAreOrderedByMemberIdNotByMapOrder() {
    Map<String, Integer> topics = partitions("t", 4);
    // "b" sorts before "c" even though it was created later; member ids are compared as strings.
    Map<String, MemberSubscription> group =
        group(new MemberSubscription("c", topics("t")), new MemberSubscription("b", topics("t")));
    assertEquals(Map.of("b", tps("t-0 t-1"), "c", tps("t-2 t-3")), range.assign(topics, group));
  }

  @Test
  void staticMembersComeFirstOrderedByGroupInstanceIdAsKafka() {
    Map<String, Integer> topics = partitions("t", 3);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a-dynamic", null, topics("t"), Set.of()),
        new MemberSubscription("b", "instance-y", topics("t"), Set.of()),
        new MemberSubscription("c", "instance-x", topics("t"), Set.of()));
    assertEquals(
        Map.of("c", tps("t-0"), "b", tps("t-1"), "a-dynamic", tps("t-2")),
        range.assign(topics, group));
  }

  @Test
  void restartedStaticMemberWithNewMemberIdKeepsItsRange() {
    Map<String, Integer> topics = partitions("t", 6);
    Map<String, MemberSubscription> before = group(
        new MemberSubscription("m-1", "app-1", topics("t"), Set.of()),
        new MemberSubscription("m-2", "app-2", topics("t"), Set.of()),
        new MemberSubscription("m-3", "app-3", topics("t"), Set.of()));
    Map<String, MemberSubscription> after = group(
        new MemberSubscription("z-restarted", "app-1", topics("t"), Set.of()),
        new MemberSubscription("m-2", "app-2", topics("t"), Set.of()),
        new MemberSubscription("m-3", "app-3", topics("t"), Set.of()));
    assertEquals(range.assign(topics, before).get("m-1"), range.assign(topics, after).get("z-restarted"));
  }

  @Test
  void membersWithDifferentSubscriptionsShareOnlyTheirTopics() {
    Map<String, Integer> topics = partitions("t0", 3, "t1", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0")),
        new MemberSubscription("b", topics("t0", "t1")),
        new MemberSubscription("c", topics("t1")));
    Map<String, Set<TopicPartition>> result = range.assign(topics, group);
    assertValid(topics, group, result);
    assertEquals(
        Map.of("a", tps("t0-0 t0-1"), "b", tps("t0-2 t1-0 t1-1"), "c", tps("t1-2 t1-3")), result);
  }

  @Test
  void rangeIsUnbalancedAcrossTopicsAsInKafka() {
    Map<String, Integer> topics = partitions("t0", 1, "t1", 1, "t2", 1);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0", "t1", "t2")), new MemberSubscription("b", topics("t0", "t1", "t2")));
    assertEquals(Map.of("a", tps("t0-0 t1-0 t2-0"), "b", Set.of()), range.assign(topics, group));
  }
}
