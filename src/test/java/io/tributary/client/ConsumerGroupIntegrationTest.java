package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.TestNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Consumer groups end to end in one JVM: a broker node, and consumers each in their own client ActorSystem (as in
 * separate client JVMs, talking Artery to the gateway). Consumers are polled from the test thread in turn.
 */
class ConsumerGroupIntegrationTest {
  private static BrokerNode node;
  private static String bootstrap;
  private static final AtomicInteger N = new AtomicInteger();
  private final List<TributaryClient> clients = new ArrayList<>();

  @BeforeAll
  static void start() {
    node = TestNodes.start(TestNodes.tempDataDir(), Map.of(
        "tributary.broker.group.initial.rebalance.delay.ms", 200,
        "tributary.broker.group.min.session.timeout.ms", 1000,
        "tributary.broker.offsets.topic.num.partitions", 3,
        "tributary.group.metadata-refresh-interval", "500ms"));
    bootstrap = node.bootstrapServer();
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @org.junit.jupiter.api.AfterEach
  void closeClients() {
    for (TributaryClient c : clients) {
      c.close();
    }
    clients.clear();
  }

  private TributaryClient newClient() {
    TributaryClient c = TributaryClient.connect(bootstrap, Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 20_000));
    clients.add(c);
    return c;
  }

  private String topicWithRecords(int partitions, int perPartition) {
    String t = "cgi-" + N.incrementAndGet();
    TributaryClient c = newClient();
    c.admin().createTopic(t, partitions, (short) 1, Map.of());
    try (Producer<String, String> p = c.producer(Map.of(), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < partitions * perPartition; i++) {
        p.send(new ProducerRecord<>(t, i % partitions, "k", "v" + i));
      }
      p.flush();
    }
    return t;
  }

  private Consumer<String, String> member(String group, String assignor, Map<String, Object> extra) {
    Map<String, Object> cfg = new HashMap<>(Map.of(
        ClientConfig.GROUP_ID, group,
        ClientConfig.AUTO_OFFSET_RESET, "earliest",
        ClientConfig.HEARTBEAT_INTERVAL_MS, 300,
        ClientConfig.SESSION_TIMEOUT_MS, 5000,
        ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, assignor));
    cfg.putAll(extra);
    return newClient().consumer(cfg, Deserializer.string(), Deserializer.string());
  }

