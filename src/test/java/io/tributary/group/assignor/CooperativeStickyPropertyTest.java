package io.tributary.group.assignor;

import static io.tributary.group.assignor.AssignmentChecks.assertIdenticalSubscriptionsBalanced;
import static io.tributary.group.assignor.AssignmentChecks.assertNoImprovingChain;
import static io.tributary.group.assignor.AssignmentChecks.assertValid;
import static io.tributary.group.assignor.AssignmentChecks.moves;
import static io.tributary.group.assignor.AssignmentChecks.owning;
import static io.tributary.group.assignor.AssignmentChecks.shuffled;
import static io.tributary.group.assignor.AssignmentChecks.shuffledTopics;
import static io.tributary.group.assignor.AssignmentChecks.spread;
import static io.tributary.group.assignor.AssignmentChecks.sumOfSquares;
import static io.tributary.group.assignor.AssignmentChecks.tp;
import static io.tributary.group.assignor.AssignmentChecks.validOwners;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Property tests of {@link CooperativeStickyAssignor}: exhaustive comparison with a brute-force optimum on small
 * groups, and long randomized histories of joins, leaves, topic changes, subscription changes and conflicting claims.
 */
class CooperativeStickyPropertyTest {
  private static final String[] TOPIC_POOL = {"t0", "t1", "t2", "t3", "t4", "t5"};
  private final CooperativeStickyAssignor sticky = new CooperativeStickyAssignor();

  // -----------------------------------------------------------------------------------------------------------------
  // Brute force

  /** Best (sum of squares, moves) over every valid assignment, by exhaustive search. */
  private static long[] bruteForceOptimum(Map<String, Integer> topics, Map<String, MemberSubscription> group) {
    List<String> memberIds = new ArrayList<>(group.keySet());
    List<int[]> eligible = new ArrayList<>(); // per partition: eligible member indexes
    List<Set<String>> owners = new ArrayList<>();
    Map<TopicPartition, Set<String>> valid = validOwners(topics, group);
    for (Map.Entry<String, Integer> t : topics.entrySet()) {
      for (int p = 0; p < t.getValue(); p++) {
        List<Integer> subs = new ArrayList<>();
        for (int i = 0; i < memberIds.size(); i++) {
          if (group.get(memberIds.get(i)).topics().contains(t.getKey())) {
            subs.add(i);
          }
        }
        if (!subs.isEmpty()) {
          eligible.add(subs.stream().mapToInt(Integer::intValue).toArray());
          owners.add(valid.getOrDefault(tp(t.getKey(), p), Set.of()));
        }
      }
    }
    long[] best = {Long.MAX_VALUE, Long.MAX_VALUE};
    search(0, new int[memberIds.size()], 0, eligible, owners, memberIds, best);
    return best;
  }

