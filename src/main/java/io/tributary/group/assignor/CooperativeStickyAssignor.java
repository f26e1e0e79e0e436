package io.tributary.group.assignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * The {@code "cooperative-sticky"} assignor (the default), with the semantics of Kafka's
 * {@code CooperativeStickyAssignor}: an assignment that is as balanced as the subscriptions allow and, among those,
 * moves as few partitions as possible away from their current owners.
 *
 * <h2>Guarantees</h2>
 * A partition is <em>owned</em> by a member when it is in the member's {@link MemberSubscription#ownedPartitions()},
 * the member still subscribes to its topic and the partition still exists; other claims are ignored. A partition
 * <em>moves</em> when it has owners and is assigned to none of them.
 * <ol>
 *   <li><b>Complete and exclusive</b>, as every {@link PartitionAssignor}.</li>
 *   <li><b>Balanced, as far as the subscriptions allow.</b> The members' partition counts minimize the sum of their
 *       squares over all valid assignments. Equivalently, no chain of reassignments (member A gives a partition to B,
 *       who gives one to C, ...) can take a partition from a member with {@code k} partitions to one with at most
 *       {@code k - 2}; such an assignment also has the smallest possible maximum and the largest possible minimum
 *       count. In particular members with identical subscriptions differ by at most one partition, and when every
 *       member subscribes to the same topics each gets {@code floor(n/m)} or {@code ceil(n/m)} of the {@code n}
 *       partitions.</li>
 *   <li><b>Maximally sticky.</b> Among the most balanced assignments it returns one with the fewest moves: a
 *       partition stays with its owner unless balance requires moving it. With unchanged membership, subscriptions
 *       and topics the assignment is identical to the owned partitions (so repeated rebalances are stable). A
 *       partition moves only from a member that ends with at least as many partitions as the member receiving it.
 *       When all members subscribe to the same topics: a member that joins takes only the partitions balance needs
 *       and nothing else moves; the partitions of a member that leaves are spread over the others and nothing else
 *       moves; a member loses partitions only when it owned more than its final share, and then it gains none. With
 *       different subscriptions, optimal balance can require a chain of moves (A gives to B, B gives to C), which is
 *       then as short as possible.</li>
 *   <li><b>Conflicting claims resolved.</b> A partition claimed by several members (which can happen after failures)
 *       goes to one of them unless balance requires otherwise. Kafka breaks such ties with the claimants'
 *       generations; here the balance and then the fixed order below decide.</li>
 *   <li><b>Deterministic.</b> Ties are broken by member id and partition order, never by iteration order or
 *       randomness.</li>
 * </ol>
 *
 * <h2>Cooperative</h2>
 * {@link #cooperative()} is true. The result is the <em>target</em> assignment; this class does not implement
 * Kafka's two-phase protocol (first revoke, then assign in a follow-up rebalance). The group coordinator turns the
 * target into incremental changes: each member gives up {@code owned - target} and, once those are released, the
 * receivers get {@code target - owned}; partitions in both keep being consumed throughout the rebalance.
 *
 * <h2>Algorithm</h2>
 * When every member subscribes to the same (existing) topics and no partition is claimed twice — the common case —
 * the assignment is computed directly in {@code O(n log n)}, as Kafka's "constrained" sticky assignment: quotas of
 * {@code floor(n/m)} and {@code ceil(n/m)}, the larger quotas going to the members that own the most; each member
 * keeps up to its quota of owned partitions (the lowest ones, in {@link TopicPartition} order); the rest is dealt
 * round-robin to the members below their quota. Otherwise the assignment is an exact minimum-cost flow
 * (primal-dual: shortest paths with potentials, then blocking flows) over a compact network — partition classes
 * (same topic, same owners), one hub per topic, members — whose cost is {@code (n + 1) * sum(count^2) + moves}, so
 * balance always comes first and stickiness second. Kafka's general sticky algorithm improves balance by moving
 * single partitions and so can stop short of the best balance with some mixed subscriptions; this one is optimal in
 * both respects. Measured: 10,000 partitions over 1,000 members with mixed subscriptions in a few hundred
 * milliseconds; the identical-subscription path in tens of milliseconds.
 */
public final class CooperativeStickyAssignor implements PartitionAssignor {

  /** This assignor's name. */
  public static final String NAME = "cooperative-sticky";

  /** Creates the (stateless) assignor; {@link Assignors#byName(String)} hands out a shared instance. */
  public CooperativeStickyAssignor() {}

  @Override
  public String name() {
    return NAME;
  }

  /** Always true. */
  @Override
  public boolean cooperative() {
    return true;
  }

  @Override
  public Map<String, Set<TopicPartition>> assign(
      Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members) {
    return assign(partitionsPerTopic, members, false);
  }

  /** As {@link #assign(Map, Map)}; {@code forceGeneral} skips the fast path (tests compare both). */
  Map<String, Set<TopicPartition>> assign(
      Map<String, Integer> partitionsPerTopic, Map<String, MemberSubscription> members, boolean forceGeneral) {
    AssignmentInput input = AssignmentInput.of(partitionsPerTopic, members);
    Map<String, SortedSet<TopicPartition>> result = input.emptyResult();
    if (!input.topics.isEmpty()) {
      SortedMap<TopicPartition, List<String>> owners = owners(input);
      boolean conflicts = owners.values().stream().anyMatch(list -> list.size() > 1);
      if (!forceGeneral && !conflicts && identicalSubscriptions(input)) {
        assignIdentical(input, owners, result);
      } else {
        new FlowAssignment(input, owners).solve(result);
      }
    }
    return AssignmentInput.freeze(result);
  }

  @Override
  public String toString() {
    return NAME;
  }

  /** Valid owners of each owned partition, member ids sorted. Partitions nobody validly owns are absent. */
  private static SortedMap<TopicPartition, List<String>> owners(AssignmentInput input) {
    SortedMap<TopicPartition, List<String>> owners = new TreeMap<>();
    for (MemberSubscription m : input.members) { // sorted by member id, so each list is sorted too
      for (TopicPartition tp : m.ownedPartitions()) {
        Integer count = input.topics.get(tp.topic());
        if (count != null && tp.partition() < count && input.isEligible(m.memberId(), tp.topic())) {
          owners.computeIfAbsent(tp, k -> new ArrayList<>(1)).add(m.memberId());
        }
      }
    }
    return owners;
  }

  private static boolean identicalSubscriptions(AssignmentInput input) {
    SortedSet<String> first = input.eligibleTopics.get(input.members.get(0).memberId());
    for (MemberSubscription m : input.members) {
      if (!input.eligibleTopics.get(m.memberId()).equals(first)) {
        return false;
      }
    }
    return true;
  }

  private static List<TopicPartition> allPartitions(AssignmentInput input) {
    List<TopicPartition> all = new ArrayList<>(input.totalPartitions());
    for (Map.Entry<String, Integer> t : input.topics.entrySet()) {
      for (int p = 0; p < t.getValue(); p++) {
        all.add(new TopicPartition(t.getKey(), p));
      }
    }
    return all;
  }

  // -----------------------------------------------------------------------------------------------------------------
  // Fast path: identical subscriptions, no conflicting claims

  private static void assignIdentical(
      AssignmentInput input,
      SortedMap<TopicPartition, List<String>> owners,
      Map<String, SortedSet<TopicPartition>> result) {
    List<TopicPartition> all = allPartitions(input);
    int n = all.size();
    int m = input.members.size();
    int minQuota = n / m;
    int withExtra = n % m; // that many members get minQuota + 1

    Map<String, List<TopicPartition>> owned = new HashMap<>();
    for (MemberSubscription member : input.members) {
      owned.put(member.memberId(), new ArrayList<>());
    }
    List<TopicPartition> pool = new ArrayList<>();
    for (TopicPartition tp : all) {
      List<String> o = owners.get(tp);
      if (o == null) {
        pool.add(tp);
      } else {
        owned.get(o.get(0)).add(tp); // exactly one owner here; lists come out sorted
      }
    }

    // The larger quotas go to the members that own the most: that keeps the most partitions in place.
    List<String> byOwned = new ArrayList<>();
    for (MemberSubscription member : input.members) {
      byOwned.add(member.memberId());
    }
    byOwned.sort(Comparator.comparingInt((String id) -> -owned.get(id).size()).thenComparing(id -> id));
    Map<String, Integer> need = new LinkedHashMap<>(); // member id order
    Map<String, Integer> quota = new HashMap<>();
    for (int i = 0; i < byOwned.size(); i++) {
      quota.put(byOwned.get(i), minQuota + (i < withExtra ? 1 : 0));
    }
    for (MemberSubscription member : input.members) {
      String id = member.memberId();
      List<TopicPartition> mine = owned.get(id);
      int q = quota.get(id);
      int keep = Math.min(q, mine.size());
      result.get(id).addAll(mine.subList(0, keep));
      pool.addAll(mine.subList(keep, mine.size()));
      if (q > keep) {
        need.put(id, q - keep);
      }
    }
    pool.sort(null);

    // Deal the pool round-robin to the members below their quota.
    List<String> needy = new ArrayList<>(need.keySet());
    int[] remaining = new int[needy.size()];
    for (int i = 0; i < needy.size(); i++) {
      remaining[i] = need.get(needy.get(i));
    }
    int cursor = 0;
    for (TopicPartition tp : pool) {
      while (remaining[cursor] == 0) {
        cursor = (cursor + 1) % needy.size();
      }
      result.get(needy.get(cursor)).add(tp);
      remaining[cursor]--;
      cursor = (cursor + 1) % needy.size();
    }
  }

  // -----------------------------------------------------------------------------------------------------------------
  // General path: minimum-cost flow

  /**
   * Network: source → partition class (partitions of one topic with the same owners; capacity = class size) → each
   * owner (cost 0) or → the topic's hub (cost 1: a move); source → hub for unowned partitions (cost 0); hub → every
   * member subscribing to the topic (cost 0); member → sink with convex cost: the k-th partition (k from 0) of a member
   * costs {@code weight * (2k + 1)}, so a member with c partitions costs {@code weight * c^2}. With {@code weight = n +
   * 1} a better balance always outweighs any number of moves.
   *
   * <p>Primal-dual: each phase runs Dijkstra on reduced costs (node potentials keep them non-negative) and then pushes
   * a blocking flow over the admissible arcs (reduced cost 0), so one phase fills every member at the current "water
   * level" at once. The sink arcs are implicit: of a member's parallel unit arcs only the next one matters, and the
   * reverse of a used one is never on a source-sink path.
   */
  private static final class FlowAssignment {
    private static final int SOURCE = 0;
    private static final int SINK = 1;
    private static final long INF = Long.MAX_VALUE / 4;

    private final AssignmentInput input;
    private final List<String> memberIds = new ArrayList<>();
    private final List<String> topicNames;
    private final int members;
    private final int topicCount;
    private final int total;
    private final long weight;

    /** Classes: topic index, owners (member indexes), partitions (sorted). */
    private final List<int[]> classOwners = new ArrayList<>();
    private final List<Integer> classTopic = new ArrayList<>();
    private final List<List<TopicPartition>> classPartitions = new ArrayList<>();
    private final List<List<TopicPartition>> unowned = new ArrayList<>();

    // Graph (arc pairs: a and a ^ 1)
    private int nodes;
    private int[] head;
    private int[] next = new int[16];
    private int[] to = new int[16];
    private int[] cap = new int[16];
    private long[] cost = new long[16];
    private int arcs;

    private int[] load;
    private long[] potential;
    private long[] dist;
    private int[] level;
    private int[] iter;
    private int[] pathArcs;
    private int[] pathNodes;
    private int[] queue;

    FlowAssignment(AssignmentInput input, SortedMap<TopicPartition, List<String>> owners) {
      this.input = input;
      for (MemberSubscription m : input.members) {
        memberIds.add(m.memberId());
      }
      this.topicNames = new ArrayList<>(input.topics.keySet());
      this.members = memberIds.size();
      this.topicCount = topicNames.size();
      this.total = input.totalPartitions();
      this.weight = total + 1L;

      Map<String, Integer> memberIndex = new HashMap<>();
      for (int i = 0; i < members; i++) {
        memberIndex.put(memberIds.get(i), i);
      }
      for (int t = 0; t < topicCount; t++) {
        String topic = topicNames.get(t);
        Map<List<String>, List<TopicPartition>> classes = new LinkedHashMap<>();
        List<TopicPartition> free = new ArrayList<>();
        for (int p = 0; p < input.topics.get(topic); p++) {
          TopicPartition tp = new TopicPartition(topic, p);
          List<String> o = owners.get(tp);
          if (o == null) {
            free.add(tp);
          } else {
            classes.computeIfAbsent(o, k -> new ArrayList<>()).add(tp);
          }
        }
        unowned.add(free);
        for (Map.Entry<List<String>, List<TopicPartition>> c : classes.entrySet()) {
          classOwners.add(c.getKey().stream().mapToInt(memberIndex::get).toArray());
          classTopic.add(t);
          classPartitions.add(c.getValue());
        }
      }
    }

    private int memberNode(int i) {
      return 2 + i;
    }

    private int hubNode(int t) {
      return 2 + members + t;
    }

    private int classNode(int c) {
      return 2 + members + topicCount + c;
    }

    private int addArc(int from, int toNode, int capacity, long arcCost) {
      if (arcs + 2 > to.length) {
        int size = to.length * 2;
        next = Arrays.copyOf(next, size);
        to = Arrays.copyOf(to, size);
        cap = Arrays.copyOf(cap, size);
        cost = Arrays.copyOf(cost, size);
      }
      int a = arcs;
      to[a] = toNode;
      cap[a] = capacity;
      cost[a] = arcCost;
      next[a] = head[from];
      head[from] = a;
      to[a + 1] = from;
      cap[a + 1] = 0;
      cost[a + 1] = -arcCost;
      next[a + 1] = head[toNode];
      head[toNode] = a + 1;
      arcs += 2;
      return a;
    }

    void solve(Map<String, SortedSet<TopicPartition>> result) {
      int classes = classPartitions.size();
      nodes = 2 + members + topicCount + classes;
      head = new int[nodes];
      Arrays.fill(head, -1);

      // Arcs are prepended to adjacency lists; add them in reverse of the preferred scan order so that scans run in
      // ascending member / topic / class order (only matters for tie-breaking, which must merely be deterministic).
      int[] hubArcs = new int[topicCount * members];
      Arrays.fill(hubArcs, -1);
      for (int t = topicCount - 1; t >= 0; t--) {
        String topic = topicNames.get(t);
        for (int i = members - 1; i >= 0; i--) {
          if (input.isEligible(memberIds.get(i), topic)) {
            hubArcs[t * members + i] = addArc(hubNode(t), memberNode(i), total, 0);
          }
        }
      }
      int[] moveArcs = new int[classes];
      int[][] keepArcs = new int[classes][];
      for (int c = classes - 1; c >= 0; c--) {
        int size = classPartitions.get(c).size();
        moveArcs[c] = addArc(classNode(c), hubNode(classTopic.get(c)), size, 1);
        int[] o = classOwners.get(c);
        keepArcs[c] = new int[o.length];
        for (int k = o.length - 1; k >= 0; k--) {
          keepArcs[c][k] = addArc(classNode(c), memberNode(o[k]), size, 0);
        }
        addArc(SOURCE, classNode(c), size, 0);
      }
      for (int t = topicCount - 1; t >= 0; t--) {
        if (!unowned.get(t).isEmpty()) {
          addArc(SOURCE, hubNode(t), unowned.get(t).size(), 0);
        }
      }

      load = new int[members];
      potential = new long[nodes];
      dist = new long[nodes];
      level = new int[nodes];
      iter = new int[nodes];
      pathArcs = new int[nodes + 1];
      pathNodes = new int[nodes + 1];
      queue = new int[nodes];
      int flow = 0;
      while (flow < total) {
        shortestPath();
        int pushed = blockingFlows();
        if (pushed == 0) {
          throw new IllegalStateException("no admissible path after a shortest-path phase");
        }
        flow += pushed;
      }

      // Owners keep what flowed to them directly; the rest of each class joins its topic's pool.
      List<List<TopicPartition>> pools = new ArrayList<>();
      for (int t = 0; t < topicCount; t++) {
        pools.add(new ArrayList<>(unowned.get(t)));
      }
      for (int c = 0; c < classes; c++) {
        List<TopicPartition> parts = classPartitions.get(c);
        int[] o = classOwners.get(c);
        int pos = 0;
        for (int k = 0; k < o.length; k++) {
          int kept = cap[keepArcs[c][k] ^ 1];
          result.get(memberIds.get(o[k])).addAll(parts.subList(pos, pos + kept));
          pos += kept;
        }
        pools.get(classTopic.get(c)).addAll(parts.subList(pos, parts.size()));
      }
      for (int t = 0; t < topicCount; t++) {
        List<TopicPartition> pool = pools.get(t);
        pool.sort(null);
        int pos = 0;
        for (int i = 0; i < members; i++) {
          int a = hubArcs[t * members + i];
          if (a >= 0) {
            int given = cap[a ^ 1];
            result.get(memberIds.get(i)).addAll(pool.subList(pos, pos + given));
            pos += given;
          }
        }
        if (pos != pool.size()) {
          throw new IllegalStateException("flow does not account for every partition of topic " + topicNames.get(t));
        }
      }
    }

    /** Dijkstra on reduced costs from the source, stopping once the sink is settled; then updates potentials. */
    private void shortestPath() {
      Arrays.fill(dist, INF);
      Heap heap = new Heap(nodes);
      dist[SOURCE] = 0;
      heap.push(0, SOURCE);
      boolean[] settled = new boolean[nodes];
      while (!heap.isEmpty()) {
        long d = heap.topKey();
        int u = heap.pop();
        if (settled[u] || d > dist[u]) {
          continue;
        }
        settled[u] = true;
        if (u == SINK) {
          break;
        }
        for (int a = head[u]; a >= 0; a = next[a]) {
          if (cap[a] > 0) {
            int v = to[a];
            long reduced = cost[a] + potential[u] - potential[v];
            relax(u, v, d, reduced, heap);
          }
        }
        int member = u - 2;
        if (member >= 0 && member < members) {
          long reduced = weight * (2L * load[member] + 1) + potential[u] - potential[SINK];
          relax(u, SINK, d, reduced, heap);
        }
      }
      if (!settled[SINK]) {
        throw new IllegalStateException("no augmenting path: a partition has no eligible member");
      }
      long sinkDist = dist[SINK];
      for (int v = 0; v < nodes; v++) {
        potential[v] += Math.min(dist[v], sinkDist);
      }
    }

    private void relax(int u, int v, long d, long reduced, Heap heap) {
      if (reduced < 0) {
        throw new IllegalStateException("negative reduced cost " + reduced + " on arc " + u + "->" + v);
      }
      long nd = d + reduced;
      if (nd < dist[v]) {
        dist[v] = nd;
        heap.push(nd, v);
      }
    }

    /** Reduced cost of the implicit arc from member node {@code u} to the sink (its next partition). */
    private long sinkReducedCost(int u) {
      return weight * (2L * load[u - 2] + 1) + potential[u] - potential[SINK];
    }

    private boolean isMemberNode(int u) {
      return u >= 2 && u < 2 + members;
    }

    /**
     * Pushes as many units as possible along admissible arcs (residual, reduced cost 0), Dinic-style: BFS levels, then
     * blocking flows with current-arc pointers, until the sink is out of reach. Every path carries one unit, as each
     * member's next sink unit is admissible only until it is used (the one after costs {@code 2 * weight} more).
     */
    private int blockingFlows() {
      int pushed = 0;
      while (buildLevels()) {
        System.arraycopy(head, 0, iter, 0, nodes);
        while (pushOne()) {
          pushed++;
        }
      }
      return pushed;
    }

    private boolean buildLevels() {
      Arrays.fill(level, -1);
      level[SOURCE] = 0;
      int qHead = 0;
      int qTail = 0;
      queue[qTail++] = SOURCE;
      while (qHead < qTail) {
        int u = queue[qHead++];
        if (isMemberNode(u) && level[SINK] < 0 && sinkReducedCost(u) == 0) {
          level[SINK] = level[u] + 1;
        }
        for (int a = head[u]; a >= 0; a = next[a]) {
          int v = to[a];
          if (cap[a] > 0 && level[v] < 0 && v != SINK && cost[a] + potential[u] - potential[v] == 0) {
            level[v] = level[u] + 1;
            queue[qTail++] = v;
          }
        }
      }
      return level[SINK] >= 0;
    }

    /** One augmenting path in the level graph (iterative DFS), pushing one unit; false when there is none left. */
    private boolean pushOne() {
      int depth = 0;
      int u = SOURCE;
      while (true) {
        if (isMemberNode(u) && level[SINK] == level[u] + 1 && sinkReducedCost(u) == 0) {
          load[u - 2]++;
          for (int i = 0; i < depth; i++) {
            cap[pathArcs[i]]--;
            cap[pathArcs[i] ^ 1]++;
          }
          return true;
        }
        int a = iter[u];
        while (a >= 0) {
          int v = to[a];
          if (cap[a] > 0 && level[v] == level[u] + 1 && cost[a] + potential[u] - potential[v] == 0) {
            break;
          }
          a = next[a];
        }
        iter[u] = a;
        if (a >= 0) {
          pathNodes[depth] = u;
          pathArcs[depth++] = a;
          u = to[a];
        } else {
          level[u] = -1; // dead end for the rest of this level graph
          if (depth == 0) {
            return false;
          }
          u = pathNodes[--depth];
          iter[u] = next[iter[u]];
        }
      }
    }
  }

  /** A binary min-heap of (key, node) pairs ordered by key then node, with lazy deletion by the caller. */
  private static final class Heap {
    private long[] keys;
    private int[] values;
    private int size;

    Heap(int capacity) {
      keys = new long[Math.max(4, capacity)];
      values = new int[keys.length];
    }

    boolean isEmpty() {
      return size == 0;
    }

    long topKey() {
      return keys[0];
    }

    void push(long key, int value) {
      if (size == keys.length) {
        keys = Arrays.copyOf(keys, size * 2);
        values = Arrays.copyOf(values, size * 2);
      }
      int i = size++;
      while (i > 0) {
        int parent = (i - 1) >>> 1;
        if (!less(key, value, keys[parent], values[parent])) {
          break;
        }
        keys[i] = keys[parent];
        values[i] = values[parent];
        i = parent;
      }
      keys[i] = key;
      values[i] = value;
    }

    int pop() {
      int top = values[0];
      size--;
      long key = keys[size];
      int value = values[size];
      int i = 0;
      while (true) {
        int child = 2 * i + 1;
        if (child >= size) {
          break;
        }
        if (child + 1 < size && less(keys[child + 1], values[child + 1], keys[child], values[child])) {
          child++;
        }
        if (!less(keys[child], values[child], key, value)) {
          break;
        }
        keys[i] = keys[child];
        values[i] = values[child];
        i = child;
      }
      keys[i] = key;
      values[i] = value;
      return top;
    }

    private static boolean less(long k1, int v1, long k2, int v2) {
      return k1 < k2 || (k1 == k2 && v1 < v2);
    }
  }
}
