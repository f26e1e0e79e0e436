package io.tributary.group.assignor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** Builders and independent checks shared by the assignor tests. */
final class AssignmentChecks {
  private AssignmentChecks() {}

  static TopicPartition tp(String topic, int partition) {
    return new TopicPartition(topic, partition);
  }

  /** Parses "t0-1 t1-0" into a sorted set. */
  static Set<TopicPartition> tps(String spec) {
    Set<TopicPartition> set = new TreeSet<>();
    for (String s : spec.trim().split("\\s+")) {
      if (!s.isEmpty()) {
        int dash = s.lastIndexOf('-');
        set.add(tp(s.substring(0, dash), Integer.parseInt(s.substring(dash + 1))));
      }
    }
    return set;
  }

  static Set<String> topics(String... names) {
    return new TreeSet<>(Arrays.asList(names));
  }

  static Map<String, Integer> partitions(Object... topicAndCount) {
    Map<String, Integer> map = new TreeMap<>();
    for (int i = 0; i < topicAndCount.length; i += 2) {
      map.put((String) topicAndCount[i], (Integer) topicAndCount[i + 1]);
    }
    return map;
  }

  static Map<String, MemberSubscription> group(MemberSubscription... members) {
    Map<String, MemberSubscription> map = new TreeMap<>();
    for (MemberSubscription m : members) {
      map.put(m.memberId(), m);
    }
    return map;
  }

  /** The same group with every member's owned partitions replaced by {@code previous} (empty when absent). */
  static Map<String, MemberSubscription> owning(
      Map<String, MemberSubscription> members, Map<String, Set<TopicPartition>> previous) {
    Map<String, MemberSubscription> map = new TreeMap<>();
    for (MemberSubscription m : members.values()) {
      map.put(m.memberId(), m.withOwnedPartitions(previous.getOrDefault(m.memberId(), Set.of())));
    }
    return map;
  }

  /** Members subscribing to {@code topic}, restricted to existing topics. */
  static boolean subscribes(MemberSubscription m, String topic, Map<String, Integer> partitionsPerTopic) {
    return m.topics().contains(topic) && partitionsPerTopic.getOrDefault(topic, 0) > 0;
  }

  /**
   * The contract of {@link PartitionAssignor#assign}: an entry for every member and no one else; every partition of
   * every subscribed existing topic assigned exactly once, to a subscriber; nothing else assigned.
   */
  static void assertValid(
      Map<String, Integer> partitionsPerTopic,
      Map<String, MemberSubscription> members,
      Map<String, Set<TopicPartition>> result) {
    assertEquals(members.keySet(), result.keySet(), "an entry for every member, and only for members");
    Set<TopicPartition> expected = new HashSet<>();
    for (Map.Entry<String, Integer> t : partitionsPerTopic.entrySet()) {
      boolean subscribed = members.values().stream().anyMatch(m -> m.topics().contains(t.getKey()));
      if (subscribed) {
        for (int p = 0; p < t.getValue(); p++) {
          expected.add(tp(t.getKey(), p));
        }
      }
    }
    Map<TopicPartition, String> seen = new HashMap<>();
    for (Map.Entry<String, Set<TopicPartition>> e : result.entrySet()) {
      MemberSubscription m = members.get(e.getKey());
      for (TopicPartition p : e.getValue()) {
        String other = seen.put(p, e.getKey());
        if (other != null) {
          fail(p + " assigned to both " + other + " and " + e.getKey() + ": " + result);
        }
        assertTrue(m.topics().contains(p.topic()),
            () -> p + " assigned to non-subscriber " + e.getKey() + ": " + result);
        assertTrue(expected.contains(p), () -> p + " does not exist or nobody subscribes to it: " + result);
      }
    }
    assertEquals(expected, seen.keySet(), "every partition assigned");
  }

  static Map<String, Integer> loads(Map<String, Set<TopicPartition>> result) {
    Map<String, Integer> loads = new TreeMap<>();
    result.forEach((k, v) -> loads.put(k, v.size()));
    return loads;
  }

  static int spread(Map<String, Set<TopicPartition>> result) {
    List<Integer> l = new ArrayList<>(loads(result).values());
    return l.isEmpty() ? 0 : Collections.max(l) - Collections.min(l);
  }

  static long sumOfSquares(Map<String, Set<TopicPartition>> result) {
    long s = 0;
    for (Set<TopicPartition> v : result.values()) {
      s += (long) v.size() * v.size();
    }
    return s;
  }

