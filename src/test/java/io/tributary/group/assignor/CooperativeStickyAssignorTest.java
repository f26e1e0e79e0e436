package io.tributary.group.assignor;

import static io.tributary.group.assignor.AssignmentChecks.assertIdenticalSubscriptionsBalanced;
import static io.tributary.group.assignor.AssignmentChecks.assertNoImprovingChain;
import static io.tributary.group.assignor.AssignmentChecks.assertValid;
import static io.tributary.group.assignor.AssignmentChecks.group;
import static io.tributary.group.assignor.AssignmentChecks.loads;
import static io.tributary.group.assignor.AssignmentChecks.moves;
import static io.tributary.group.assignor.AssignmentChecks.owning;
import static io.tributary.group.assignor.AssignmentChecks.partitions;
import static io.tributary.group.assignor.AssignmentChecks.spread;
import static io.tributary.group.assignor.AssignmentChecks.sumOfSquares;
import static io.tributary.group.assignor.AssignmentChecks.topics;
import static io.tributary.group.assignor.AssignmentChecks.tp;
import static io.tributary.group.assignor.AssignmentChecks.tps;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CooperativeStickyAssignorTest {
  private final CooperativeStickyAssignor sticky = new CooperativeStickyAssignor();

  private static Map<String, MemberSubscription> sameTopics(Set<String> topics, String... memberIds) {
    Map<String, MemberSubscription> group = new TreeMap<>();
    for (String id : memberIds) {
      group.put(id, new MemberSubscription(id, topics));
    }
    return group;
  }

  private static Set<TopicPartition> union(Set<TopicPartition> a, Set<TopicPartition> b) {
    Set<TopicPartition> u = new TreeSet<>(a);
    u.addAll(b);
    return u;
  }

  /** Minimum number of moves with identical subscriptions: quotas floor/ceil, the ceilings to the largest owners. */
  private static int minimalMovesIdentical(int partitions, List<Integer> validOwnedCounts) {
    List<Integer> owned = new ArrayList<>(validOwnedCounts);
    owned.sort(Collections.reverseOrder());
    int m = owned.size();
    int kept = 0;
    int totalOwned = 0;
    for (int i = 0; i < m; i++) {
      int quota = partitions / m + (i < partitions % m ? 1 : 0);
      kept += Math.min(quota, owned.get(i));
      totalOwned += owned.get(i);
    }
    return totalOwned - kept;
  }

  @Test
  void nameIsCooperativeStickyAndItIsCooperative() {
    assertEquals("cooperative-sticky", sticky.name());
    assertTrue(sticky.cooperative());
  }

  @ParameterizedTest(name = "{0} partitions, {1} members")
  @CsvSource({"12, 3", "13, 3", "2, 5", "100, 7", "1, 1", "0, 3", "64, 64"})
  void freshAssignmentGivesEveryMemberFloorOrCeilOfItsShare(int n, int m) {
    String[] ids = new String[m];
    for (int i = 0; i < m; i++) {
      ids[i] = "m" + i;
    }
    Map<String, Integer> topics = partitions("t", n);
    Map<String, MemberSubscription> group = sameTopics(topics("t"), ids);
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    for (int count : loads(result).values()) {
      assertTrue(count == n / m || count == (n + m - 1) / m, "count " + count + " in " + result);
    }
  }

  @Test
  void kafkaDocumentationExampleMemberLeavesAndTheOthersKeepAllTheyHad() {
    // Kafka's StickyAssignor javadoc: C0 [t0p0, t1p1, t3p0], C1 [t0p1, t2p0, t3p1], C2 [t1p0, t2p1]; C1 leaves.
    Map<String, Integer> topics = partitions("t0", 2, "t1", 2, "t2", 2, "t3", 2);
    Set<String> all = topics("t0", "t1", "t2", "t3");
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("C0", all, tps("t0-0 t1-1 t3-0")),
        new MemberSubscription("C2", all, tps("t1-0 t2-1")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    assertEquals(Map.of("C0", 4, "C2", 4), loads(result));
    assertTrue(result.get("C0").containsAll(tps("t0-0 t1-1 t3-0")), result.toString());
    assertTrue(result.get("C2").containsAll(tps("t1-0 t2-1")), result.toString());
  }

  @Test
  void kafkaDocumentationExampleWithDifferentSubscriptions() {
    // Kafka's StickyAssignor javadoc: t0, t1, t2 with 1, 2, 3 partitions; C0 subscribes to t0, C1 to t0-t1, C2 to all.
    Map<String, Integer> topics = partitions("t0", 1, "t1", 2, "t2", 3);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("C0", topics("t0")),
        new MemberSubscription("C1", topics("t0", "t1")),
        new MemberSubscription("C2", topics("t0", "t1", "t2")));
    Map<String, Set<TopicPartition>> first = sticky.assign(topics, group);
    assertEquals(Map.of("C0", tps("t0-0"), "C1", tps("t1-0 t1-1"), "C2", tps("t2-0 t2-1 t2-2")), first);

    // C0 leaves: round robin would give C1 [t0p0, t1p1] and C2 [t1p0, t2p0, t2p1, t2p2]; sticky keeps what it can.
    Map<String, MemberSubscription> without = owning(group, first);
    without.remove("C0");
    assertEquals(
        Map.of("C1", tps("t0-0 t1-0 t1-1"), "C2", tps("t2-0 t2-1 t2-2")), sticky.assign(topics, without));
  }

  @ParameterizedTest(name = "{0} partitions, {1} members + 1 joins")
  @CsvSource({"12, 3", "10, 3", "6, 6", "3, 5", "100, 9", "7, 2"})
  void whenAMemberJoinsOnlyThePartitionsNeededForBalanceMoveAndAllGoToIt(int n, int m) {
    Map<String, Integer> topics = partitions("t0", n / 2, "t1", n - n / 2);
    String[] ids = new String[m];
    for (int i = 0; i < m; i++) {
      ids[i] = "m" + i;
    }
    Map<String, MemberSubscription> group = sameTopics(topics.keySet(), ids);
    Map<String, Set<TopicPartition>> before = sticky.assign(topics, group);

    Map<String, MemberSubscription> joined = owning(group, before);
    joined.put("new", new MemberSubscription("new", topics.keySet()));
    Map<String, Set<TopicPartition>> after = sticky.assign(topics, joined);
    assertValid(topics, joined, after);
    assertTrue(spread(after) <= 1, after.toString());

    List<Integer> owned = new ArrayList<>();
    joined.values().forEach(s -> owned.add(s.ownedPartitions().size()));
    int expectedMoves = minimalMovesIdentical(n, owned);
    assertEquals(expectedMoves, moves(topics, joined, after), "moved partitions");
    assertEquals(expectedMoves, after.get("new").size(), "every moved partition goes to the new member");
    for (String id : ids) {
      assertTrue(before.get(id).containsAll(after.get(id)), id + " gained partitions: " + after);
    }
  }

  @Test
  void whenAMemberJoinsEachOfTheOthersGivesUpExactlyOne() {
    Map<String, Integer> topics = partitions("t0", 6, "t1", 6);
    Map<String, MemberSubscription> group = sameTopics(topics.keySet(), "a", "b", "c");
    Map<String, Set<TopicPartition>> before = sticky.assign(topics, group);
    assertEquals(Map.of("a", 4, "b", 4, "c", 4), loads(before));
    Map<String, MemberSubscription> joined = owning(group, before);
    joined.put("d", new MemberSubscription("d", topics.keySet()));
    Map<String, Set<TopicPartition>> after = sticky.assign(topics, joined);
    assertEquals(Map.of("a", 3, "b", 3, "c", 3, "d", 3), loads(after));
    assertEquals(3, moves(topics, joined, after));
  }

  @ParameterizedTest(name = "{0} partitions, {1} members, one leaves")
  @CsvSource({"12, 4", "13, 4", "5, 5", "3, 6", "100, 8"})
  void whenAMemberLeavesItsPartitionsAreSpreadAndNobodyElsesMove(int n, int m) {
    Map<String, Integer> topics = partitions("t0", n / 3, "t1", n / 3, "t2", n - 2 * (n / 3));
    String[] ids = new String[m];
    for (int i = 0; i < m; i++) {
      ids[i] = "m" + i;
    }
    Map<String, MemberSubscription> group = sameTopics(topics.keySet(), ids);
    Map<String, Set<TopicPartition>> before = sticky.assign(topics, group);
    String leaver = "m" + (m / 2);
    Map<String, MemberSubscription> remaining = owning(group, before);
    remaining.remove(leaver);
    Map<String, Set<TopicPartition>> after = sticky.assign(topics, remaining);
    assertValid(topics, remaining, after);
    assertTrue(spread(after) <= 1, after.toString());
    assertEquals(0, moves(topics, remaining, after), "partitions moved between remaining members: " + after);
    Set<TopicPartition> gained = new TreeSet<>();
    for (String id : remaining.keySet()) {
      assertTrue(after.get(id).containsAll(before.get(id)), id + " lost partitions");
      Set<TopicPartition> mine = new TreeSet<>(after.get(id));
      mine.removeAll(before.get(id));
      assertTrue(mine.size() <= 1 || before.get(leaver).size() > remaining.size(), "one member got " + mine);
      gained.addAll(mine);
    }
    assertEquals(before.get(leaver), gained, "exactly the leaver's partitions moved");
  }

  @Test
  void withUnchangedMembershipTheAssignmentIsIdentical() {
    Map<String, Integer> topics = partitions("t0", 5, "t1", 7, "t2", 3);
    Map<String, MemberSubscription> identical = sameTopics(topics.keySet(), "a", "b", "c", "d");
    Map<String, MemberSubscription> mixed = group(
        new MemberSubscription("a", topics("t0")),
        new MemberSubscription("b", topics("t0", "t1")),
        new MemberSubscription("c", topics("t1", "t2")),
        new MemberSubscription("d", topics("t2")));
    for (Map<String, MemberSubscription> group : List.of(identical, mixed)) {
      Map<String, Set<TopicPartition>> first = sticky.assign(topics, group);
      Map<String, Set<TopicPartition>> second = sticky.assign(topics, owning(group, first));
      assertEquals(first, second);
      assertEquals(second, sticky.assign(topics, owning(group, second)));
    }
  }

  @Test
  void balancedOwnedAssignmentIsKeptEvenIfItDiffersFromAFreshOne() {
    Map<String, Integer> topics = partitions("t", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t"), tps("t-3 t-1")),
        new MemberSubscription("b", topics("t"), tps("t-0 t-2")));
    assertEquals(Map.of("a", tps("t-1 t-3"), "b", tps("t-0 t-2")), sticky.assign(topics, group));
  }

  @Test
  void partitionClaimedByTwoMembersGoesToOneOfThem() {
    Map<String, Integer> topics = partitions("t", 4);
    // After a failure both a and b believe they own t-1.
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t"), tps("t-0 t-1")),
        new MemberSubscription("b", topics("t"), tps("t-1 t-2")),
        new MemberSubscription("c", topics("t"), tps("t-3")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    assertTrue(spread(result) <= 1, result.toString());
    assertEquals(0, moves(topics, group, result), result.toString());
    assertTrue(result.get("a").contains(tp("t", 1)) ^ result.get("b").contains(tp("t", 1)), result.toString());
    assertEquals(tps("t-3"), result.get("c"));
    // deterministic: the same input always resolves the same way
    for (int i = 0; i < 5; i++) {
      assertEquals(result, sticky.assign(topics, AssignmentChecks.shuffled(group, new java.util.Random(i))));
    }
  }

  @Test
  void conflictingClaimsGoToTheClaimantBalanceFavours() {
    Map<String, Integer> topics = partitions("t", 6);
    // a and b both claim t-0..t-2; a also owns t-3..t-5, so balance wants t-0..t-2 with b.
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t"), tps("t-0 t-1 t-2 t-3 t-4 t-5")),
        new MemberSubscription("b", topics("t"), tps("t-0 t-1 t-2")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertEquals(Map.of("a", tps("t-3 t-4 t-5"), "b", tps("t-0 t-1 t-2")), result);
  }

  @Test
  void everyMemberClaimingEverythingStillYieldsABalancedValidAssignment() {
    Map<String, Integer> topics = partitions("t0", 5, "t1", 4);
    Set<TopicPartition> everything = tps("t0-0 t0-1 t0-2 t0-3 t0-4 t1-0 t1-1 t1-2 t1-3");
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics.keySet(), everything),
        new MemberSubscription("b", topics.keySet(), everything),
        new MemberSubscription("c", topics.keySet(), everything));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    assertEquals(Map.of("a", 3, "b", 3, "c", 3), loads(result));
    assertEquals(0, moves(topics, group, result));
  }

  @Test
  void ownedPartitionsOfATopicNoLongerSubscribedAreReleasedAndTheRestStays() {
    Map<String, Integer> topics = partitions("t0", 4, "t1", 2);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0", "t1"), tps("t0-0 t1-0")),
        new MemberSubscription("b", topics("t0"), tps("t0-1 t0-2 t1-1")), // b unsubscribed from t1
        new MemberSubscription("c", topics("t0", "t1"), tps("t0-3")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    assertEquals(Map.of("a", tps("t0-0 t1-0"), "b", tps("t0-1 t0-2"), "c", tps("t0-3 t1-1")), result);
    assertEquals(0, moves(topics, group, result));
  }

  @Test
  void unsubscribingCanForceASwapWhenBalanceRequiresIt() {
    // a may now only consume t0, so balance (4 + 4) needs b to hand over its t0 partitions and take all of t1.
    Map<String, Integer> topics = partitions("t0", 4, "t1", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0"), tps("t0-0 t0-1 t1-0 t1-1")),
        new MemberSubscription("b", topics("t0", "t1"), tps("t0-2 t0-3 t1-2 t1-3")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertEquals(Map.of("a", tps("t0-0 t0-1 t0-2 t0-3"), "b", tps("t1-0 t1-1 t1-2 t1-3")), result);
    assertEquals(2, moves(topics, group, result));
  }

  @Test
  void claimsOnPartitionsThatNoLongerExistAreIgnored() {
    Map<String, Integer> topics = partitions("t0", 2);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0", "gone"), tps("t0-0 t0-5 gone-0")),
        new MemberSubscription("b", topics("t0"), tps("t0-1")));
    assertEquals(Map.of("a", tps("t0-0"), "b", tps("t0-1")), sticky.assign(topics, group));
  }

  @Test
  void newTopicIsSpreadWithoutMovingExistingPartitions() {
    Map<String, Integer> topics = partitions("t0", 6);
    Map<String, MemberSubscription> group = sameTopics(topics("t0", "t1"), "a", "b", "c");
    Map<String, Set<TopicPartition>> before = sticky.assign(topics, group);
    Map<String, Integer> grown = partitions("t0", 6, "t1", 3);
    Map<String, Set<TopicPartition>> after = sticky.assign(grown, owning(group, before));
    assertValid(grown, group, after);
    assertEquals(Map.of("a", 3, "b", 3, "c", 3), loads(after));
    for (String id : group.keySet()) {
      assertTrue(after.get(id).containsAll(before.get(id)));
    }
  }

  @Test
  void idleMembersStayIdleAndNothingMovesWhenAnotherIdleMemberJoins() {
    Map<String, Integer> topics = partitions("t", 2);
    Map<String, MemberSubscription> group = sameTopics(topics("t"), "a", "b", "c");
    Map<String, Set<TopicPartition>> before = sticky.assign(topics, group);
    Map<String, MemberSubscription> joined = owning(group, before);
    joined.put("d", new MemberSubscription("d", topics("t")));
    Map<String, Set<TopicPartition>> after = sticky.assign(topics, joined);
    assertEquals(0, moves(topics, joined, after));
    assertEquals(Set.of(), after.get("d"));
    assertEquals(before, Map.of("a", after.get("a"), "b", after.get("b"), "c", after.get("c")));
  }

  @Test
  void mixedSubscriptionsAreBalancedThroughChainsOfMoves() {
    // a: t0 only, b: t0 and t1, c: t1 only. a owns all 4 of t0, b owns 3 of t1's 4 and c the last one.
    // Best balance (3,3,2 or better) needs a -> b and b -> c: a chain, not a single move.
    Map<String, Integer> topics = partitions("t0", 4, "t1", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("a", topics("t0"), tps("t0-0 t0-1 t0-2 t0-3")),
        new MemberSubscription("b", topics("t0", "t1"), tps("t1-0 t1-1 t1-2")),
        new MemberSubscription("c", topics("t1"), tps("t1-3")));
    Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
    assertValid(topics, group, result);
    assertNoImprovingChain(topics, group, result);
    List<Integer> counts = new ArrayList<>(loads(result).values());
    Collections.sort(counts);
    assertEquals(List.of(2, 3, 3), counts);
    assertEquals(2, moves(topics, group, result), result.toString());
  }

  @Test
  void fastPathAndGeneralPathAgreeOnBalanceAndMoves() {
    java.util.Random random = new java.util.Random(2024);
    for (int round = 0; round < 300; round++) {
      Map<String, Integer> topics = new TreeMap<>();
      for (int t = 0; t < 1 + random.nextInt(4); t++) {
        topics.put("t" + t, random.nextInt(10));
      }
      Map<String, MemberSubscription> group = new TreeMap<>();
      Set<TopicPartition> taken = new HashSet<>();
      for (int i = 0; i < 1 + random.nextInt(6); i++) {
        Set<TopicPartition> owned = new TreeSet<>();
        for (int k = random.nextInt(8); k > 0; k--) {
          TopicPartition p = tp("t" + random.nextInt(5), random.nextInt(11));
          if (taken.add(p)) {
            owned.add(p);
          }
        }
        group.put("m" + i, new MemberSubscription("m" + i, topics.keySet(), owned));
      }
      Map<String, Set<TopicPartition>> fast = sticky.assign(topics, group, false);
      Map<String, Set<TopicPartition>> general = sticky.assign(topics, group, true);
      assertValid(topics, group, fast);
      assertValid(topics, group, general);
      assertEquals(sumOfSquares(fast), sumOfSquares(general));
      assertEquals(moves(topics, group, fast), moves(topics, group, general), "moves differ for " + group);
    }
  }

  @Test
  void largeGroupsAreAssignedQuickly() {
    // 200 members with mixed subscriptions over 40 topics x 50 partitions (2000 partitions), then churn.
    java.util.Random random = new java.util.Random(5);
    Map<String, Integer> topics = new TreeMap<>();
    for (int t = 0; t < 40; t++) {
      topics.put("topic-" + t, 50);
    }
    Map<String, MemberSubscription> group = new TreeMap<>();
    for (int i = 0; i < 200; i++) {
      Set<String> subscription = new TreeSet<>();
      for (String t : topics.keySet()) {
        if (random.nextInt(4) != 0) {
          subscription.add(t);
        }
      }
      group.put(String.format("member-%03d", i), new MemberSubscription(String.format("member-%03d", i), subscription));
    }
    long start = System.nanoTime();
    Map<String, Set<TopicPartition>> first = sticky.assign(topics, group);
    Map<String, MemberSubscription> churned = owning(group, first);
    for (int i = 0; i < 20; i++) {
      churned.remove(String.format("member-%03d", i * 7));
    }
    Map<String, Set<TopicPartition>> second = sticky.assign(topics, churned);
    long mixedMillis = (System.nanoTime() - start) / 1_000_000;
    assertValid(topics, group, first);
    assertValid(topics, churned, second);
    assertIdenticalSubscriptionsBalanced(topics, churned, second);

    // 1000 members with mixed subscriptions over 100 topics x 100 partitions (10000 partitions).
    Map<String, Integer> wide = new TreeMap<>();
    for (int t = 0; t < 100; t++) {
      wide.put("wide-" + t, 100);
    }
    Map<String, MemberSubscription> crowd = new TreeMap<>();
    for (int i = 0; i < 1000; i++) {
      Set<String> subscription = new TreeSet<>();
      for (String t : wide.keySet()) {
        if (random.nextInt(4) != 0) {
          subscription.add(t);
        }
      }
      crowd.put("c" + i, new MemberSubscription("c" + i, subscription));
    }
    start = System.nanoTime();
    Map<String, Set<TopicPartition>> crowdResult = sticky.assign(wide, crowd);
    long crowdMillis = (System.nanoTime() - start) / 1_000_000;
    assertValid(wide, crowd, crowdResult);
    assertTrue(spread(crowdResult) <= 1, "10000 partitions over 1000 members: " + loads(crowdResult).values());

    // 1000 members, identical subscriptions, 10000 partitions.
    Map<String, Integer> big = new TreeMap<>();
    for (int t = 0; t < 100; t++) {
      big.put("big-" + t, 100);
    }
    Map<String, MemberSubscription> many = new TreeMap<>();
    for (int i = 0; i < 1000; i++) {
      many.put("m" + i, new MemberSubscription("m" + i, big.keySet()));
    }
    start = System.nanoTime();
    Map<String, Set<TopicPartition>> bigResult = sticky.assign(big, many);
    long identicalMillis = (System.nanoTime() - start) / 1_000_000;
    assertEquals(0, spread(bigResult));
    System.out.printf("cooperative-sticky: 2000 partitions/200 mixed members, 2 rounds: %d ms; 10000 partitions/1000 "
        + "mixed members: %d ms; 10000 partitions/1000 identical members: %d ms%n",
        mixedMillis, crowdMillis, identicalMillis);
    assertTrue(mixedMillis < 10_000, "too slow: " + mixedMillis + " ms");
    assertTrue(crowdMillis < 20_000, "too slow: " + crowdMillis + " ms");
    assertTrue(identicalMillis < 5_000, "too slow: " + identicalMillis + " ms");
  }

  @Test
  void sameInputGivesSameOutputAcrossInstances() {
    Map<String, Integer> topics = partitions("t0", 9, "t1", 4);
    Map<String, MemberSubscription> group = group(
        new MemberSubscription("x", topics("t0"), tps("t0-1 t0-2")),
        new MemberSubscription("y", topics("t0", "t1"), tps("t0-2 t1-3")),
        new MemberSubscription("z", topics("t1"), Set.of()));
    Map<String, Set<TopicPartition>> a = new CooperativeStickyAssignor().assign(topics, group);
    Map<String, Set<TopicPartition>> b = new CooperativeStickyAssignor().assign(topics, new HashMap<>(group));
    assertEquals(a, b);
  }
}