  private static void search(int index, int[] load, int moves, List<int[]> eligible, List<Set<String>> owners,
      List<String> memberIds, long[] best) {
    if (index == eligible.size()) {
      long squares = 0;
      for (int l : load) {
        squares += (long) l * l;
      }
      if (squares < best[0] || (squares == best[0] && moves < best[1])) {
        best[0] = squares;
        best[1] = moves;
      }
      return;
    }
    Set<String> o = owners.get(index);
    for (int member : eligible.get(index)) {
      load[member]++;
      int move = !o.isEmpty() && !o.contains(memberIds.get(member)) ? 1 : 0;
      search(index + 1, load, moves + move, eligible, owners, memberIds, best);
      load[member]--;
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void matchesTheBruteForceOptimumOfBalanceThenStickinessOnSmallGroups(long seed) {
    Random random = new Random(seed);
    for (int round = 0; round < 60; round++) {
      Map<String, Integer> topics = new TreeMap<>();
      int budget = 2 + random.nextInt(7); // at most 8 partitions
      for (int t = 0; t < 3 && budget > 0; t++) {
        int n = random.nextInt(Math.min(budget, 4) + 1);
        topics.put("t" + t, n);
        budget -= n;
      }
      Map<String, MemberSubscription> group = new TreeMap<>();
      int members = 1 + random.nextInt(4);
      boolean identical = random.nextInt(3) == 0;
      for (int i = 0; i < members; i++) {
        Set<String> subscription = new TreeSet<>();
        for (int t = 0; t < 4; t++) {
          if (identical || random.nextBoolean()) {
            subscription.add("t" + t);
          }
        }
        Set<TopicPartition> owned = new TreeSet<>();
        for (int k = random.nextInt(5); k > 0; k--) {
          owned.add(tp("t" + random.nextInt(4), random.nextInt(5))); // conflicts and stale claims included
        }
        group.put("m" + i, new MemberSubscription("m" + i, subscription, owned));
      }
      Map<String, Set<TopicPartition>> result = sticky.assign(topics, group);
      assertValid(topics, group, result);
      long[] best = bruteForceOptimum(topics, group);
      String context = "topics " + topics + ", group " + group + " -> " + result;
      assertEquals(best[0], sumOfSquares(result), "not the best balance: " + context);
      assertEquals(best[1], moves(topics, group, result), "not the fewest moves: " + context);
    }
  }

  // -----------------------------------------------------------------------------------------------------------------
  // Randomized histories

  /** Minimum number of moves with identical subscriptions and no conflicting claims. */
  private static int minimalMovesIdentical(int partitions, List<Integer> validOwnedCounts) {
    List<Integer> owned = new ArrayList<>(validOwnedCounts);
    owned.sort(Collections.reverseOrder());
    int m = owned.size();
    int moves = 0;
    for (int i = 0; i < m; i++) {
      int quota = partitions / m + (i < partitions % m ? 1 : 0);
      moves += Math.max(0, owned.get(i) - quota);
    }
    return moves;
  }

  private static Set<String> randomSubscription(Random random) {
    Set<String> s = new TreeSet<>();
    for (String t : TOPIC_POOL) {
      if (random.nextInt(3) == 0) {
        s.add(t);
      }
    }
    if (random.nextInt(5) == 0) {
      s.add("never-created");
    }
    return s;
  }

  @ParameterizedTest(name = "identical subscriptions = {0}, seed {1}")
  @CsvSource({"true, 1", "true, 2", "true, 3", "false, 1", "false, 2", "false, 3", "false, 4"})
  void staysValidBalancedAndStickyThroughRandomChurn(boolean identical, long seed) {
    Random random = new Random(seed);
    Set<String> common = new TreeSet<>(List.of(TOPIC_POOL));
    Map<String, Integer> topics = new TreeMap<>(Map.of("t0", 4, "t1", 3));
    Map<String, MemberSubscription> group = new TreeMap<>();
    Map<String, Set<TopicPartition>> previous = Map.of();
    int nextMember = 0;
    int moved = 0;
    int rounds = 400;
    for (int round = 0; round < rounds; round++) {
      String event;
      int dice = random.nextInt(100);
      if (group.isEmpty() || dice < 25) {
        event = "join";
        String id = "m" + nextMember++;
        group.put(id, new MemberSubscription(id, identical ? common : randomSubscription(random)));
      } else if (dice < 45 && group.size() > 1) {
        event = "leave";
        List<String> ids = new ArrayList<>(group.keySet());
        group.remove(ids.get(random.nextInt(ids.size())));
      } else if (dice < 55) {
        event = "more partitions";
        String t = TOPIC_POOL[random.nextInt(TOPIC_POOL.length)];
        topics.merge(t, 1 + random.nextInt(4), Integer::sum);
      } else if (dice < 60 && !topics.isEmpty()) {
        event = "topic deleted";
        List<String> names = new ArrayList<>(topics.keySet());
        topics.remove(names.get(random.nextInt(names.size())));
      } else if (dice < 70 && !identical) {
        event = "subscription changed";
        List<String> ids = new ArrayList<>(group.keySet());
        String id = ids.get(random.nextInt(ids.size()));
        group.put(id, new MemberSubscription(id, randomSubscription(random)));
      } else {
        event = "nothing changed";
      }
      if (topics.values().stream().mapToInt(Integer::intValue).sum() > 60) {
        topics.remove(Collections.max(topics.entrySet(), Map.Entry.comparingByValue()).getKey());
      }

      Map<String, MemberSubscription> current = owning(group, previous);
      boolean conflicts = random.nextInt(8) == 0 && current.size() > 1;
      if (conflicts) { // after a failure, a member still claims partitions another member has been given
        event += " + conflicting claims";
        List<String> ids = new ArrayList<>(current.keySet());
        MemberSubscription a = current.get(ids.get(random.nextInt(ids.size())));
        MemberSubscription b = current.get(ids.get(random.nextInt(ids.size())));
        Set<TopicPartition> claims = new TreeSet<>(a.ownedPartitions());
        claims.addAll(b.ownedPartitions());
        current.put(a.memberId(), a.withOwnedPartitions(claims));
      }
      String context = "round " + round + " (" + event + "): topics " + topics + ", group " + current;

      Map<String, Set<TopicPartition>> result = sticky.assign(topics, current);
      assertValid(topics, current, result);
      assertIdenticalSubscriptionsBalanced(topics, current, result);
      assertNoImprovingChain(topics, current, result);
      checkStickiness(topics, current, result, identical, conflicts, context);

      // Deterministic, whatever the iteration order of the input.
      assertEquals(result, sticky.assign(shuffledTopics(topics, random), shuffled(current, random)), context);
      // Stable: with nothing changed the assignment stays as it is.
      assertEquals(result, sticky.assign(topics, owning(current, result)), "not stable: " + context);

      moved += moves(topics, current, result);
      previous = result;
    }
    System.out.printf("cooperative-sticky churn (identical=%s, seed %d): %d rounds, %d partition moves%n",
        identical, seed, rounds, moved);
  }

  private static void checkStickiness(
      Map<String, Integer> topics,
      Map<String, MemberSubscription> group,
      Map<String, Set<TopicPartition>> result,
      boolean identical,
      boolean conflicts,
      String context) {
    Map<TopicPartition, Set<String>> owners = validOwners(topics, group);
    Map<TopicPartition, String> assignedTo = new HashMap<>();
    result.forEach((member, set) -> set.forEach(p -> assignedTo.put(p, member)));
    Map<String, Integer> validOwned = new TreeMap<>();
    group.keySet().forEach(id -> validOwned.put(id, 0));
    owners.forEach((p, o) -> o.forEach(id -> validOwned.merge(id, 1, Integer::sum)));
    int total = assignedTo.size();

    for (Map.Entry<TopicPartition, Set<String>> e : owners.entrySet()) {
      String receiver = assignedTo.get(e.getKey());
      if (e.getValue().contains(receiver)) {
        continue;
      }
      for (String owner : e.getValue()) {
        // A partition leaves its owner only for a member that ends with no more partitions than the owner.
        assertTrue(result.get(owner).size() >= result.get(receiver).size(),
            e.getKey() + " moved from " + owner + " to a member with more partitions, " + receiver + ": " + context);
        if (identical && !conflicts) {
          // ... and with identical subscriptions only from a member that had more than its fair share, which then
          // keeps a subset of what it had and still gets at least floor(n/m).
          int share = total / group.size();
          String label = owner + " lost " + e.getKey() + " to " + receiver;
          assertTrue(validOwned.get(owner) > result.get(owner).size(), label + " without being over its share");
          assertTrue(result.get(owner).size() >= share, label + " and fell below floor(n/m): " + context);
          Set<TopicPartition> kept = new TreeSet<>(result.get(owner));
          kept.removeAll(group.get(owner).ownedPartitions());
          assertTrue(kept.isEmpty(), label + " but also received " + kept + ": " + context);
        }
      }
    }
    if (identical) {
      assertTrue(spread(result) <= 1, "unbalanced: " + context);
      if (!conflicts) {
        assertEquals(minimalMovesIdentical(total, new ArrayList<>(validOwned.values())),
            moves(topics, group, result), "more moves than needed: " + context);
      }
    }
  }
}