  /** Valid owners: members that claim the partition, still subscribe to its topic, and the partition exists. */
  static Map<TopicPartition, Set<String>> validOwners(
      Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members) {
    Map<TopicPartition, Set<String>> owners = new HashMap<>();
    for (MemberSubscription m : members.values()) {
      for (TopicPartition p : m.ownedPartitions()) {
        if (subscribes(m, p.topic(), partitionsPerTopic) && p.partition() < partitionsPerTopic.get(p.topic())) {
          owners.computeIfAbsent(p, k -> new TreeSet<>()).add(m.memberId());
        }
      }
    }
    return owners;
  }

  /** Number of validly owned partitions assigned to none of their owners. */
  static int moves(
      Map<String, Integer> partitionsPerTopic,
      Map<String, MemberSubscription> members,
      Map<String, Set<TopicPartition>> result) {
    Map<TopicPartition, String> assignedTo = new HashMap<>();
    result.forEach((member, set) -> set.forEach(p -> assignedTo.put(p, member)));
    int moves = 0;
    for (Map.Entry<TopicPartition, Set<String>> e : validOwners(partitionsPerTopic, members).entrySet()) {
      if (!e.getValue().contains(assignedTo.get(e.getKey()))) {
        moves++;
      }
    }
    return moves;
  }

  /**
   * Optimal balance ("as balanced as subscriptions allow"): no chain of reassignments can take a partition from a
   * member with k partitions to one with at most k - 2. Checked by a search from every member along "u holds a
   * partition of a topic v subscribes to".
   */
  static void assertNoImprovingChain(
      Map<String, Integer> partitionsPerTopic,
      Map<String, MemberSubscription> members,
      Map<String, Set<TopicPartition>> result) {
    for (String start : result.keySet()) {
      int startLoad = result.get(start).size();
      Set<String> visited = new HashSet<>(Set.of(start));
      Deque<String> queue = new ArrayDeque<>(List.of(start));
      while (!queue.isEmpty()) {
        String u = queue.poll();
        for (MemberSubscription v : members.values()) {
          if (visited.contains(v.memberId())) {
            continue;
          }
          boolean canTake = result.get(u).stream().anyMatch(p -> v.topics().contains(p.topic()));
          if (canTake) {
            if (result.get(v.memberId()).size() <= startLoad - 2) {
              fail("chain from " + start + " (" + startLoad + " partitions) to " + v.memberId() + " ("
                  + result.get(v.memberId()).size() + ") would improve balance: " + result);
            }
            visited.add(v.memberId());
            queue.add(v.memberId());
          }
        }
      }
    }
  }

  /** Members with identical (existing) subscriptions differ by at most one partition. */
  static void assertIdenticalSubscriptionsBalanced(
      Map<String, Integer> partitionsPerTopic,
      Map<String, MemberSubscription> members,
      Map<String, Set<TopicPartition>> result) {
    Map<Set<String>, List<Integer>> byEligible = new HashMap<>();
    for (MemberSubscription m : members.values()) {
      Set<String> eligible = new TreeSet<>();
      m.topics().forEach(t -> {
        if (subscribes(m, t, partitionsPerTopic)) {
          eligible.add(t);
        }
      });
      byEligible.computeIfAbsent(eligible, k -> new ArrayList<>()).add(result.get(m.memberId()).size());
    }
    for (Map.Entry<Set<String>, List<Integer>> e : byEligible.entrySet()) {
      int spread = Collections.max(e.getValue()) - Collections.min(e.getValue());
      assertTrue(spread <= 1,
          () -> "members subscribing to " + e.getKey() + " have counts " + e.getValue() + ": " + result);
    }
  }

  /** A copy of {@code members} whose map and set iteration orders are shuffled (contents unchanged). */
  static Map<String, MemberSubscription> shuffled(Map<String, MemberSubscription> members, Random random) {
    List<MemberSubscription> list = new ArrayList<>(members.values());
    Collections.shuffle(list, random);
    Map<String, MemberSubscription> map = new LinkedHashMap<>();
    for (MemberSubscription m : list) {
      map.put(m.memberId(), m);
    }
    return map;
  }

  static Map<String, Integer> shuffledTopics(Map<String, Integer> partitionsPerTopic, Random random) {
    List<String> keys = new ArrayList<>(partitionsPerTopic.keySet());
    Collections.shuffle(keys, random);
    Map<String, Integer> map = new LinkedHashMap<>();
    keys.forEach(k -> map.put(k, partitionsPerTopic.get(k)));
    return map;
  }
}
