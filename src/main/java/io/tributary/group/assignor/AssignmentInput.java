package io.tributary.group.assignor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The validated, normalized input of an assignment, shared by the assignors: members in a fixed order, the topics
 * that count (subscribed by someone and existing with at least one partition) and, per member, the subscribed topics
 * that count. Everything is sorted so that no result depends on the iteration order of the caller's maps.
 */
final class AssignmentInput {

  /**
   * Kafka's member order ({@code AbstractPartitionAssignor.MemberInfo#compareTo}): static members (with a
   * {@code group.instance.id}) first, ordered by instance id, then dynamic members ordered by member id. Ordering
   * static members by instance id keeps a restarted static member (new member id, same instance id) in the same
   * place, hence with the same partitions. Ties (equal instance ids, which the coordinator should never allow) are
   * broken by member id so the order is total.
   */
  static final Comparator<MemberSubscription> KAFKA_MEMBER_ORDER = (a, b) -> {
    String ia = a.groupInstanceId();
    String ib = b.groupInstanceId();
    if (ia != null && ib != null) {
      int c = ia.compareTo(ib);
      return c != 0 ? c : a.memberId().compareTo(b.memberId());
    } else if (ia != null) {
      return -1;
    } else if (ib != null) {
      return 1;
    }
    return a.memberId().compareTo(b.memberId());
  };

  /** Members sorted by member id. */
  final List<MemberSubscription> members;

  /** Topics subscribed by at least one member and existing with at least one partition, with their counts. */
  final SortedMap<String, Integer> topics;

  /** Per member id: the member's subscribed topics that are in {@link #topics}. */
  final Map<String, SortedSet<String>> eligibleTopics;

  private AssignmentInput(
      List<MemberSubscription> members, SortedMap<String, Integer> topics, Map<String, SortedSet<String>> eligible) {
    this.members = members;
    this.topics = topics;
    this.eligibleTopics = eligible;
  }

  static AssignmentInput of(Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members) {
    Objects.requireNonNull(partitionsPerTopic, "partitionsPerTopic");
    Objects.requireNonNull(members, "members");
    for (Map.Entry<String, Integer> e : partitionsPerTopic.entrySet()) {
      Objects.requireNonNull(e.getKey(), "topic name in partitionsPerTopic");
      Integer count = Objects.requireNonNull(e.getValue(), () -> "partition count of topic " + e.getKey());
      if (count < 0) {
        throw new IllegalArgumentException("partition count of topic " + e.getKey() + " is negative: " + count);
      }
    }
    List<MemberSubscription> sorted = new ArrayList<>(members.size());
    for (Map.Entry<String, MemberSubscription> e : members.entrySet()) {
      String key = Objects.requireNonNull(e.getKey(), "member id key");
      MemberSubscription m = Objects.requireNonNull(e.getValue(), () -> "subscription of member " + key);
      if (!key.equals(m.memberId())) {
        throw new IllegalArgumentException(
            "member map key '" + key + "' differs from the subscription's member id '" + m.memberId() + "'");
      }
      sorted.add(m);
    }
    sorted.sort(Comparator.comparing(MemberSubscription::memberId));

    SortedMap<String, Integer> topics = new TreeMap<>();
    Map<String, SortedSet<String>> eligible = new TreeMap<>();
    for (MemberSubscription m : sorted) {
      SortedSet<String> mine = new TreeSet<>();
      for (String t : m.topics()) {
        Integer count = partitionsPerTopic.get(t);
        if (count != null && count > 0) {
          mine.add(t);
          topics.put(t, count);
        }
      }
      eligible.put(m.memberId(), Collections.unmodifiableSortedSet(mine));
    }
    return new AssignmentInput(
        Collections.unmodifiableList(sorted),
        Collections.unmodifiableSortedMap(topics),
        Collections.unmodifiableMap(eligible));
  }

  /** The members in {@link #KAFKA_MEMBER_ORDER}. */
  List<MemberSubscription> membersInKafkaOrder() {
    List<MemberSubscription> list = new ArrayList<>(members);
    list.sort(KAFKA_MEMBER_ORDER);
    return list;
  }

  /** Whether member {@code memberId} subscribes to {@code topic} and the topic counts. */
  boolean isEligible(String memberId, String topic) {
    SortedSet<String> mine = eligibleTopics.get(memberId);
    return mine != null && mine.contains(topic);
  }

  /** Total number of partitions to assign. */
  int totalPartitions() {
    int n = 0;
    for (int c : topics.values()) {
      n += c;
    }
    return n;
  }

  /** A mutable result with an empty sorted set for every member. */
  Map<String, SortedSet<TopicPartition>> emptyResult() {
    Map<String, SortedSet<TopicPartition>> result = new TreeMap<>();
    for (MemberSubscription m : members) {
      result.put(m.memberId(), new TreeSet<>());
    }
    return result;
  }

  /** Freezes a result built from {@link #emptyResult()}. */
  static Map<String, Set<TopicPartition>> freeze(Map<String, SortedSet<TopicPartition>> result) {
    SortedMap<String, Set<TopicPartition>> frozen = new TreeMap<>();
    for (Map.Entry<String, SortedSet<TopicPartition>> e : result.entrySet()) {
      frozen.put(e.getKey(), Collections.unmodifiableSortedSet(e.getValue()));
    }
    return Collections.unmodifiableSortedMap(frozen);
  }
}