  /** Polls every consumer in turn until {@code done} holds; asserts no partition is assigned to two at once. */
  private static void pollUntil(String what, List<Consumer<String, String>> consumers,
      Map<String, Set<Long>> seen, BooleanSupplier done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what + "; assignments "
            + consumers.stream().map(Consumer::assignment).toList());
      }
      for (Consumer<String, String> c : consumers) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(30))) {
          seen.computeIfAbsent(r.topic() + "-" + r.partition(), k -> new HashSet<>()).add(r.offset());
        }
      }
      Set<TopicPartition> union = new HashSet<>();
      int total = 0;
      for (Consumer<String, String> c : consumers) {
        union.addAll(c.assignment());
        total += c.assignment().size();
      }
      assertEquals(union.size(), total, "a partition is assigned to two members: "
          + consumers.stream().map(Consumer::assignment).toList());
    }
  }

  private static int count(Map<String, Set<Long>> seen) {
    return seen.values().stream().mapToInt(Set::size).sum();
  }

  @ParameterizedTest
  @ValueSource(strings = {"range", "roundrobin", "cooperative-sticky"})
  void membersJoinLeaveAndFailAndThePartitionsFollow(String assignor) {
    String t = topicWithRecords(6, 20);
    String g = "g-" + assignor + "-" + N.incrementAndGet();
    Map<String, Set<Long>> seen = new HashMap<>();
    Consumer<String, String> a = member(g, assignor, Map.of());
    Consumer<String, String> b = member(g, assignor, Map.of());
    a.subscribe(List.of(t));
    b.subscribe(List.of(t));
    pollUntil("two members share six partitions", List.of(a, b), seen,
        () -> a.assignment().size() == 3 && b.assignment().size() == 3 && count(seen) == 120);

    // join
    TributaryClient cClient = newClient();
    Consumer<String, String> c = cClient.consumer(Map.of(ClientConfig.GROUP_ID, g,
            ClientConfig.HEARTBEAT_INTERVAL_MS, 300, ClientConfig.SESSION_TIMEOUT_MS, 5000,
            ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, assignor), Deserializer.string(), Deserializer.string());
    c.subscribe(List.of(t));
    pollUntil("a third member takes two", List.of(a, b, c), seen,
        () -> a.assignment().size() == 2 && b.assignment().size() == 2 && c.assignment().size() == 2);

    // leave
    b.close();
    pollUntil("the leaver's partitions go to the others", List.of(a, c), seen,
        () -> a.assignment().size() == 3 && c.assignment().size() == 3);

    // fail: c's client JVM "dies" (its ActorSystem stops without the consumer leaving)
    cClient.system().terminate();
    clients.remove(cClient);
    pollUntil("the failed member's partitions go to the survivor", List.of(a), seen,
        () -> a.assignment().size() == 6);
    assertEquals(120, count(seen));
  }

  @Test
  void cooperativeStickyKeepsConsumingUnmovedPartitionsDuringTheRebalance() {
    String t = topicWithRecords(4, 1);
    String g = "g-coop-" + N.incrementAndGet();
    List<String> events = new ArrayList<>();
    Consumer<String, String> a = member(g, "cooperative-sticky", Map.of());
    a.subscribe(List.of(t), new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        events.add("revoked " + partitions.size());
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        events.add("assigned " + partitions.size());
      }
    });
    Map<String, Set<Long>> seen = new HashMap<>();
    pollUntil("a owns all four", List.of(a), seen, () -> a.assignment().size() == 4);
    Set<TopicPartition> before = Set.copyOf(a.assignment());
    Consumer<String, String> b = member(g, "cooperative-sticky", Map.of());
    b.subscribe(List.of(t));
    pollUntil("balanced", List.of(a, b), seen, () -> a.assignment().size() == 2 && b.assignment().size() == 2);
    assertTrue(before.containsAll(a.assignment()));
    assertTrue(events.contains("revoked 2"), "only the two moving partitions were revoked: " + events);
    assertFalse(events.contains("revoked 4"), events.toString());
  }

  @Test
  void staticMemberRestartGetsItsPartitionsBackWithoutARebalance() {
    String t = topicWithRecords(4, 1);
    String g = "g-static-" + N.incrementAndGet();
    Map<String, Set<Long>> seen = new HashMap<>();
    List<String> bEvents = new ArrayList<>();
    Consumer<String, String> a = member(g, "range", Map.of(ClientConfig.GROUP_INSTANCE_ID, "a"));
    Consumer<String, String> b = member(g, "range", Map.of(ClientConfig.GROUP_INSTANCE_ID, "b"));
    a.subscribe(List.of(t));
    b.subscribe(List.of(t), new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        bEvents.add("revoked " + partitions);
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        bEvents.add("assigned " + partitions);
      }
    });
    pollUntil("two static members", List.of(a, b), seen,
        () -> a.assignment().size() == 2 && b.assignment().size() == 2);
    Set<TopicPartition> aOwned = Set.copyOf(a.assignment());
    int bEventsBefore = bEvents.size();
    a.close(); // a static member does not leave: its partitions wait for it
    Consumer<String, String> a2 = member(g, "range", Map.of(ClientConfig.GROUP_INSTANCE_ID, "a"));
    a2.subscribe(List.of(t));
    pollUntil("the restarted member has its partitions back", List.of(a2, b), seen,
        () -> a2.assignment().equals(aOwned));
    for (int i = 0; i < 10; i++) {
      b.poll(Duration.ofMillis(30));
    }
    assertEquals(bEventsBefore, bEvents.size(), "b saw no rebalance: " + bEvents);
  }

  @Test
  void patternSubscriptionPicksUpATopicCreatedLater() {
    String prefix = "pat" + N.incrementAndGet() + "-";
    TributaryClient admin = newClient();
    admin.admin().createTopic(prefix + "one", 1, (short) 1, Map.of());
    Consumer<String, String> a = member("g-" + prefix, "cooperative-sticky", Map.of());
    a.subscribe(Pattern.compile(java.util.regex.Pattern.quote(prefix) + ".*"));
    Map<String, Set<Long>> seen = new HashMap<>();
    pollUntil("the first topic", List.of(a), seen, () -> a.assignment().size() == 1);
    admin.admin().createTopic(prefix + "two", 2, (short) 1, Map.of());
    pollUntil("the new topic's partitions", List.of(a), seen, () -> a.assignment().size() == 3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"earliest", "latest", "none"})
  void autoOffsetResetApplies(String policy) {
    String t = topicWithRecords(1, 5);
    String g = "g-reset-" + policy + "-" + N.incrementAndGet();
    Consumer<String, String> a = member(g, "range", Map.of(ClientConfig.AUTO_OFFSET_RESET, policy,
        ClientConfig.ENABLE_AUTO_COMMIT, "false")); // (auto-commit on close would commit the position instead)
    a.subscribe(List.of(t));
    Map<String, Set<Long>> seen = new HashMap<>();
    TopicPartition tp = new TopicPartition(t, 0);
    if (policy.equals("none")) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      NoOffsetForPartitionException e = null;
      while (e == null && System.nanoTime() < deadline) {
        try {
          a.poll(Duration.ofMillis(50));
        } catch (NoOffsetForPartitionException x) {
          e = x;
        }
      }
      assertTrue(e != null, "auto.offset.reset=none without a committed offset fails");
      return;
    }
    pollUntil("assigned", List.of(a), seen, () -> a.assignment().contains(tp));
    if (policy.equals("earliest")) {
      pollUntil("all five", List.of(a), seen, () -> count(seen) == 5);
    } else {
      assertEquals(5, a.position(tp));
      for (int i = 0; i < 5; i++) {
        a.poll(Duration.ofMillis(30));
      }
      assertEquals(0, count(seen));
    }
    // a committed offset wins over the policy
    a.commitSync(Map.of(tp, new OffsetAndMetadata(2, null)));
    a.close();
    Consumer<String, String> b = member(g, "range", Map.of(ClientConfig.AUTO_OFFSET_RESET, "none"));
    b.subscribe(List.of(t));
    Map<String, Set<Long>> seen2 = new HashMap<>();
    pollUntil("resumes at the committed offset", List.of(b), seen2, () -> count(seen2) == 3);
    assertEquals(Set.of(2L, 3L, 4L), seen2.get(t + "-0"));
  }

  @Test
  void emptyGroupIdIsRejected() {
    Consumer<String, String> a = newClient().consumer(Map.of(ClientConfig.GROUP_ID, ""), Deserializer.string(),
        Deserializer.string());
    TributaryException e = assertThrows(TributaryException.class, () -> a.subscribe(List.of("x")));
    assertEquals(io.tributary.protocol.ErrorCode.INVALID_GROUP_ID, e.errorCode());
  }
}
