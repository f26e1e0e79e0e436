package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol.AssignmentAck;
import io.tributary.protocol.GroupProtocol.Heartbeat;
import io.tributary.protocol.GroupProtocol.JoinGroup;
import io.tributary.protocol.GroupProtocol.LeaveGroup;
import io.tributary.protocol.GroupProtocol.OffsetCommit;
import io.tributary.protocol.GroupProtocol.OffsetFetch;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Consumer groups on the client side, against {@link FakeGateway}'s scripted coordinator: the test pushes
 * assignments and removals to the member actor and checks what the consumer does and sends. Every wait is for an
 * event (a request reaching the fake, a listener call), bounded by 30 s; nothing depends on timing.
 */
class ConsumerGroupTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final AtomicInteger GROUPS = new AtomicInteger();

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  private record Setup(FakeGateway fake, TributaryClient client) {}

  private static Setup setup() {
    FakeGateway fake = new FakeGateway();
    ActorRef<ClientRequest> gateway = testKit.spawn(fake.behavior());
    return new Setup(fake, TributaryClient.embedded(testKit.system(), gateway));
  }

  private static String newGroup() {
    return "group-" + GROUPS.incrementAndGet();
  }

  /** Group settings: earliest, no auto-commit, plus key/value pairs. */
  private static Map<String, Object> config(String group, Object... keyValues) {
    Map<String, Object> config = new HashMap<>();
    config.put(ClientConfig.GROUP_ID, group);
    config.put(ClientConfig.AUTO_OFFSET_RESET, "earliest");
    config.put(ClientConfig.ENABLE_AUTO_COMMIT, "false");
    for (int i = 0; i < keyValues.length; i += 2) {
      config.put((String) keyValues[i], keyValues[i + 1]);
    }
    return config;
  }

  private static Consumer<String, String> consumer(TributaryClient client, Map<String, Object> config) {
    return client.consumer(config, Deserializer.string(), Deserializer.string());
  }

  private static void produce(TributaryClient client, String topic, int partition, String prefix, int count) {
    try (Producer<String, String> producer =
        client.producer(Map.of(ClientConfig.BATCH_SIZE, 512), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < count; i++) {
        producer.send(new ProducerRecord<>(topic, partition, "k", prefix + "-" + i));
      }
      producer.flush();
    }
  }

  /** Polls until {@code done} holds (bounded), returning every record polled meanwhile. */
  private static List<ConsumerRecord<String, String>> pollUntil(
      Consumer<String, String> consumer, BooleanSupplier done) {
    return pollUntil(consumer, new ArrayList<>(), done);
  }

  /** Polls until {@code done} holds (bounded), adding every record polled to {@code out} as it comes; returns it. */
  private static List<ConsumerRecord<String, String>> pollUntil(
      Consumer<String, String> consumer, List<ConsumerRecord<String, String>> out, BooleanSupplier done) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("condition not reached within 30 s");
      }
      out.addAll(consumer.poll(Duration.ofMillis(50)));
    }
    return out;
  }

  /** Polls until a poll throws (bounded), returning what it threw. */
  private static RuntimeException pollUntilThrows(Consumer<String, String> consumer) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      try {
        consumer.poll(Duration.ofMillis(50));
      } catch (RuntimeException e) {
        return e;
      }
    }
    return fail("poll did not throw within 30 s");
  }

  private static BooleanSupplier acked(FakeGateway fake, String group, int generation) {
    return () -> !fake.requests(AssignmentAck.class, a -> a.groupId().equals(group) && a.generation() == generation)
        .isEmpty();
  }

  private static AssignmentAck ackOf(FakeGateway fake, String group, int generation) {
    return fake.awaitRequest(AssignmentAck.class, a -> a.groupId().equals(group) && a.generation() == generation);
  }

  private static JoinGroup join(FakeGateway fake, String group, int nth) {
    return fake.awaitRequest(JoinGroup.class, j -> j.groupId().equals(group), nth);
  }

  /** The member id the fake gave to the nth join of the group. */
  /**
   * Makes {@code consumer} (subscribed, not yet polled) the only member of {@code group} in generation 1, with {@code
   * assigned} as its cooperative-sticky assignment, and polls until it acknowledged that assignment.
   *
   * @return its member id
   */
  private static String joinAlone(Setup s, Consumer<String, String> consumer, String group,
      TopicPartition... assigned) {
    String member = memberIdOf(s.fake(), group, 1);
    s.fake().push(group, member, 1, "cooperative-sticky", assigned);
    pollUntil(consumer, acked(s.fake(), group, 1));
    return member;
  }

  private static String memberIdOf(FakeGateway fake, String group, int nth) {
    JoinGroup j = join(fake, group, nth);
    return j.memberId().isEmpty() ? group + "-member-" + nth : j.memberId();
  }

  private static Set<PartitionRef> refs(TopicPartition... partitions) {
    return java.util.Arrays.stream(partitions)
        .map(tp -> new PartitionRef(tp.topic(), tp.partition()))
        .collect(Collectors.toSet());
  }

  private static String sorted(Collection<TopicPartition> partitions) {
    return partitions.stream().map(TopicPartition::toString).sorted().toList().toString();
  }

  /** Records listener calls as "revoked [t-0]", "assigned [...]", "lost [...]" (application thread only). */
  private static class Recorder implements ConsumerRebalanceListener {
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    final List<Thread> threads = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      threads.add(Thread.currentThread());
      calls.add("revoked " + sorted(partitions));
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      threads.add(Thread.currentThread());
      calls.add("assigned " + sorted(partitions));
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      threads.add(Thread.currentThread());
      calls.add("lost " + sorted(partitions));
    }
  }

  // -----------------------------------------------------------------------------------------------------------------

  @Test
  void revocationRunsBeforeAssignmentAndTheAckComesLast() {
    Setup s = setup();
    s.fake().createTopic("order", 3);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("order", 0);
    TopicPartition p1 = new TopicPartition("order", 1);
    TopicPartition p2 = new TopicPartition("order", 2);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(client, config(group, ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, "range"));
      List<String> seen = Collections.synchronizedList(new ArrayList<>());
      Recorder listener =
          new Recorder() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
              super.onPartitionsRevoked(partitions);
              seen.add("assignment while revoking " + sorted(consumer.assignment()) + ", ack 2 sent: "
                  + acked(s.fake(), group, 2).getAsBoolean());
            }
          };
      consumer.subscribe(List.of("order"), listener);
      JoinGroup join = join(s.fake(), group, 1);
      assertEquals("", join.memberId());
      assertEquals(List.of("order"), join.topics());
      assertNull(join.topicPattern());
      assertEquals(List.of("range"), join.assignors());
      assertEquals(45_000, join.sessionTimeoutMs());
      assertEquals(300_000, join.rebalanceTimeoutMs());
      assertTrue(join.owned().isEmpty());
      String member = memberIdOf(s.fake(), group, 1);

      s.fake().push(group, member, 1, "range", p0, p1);
      pollUntil(consumer, acked(s.fake(), group, 1));
      assertEquals(refs(p0, p1), Set.copyOf(ackOf(s.fake(), group, 1).owned()));
      assertEquals(member, ackOf(s.fake(), group, 1).memberId());
      assertEquals(Set.of(p0, p1), consumer.assignment());

      s.fake().push(group, member, 2, "range", p1, p2);
      pollUntil(consumer, acked(s.fake(), group, 2));
      assertEquals(
          List.of("revoked []", "assigned [order-0, order-1]", "revoked [order-0]", "assigned [order-2]"),
          listener.calls, "eager assignor: revoked is called at every change, before assigned");
      assertEquals(
          List.of(
              "assignment while revoking [], ack 2 sent: false",
              "assignment while revoking [order-0, order-1], ack 2 sent: false"),
          seen.subList(0, 2),
          "the revoked partitions are still assigned while the listener runs, and not yet acknowledged");
      assertEquals(refs(p1, p2), Set.copyOf(ackOf(s.fake(), group, 2).owned()));
      assertEquals(Set.of(p1, p2), consumer.assignment());

      // an eager rebalance as the coordinator runs it: revoke everything, then assign
      s.fake().push(group, member, 3, "range");
      pollUntil(consumer, acked(s.fake(), group, 3));
      assertTrue(ackOf(s.fake(), group, 3).owned().isEmpty());
      s.fake().push(group, member, 4, "range", p0);
      pollUntil(consumer, acked(s.fake(), group, 4));
      assertEquals(
          List.of("revoked [order-1, order-2]", "assigned [order-0]"),
          listener.calls.subList(4, listener.calls.size()),
          "Kafka's eager sequence: revoked(all) once, then assigned(new)");
      assertEquals(Set.of("order"), consumer.subscription());
      assertEquals(new ConsumerGroupMetadata(group, 4, member, null), consumer.groupMetadata());
      for (Thread t : listener.threads) {
        assertSame(Thread.currentThread(), t, "listeners run on the application thread");
      }
    }
  }

  @Test
  void cooperativeRevocationKeepsTheOtherPartitionsConsumingAndDropsTheRevokedOnesRecords() {
    Setup s = setup();
    s.fake().createTopic("coop", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("coop", 0);
    TopicPartition p1 = new TopicPartition("coop", 1);
    try (TributaryClient client = s.client()) {
      produce(client, "coop", 0, "a", 40);
      produce(client, "coop", 1, "b", 40);
      Consumer<String, String> consumer = consumer(client, config(group, ClientConfig.MAX_POLL_RECORDS, 3));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("coop"), listener);
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", p0, p1);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records,
              () -> acked(s.fake(), group, 1).getAsBoolean()
                  && records.stream().anyMatch(r -> r.partition() == 1));
      long offsetFetchesBefore = s.fake().requests(OffsetFetch.class, f -> true).size();

      s.fake().push(group, member, 2, "cooperative-sticky", p0);
      pollUntil(consumer, records, acked(s.fake(), group, 2));
      assertEquals(List.of("assigned [coop-0, coop-1]", "revoked [coop-1]", "assigned []"), listener.calls);
      assertEquals(Set.of(p0), consumer.assignment());

      produce(client, "coop", 0, "a2", 5);
      produce(client, "coop", 1, "b2", 5);
      List<ConsumerRecord<String, String>> after =
          pollUntil(consumer, () -> consumer.position(p0) == 45);
      assertTrue(after.stream().allMatch(r -> r.partition() == 0), "nothing of the revoked partition after the ack");
      records.addAll(after);
      List<Long> p0Offsets = records.stream().filter(r -> r.partition() == 0).map(ConsumerRecord::offset).toList();
      List<Long> expected = new ArrayList<>();
      for (long i = 0; i < 45; i++) {
        expected.add(i);
      }
      assertEquals(expected, p0Offsets, "the kept partition went on without a gap or a repeat");
      assertEquals(
          offsetFetchesBefore,
          s.fake().requests(OffsetFetch.class, f -> true).size(),
          "the kept partition kept its position: no committed-offset lookup");
    }
  }

  @Test
  void commitSyncCarriesTheMemberIdAndTheGeneration() {
    Setup s = setup();
    s.fake().createTopic("commit", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("commit", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "commit", 0, "v", 10);
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.subscribe(List.of("commit"));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 3, "cooperative-sticky", tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 10);
      assertEquals(10, records.size());

      consumer.commitSync();
      OffsetCommit commit = s.fake().awaitRequest(OffsetCommit.class, c -> c.groupId().equals(group));
      assertEquals(member, commit.memberId());
      assertEquals(3, commit.generation());
      assertEquals(List.of(new PartitionOffset("commit", 0, 10, "")), commit.offsets());
      assertEquals(Map.of(tp, new OffsetAndMetadata(10, "")), consumer.committed(Set.of(tp)));

      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(7, "note")));
      assertEquals(new OffsetAndMetadata(7, "note"), consumer.committed(Set.of(tp)).get(tp));
      Map<TopicPartition, OffsetAndMetadata> none = consumer.committed(Set.of(new TopicPartition("commit", 9)));
      assertTrue(none.containsKey(new TopicPartition("commit", 9)));
      assertNull(none.get(new TopicPartition("commit", 9)), "nothing committed: null");
    }
  }

  @Test
  void anAssignedConsumersCommitToAGroupWithMembersIsRefusedWithAdviceForAssign() {
    Setup s = setup();
    s.fake().createTopic("shared", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("shared", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "shared", 0, "v", 3);
      Consumer<String, String> member = consumer(client, config(group));
      member.subscribe(List.of("shared"));
      memberIdOf(s.fake(), group, 1);
      Consumer<String, String> assigned = consumer(client, config(group));
      assigned.assign(List.of(tp));
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(assigned, records, () -> records.size() >= 3);

      TributaryException e = assertThrows(TributaryException.class, assigned::commitSync);
      assertEquals(ErrorCode.UNKNOWN_MEMBER_ID, e.errorCode());
      assertTrue(e.getMessage().contains("this consumer uses assign() and is not a member of the group"),
          e.getMessage());
      assertFalse(e.getMessage().contains("rebalanced"), e.getMessage());
      assertEquals(-1, s.fake().committedOffset(group, tp), "nothing stored");
    }
  }

  @Test
  void aRefusedCommitOfAPartitionTheMemberIsNotAssignedSaysSo() {
    Setup s = setup();
    s.fake().createTopic("two", 2);
    String group = newGroup();
    TopicPartition mine = new TopicPartition("two", 0);
    TopicPartition other = new TopicPartition("two", 1);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.subscribe(List.of("two"));
      joinAlone(s, consumer, group, mine);

      // the coordinator's answer for a partition the member does not own (GroupCoordinator.onCommit)
      s.fake().commitFaults.add(ErrorCode.ILLEGAL_GENERATION);
      TributaryException e = assertThrows(TributaryException.class,
          () -> consumer.commitSync(Map.of(other, new OffsetAndMetadata(3, ""))));
      assertEquals(ErrorCode.ILLEGAL_GENERATION, e.errorCode());
      assertTrue(e.getMessage().contains("[two-1] is not among this consumer's assigned partitions"),
          e.getMessage());
      assertFalse(e.getMessage().contains("has rebalanced"), e.getMessage());
      assertEquals(-1, s.fake().committedOffset(group, other), "nothing stored");
    }
  }

  @Test
  void aStaleGenerationCommitFailsWithIllegalGenerationAndTheMemberRejoins() {
    Setup s = setup();
    s.fake().createTopic("stale", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("stale", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "stale", 0, "v", 5);
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.subscribe(List.of("stale"));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 5);

      s.fake().setGeneration(group, 2); // the group moved on without this member
      TributaryException e = assertThrows(TributaryException.class, consumer::commitSync);
      assertEquals(ErrorCode.ILLEGAL_GENERATION, e.errorCode());
      assertTrue(e.getMessage().contains("has rebalanced"), e.getMessage());
      assertFalse(e.isRetriable());
      assertEquals(-1, s.fake().committedOffset(group, tp));
      JoinGroup rejoin = s.fake().awaitRequest(JoinGroup.class, j -> j.memberId().equals(member));
      assertEquals(List.of(new PartitionRef("stale", 0)), rejoin.owned(), "rejoins with what it owns");

      List<Exception> outcomes = Collections.synchronizedList(new ArrayList<>());
      List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
      consumer.commitAsync(
          (offsets, exception) -> {
            threads.add(Thread.currentThread());
            outcomes.add(exception);
          });
      assertTrue(outcomes.isEmpty(), "callbacks run only inside a later consumer call");
      pollUntil(consumer, () -> !outcomes.isEmpty());
      assertEquals(ErrorCode.ILLEGAL_GENERATION, ((TributaryException) outcomes.get(0)).errorCode());
      assertSame(Thread.currentThread(), threads.get(0));

      // the coordinator pushes the member's assignment again, in the current generation: commits work again
      s.fake().push(group, member, 2, "cooperative-sticky", tp);
      pollUntil(consumer, acked(s.fake(), group, 2));
      consumer.commitSync();
      assertEquals(5, s.fake().committedOffset(group, tp));
    }
  }

  /**
   * As Kafka's: a second thread that calls the consumer while the application thread is inside it (here: inside poll,
   * which runs an async commit's callback) gets ConcurrentModificationException; the application thread itself may
   * call it again from the callback, and once poll has returned another thread may use it.
   */
  @Test
  void aSecondThreadInsideTheConsumerGetsConcurrentModificationException() throws Exception {
    Setup s = setup();
    s.fake().createTopic("threads", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("threads", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.assign(List.of(tp));
      List<Throwable> fromOtherThread = Collections.synchronizedList(new ArrayList<>());
      List<Object> fromCallbackThread = Collections.synchronizedList(new ArrayList<>());
      consumer.commitAsync(Map.of(tp, new OffsetAndMetadata(0)), (offsets, exception) -> {
        fromCallbackThread.add(consumer.assignment()); // re-entrant on the application thread
        Thread other = new Thread(() -> {
          try {
            consumer.assignment();
            fromOtherThread.add(null);
          } catch (Throwable t) {
            fromOtherThread.add(t);
          }
        });
        other.start();
        try {
          other.join();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      pollUntil(consumer, () -> !fromOtherThread.isEmpty());
      assertEquals(List.of(Set.of(tp)), fromCallbackThread);
      Throwable t = fromOtherThread.get(0);
      assertTrue(t instanceof java.util.ConcurrentModificationException, String.valueOf(t));
      assertTrue(t.getMessage().contains("not safe for multi-threaded access"), t.getMessage());

      java.util.concurrent.CompletableFuture<Set<TopicPartition>> later =
          java.util.concurrent.CompletableFuture.supplyAsync(consumer::assignment);
      assertEquals(Set.of(tp), later.get(10, java.util.concurrent.TimeUnit.SECONDS), "nobody inside it any more");
    }
  }

  @Test
  void autoCommitCommitsRevokedPositionsWithTheNewGenerationBeforeTheListenerRuns() {
    Setup s = setup();
    s.fake().createTopic("auto", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("auto", 0);
    TopicPartition p1 = new TopicPartition("auto", 1);
    try (TributaryClient client = s.client()) {
      produce(client, "auto", 0, "a", 10);
      produce(client, "auto", 1, "b", 10);
      Map<String, Object> config =
          config(group, ClientConfig.ENABLE_AUTO_COMMIT, true, ClientConfig.AUTO_COMMIT_INTERVAL_MS, 3_600_000);
      Consumer<String, String> consumer = consumer(client, config);
      List<Long> committedWhenRevoked = new ArrayList<>();
      consumer.subscribe(
          List.of("auto"),
          new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
              committedWhenRevoked.add(s.fake().committedOffset(group, p1));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
          });
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", p0, p1);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 20);
      assertTrue(s.fake().requests(OffsetCommit.class, c -> true).isEmpty(), "interval not reached: no commit yet");

      s.fake().push(group, member, 2, "cooperative-sticky", p0);
      pollUntil(consumer, acked(s.fake(), group, 2));
      OffsetCommit commit = s.fake().awaitRequest(OffsetCommit.class, c -> c.groupId().equals(group));
      assertEquals(2, commit.generation(), "committed in the new generation");
      assertEquals(List.of(new PartitionOffset("auto", 1, 10, "")), commit.offsets(), "only the revoked partition");
      assertEquals(List.of(10L), committedWhenRevoked, "committed before onPartitionsRevoked");
    }
  }

  @Test
  void memberRemovedReportsThePartitionsLostAndRejoinsAsANewMember() {
    Setup s = setup();
    s.fake().createTopic("removed", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("removed", 0);
    TopicPartition p1 = new TopicPartition("removed", 1);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      List<String> calls = Collections.synchronizedList(new ArrayList<>());
      consumer.subscribe(
          List.of("removed"),
          new ConsumerRebalanceListener() { // onPartitionsLost not overridden: it calls onPartitionsRevoked
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
              calls.add("revoked " + sorted(partitions));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
              calls.add("assigned " + sorted(partitions));
            }
          });
      String member = joinAlone(s, consumer, group, p0, p1);

      s.fake().removeMember(group, member, ErrorCode.UNKNOWN_MEMBER_ID, "session expired");
      pollUntil(consumer, () -> s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size() == 2);
      JoinGroup rejoin = join(s.fake(), group, 2);
      assertEquals("", rejoin.memberId(), "a new member");
      assertTrue(rejoin.owned().isEmpty(), "lost partitions are not claimed");
      assertEquals(List.of("assigned [removed-0, removed-1]", "revoked [removed-0, removed-1]"), calls);
      assertTrue(consumer.assignment().isEmpty());
      assertEquals(new ConsumerGroupMetadata(group, -1, "", null), consumer.groupMetadata());

      String second = memberIdOf(s.fake(), group, 2);
      s.fake().push(group, second, 4, "cooperative-sticky", p1);
      pollUntil(consumer, acked(s.fake(), group, 4));
      assertEquals(second, ackOf(s.fake(), group, 4).memberId());
      assertEquals(Set.of(p1), consumer.assignment());
    }
  }

  @Test
  void aPushOlderThanTheCurrentGenerationIsIgnored() {
    Setup s = setup();
    s.fake().createTopic("ghost", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("ghost", 0);
    TopicPartition p1 = new TopicPartition("ghost", 1);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("ghost"), listener);
      String member = joinAlone(s, consumer, group, p0);
      s.fake().push(group, member, 3, "cooperative-sticky", p0);
      pollUntil(consumer, acked(s.fake(), group, 3));
      s.fake().push(group, member, 2, "cooperative-sticky", p1); // stale: lower generation
      s.fake().push(group, member, 5, "cooperative-sticky", p0);
      pollUntil(consumer, acked(s.fake(), group, 5));
      assertFalse(acked(s.fake(), group, 2).getAsBoolean(), "a stale push is not applied");
      assertEquals(List.of("assigned [ghost-0]", "assigned []", "assigned []"), listener.calls);
    }
  }

  @Test
  void aFencedStaticMemberLosesItsPartitionsAndPollThrowsFencedInstanceId() {
    Setup s = setup();
    s.fake().createTopic("fenced", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("fenced", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(client, config(group, ClientConfig.GROUP_INSTANCE_ID, "instance-1"));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("fenced"), listener);
      assertEquals("instance-1", join(s.fake(), group, 1).groupInstanceId());
      String member = joinAlone(s, consumer, group, tp);

      s.fake().removeMember(group, member, ErrorCode.FENCED_INSTANCE_ID, "a newer instance-1 joined");
      TributaryException e = assertInstanceOf(TributaryException.class, pollUntilThrows(consumer));
      assertEquals(ErrorCode.FENCED_INSTANCE_ID, e.errorCode());
      assertEquals(List.of("assigned [fenced-0]", "lost [fenced-0]"), listener.calls);
      assertTrue(consumer.assignment().isEmpty());
      assertEquals(1, s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size(), "no rejoin yet");

      consumer.poll(Duration.ZERO); // the application goes on: the next poll rejoins
      assertEquals("", join(s.fake(), group, 2).memberId());
    }
  }

  @Test
  void aHeartbeatAnsweredUnknownMemberMakesTheMemberRejoin() {
    Setup s = setup();
    s.fake().createTopic("beat", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("beat", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group, ClientConfig.HEARTBEAT_INTERVAL_MS, 20));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("beat"), listener);
      String member = joinAlone(s, consumer, group, tp);
      Heartbeat heartbeat = s.fake().awaitRequest(Heartbeat.class, h -> h.memberId().equals(member));
      assertEquals(group, heartbeat.groupId());

      s.fake().heartbeatFaults.add(ErrorCode.UNKNOWN_MEMBER_ID);
      pollUntil(consumer, () -> s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size() == 2);
      assertEquals("", join(s.fake(), group, 2).memberId());
      assertEquals(List.of("assigned [beat-0]", "lost [beat-0]"), listener.calls);
    }
  }

  @Test
  void withoutPollForMaxPollIntervalTheMemberLeavesAndTheNextPollRejoins() {
    Setup s = setup();
    s.fake().createTopic("slow", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("slow", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(
              client,
              config(group, ClientConfig.MAX_POLL_INTERVAL_MS, 1_500, ClientConfig.HEARTBEAT_INTERVAL_MS, 50));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("slow"), listener);
      assertEquals(1_500, join(s.fake(), group, 1).rebalanceTimeoutMs());
      String member = joinAlone(s, consumer, group, tp);

      // the application stops calling poll: the member actor leaves by itself
      LeaveGroup leave = s.fake().awaitRequest(LeaveGroup.class, l -> l.memberId().equals(member));
      assertEquals(group, leave.groupId());
      assertEquals(List.of("assigned [slow-0]"), listener.calls, "nothing runs on the application's behalf");

      pollUntil(consumer, () -> s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size() == 2);
      assertEquals(List.of("assigned [slow-0]", "lost [slow-0]"), listener.calls);
      assertEquals("", join(s.fake(), group, 2).memberId());
    }
  }

  @Test
  void wakeupMakesTheNextOrOngoingBlockingCallThrowOnce() throws Exception {
    Setup s = setup();
    s.fake().createTopic("wake", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("wake", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.assign(List.of(tp));
      Thread waker = new Thread(consumer::wakeup);
      waker.start();
      assertThrows(WakeupException.class, () -> consumer.poll(Duration.ofSeconds(60)));
      waker.join();
      assertTrue(consumer.poll(Duration.ZERO).isEmpty(), "thrown once");

      consumer.wakeup();
      consumer.wakeup();
      assertThrows(WakeupException.class, () -> consumer.poll(Duration.ZERO));
      consumer.poll(Duration.ZERO);

      s.fake().blackholeCommits = true; // a commit that is never answered: only the wakeup ends it
      Thread waker2 = new Thread(consumer::wakeup);
      waker2.start();
      assertThrows(
          WakeupException.class, () -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1)), Duration.ofMinutes(5)));
      waker2.join();
      consumer.wakeup();
      assertThrows(WakeupException.class, () -> consumer.committed(Set.of(tp)));
      s.fake().blackholeCommits = false;
      consumer.close(Duration.ZERO);
    }
  }

  @Test
  void pausedPartitionsThatStayAssignedStayPausedAcrossARebalance() {
    Setup s = setup();
    s.fake().createTopic("pause", 3);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("pause", 0);
    TopicPartition p1 = new TopicPartition("pause", 1);
    TopicPartition p2 = new TopicPartition("pause", 2);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.subscribe(List.of("pause"));
      String member = joinAlone(s, consumer, group, p0, p1);
      assertThrows(IllegalStateException.class, () -> consumer.pause(List.of(p0, p2)), "p2 is not assigned");
      assertTrue(consumer.paused().isEmpty(), "all or nothing");
      consumer.pause(List.of(p0, p1));
      assertEquals(Set.of(p0, p1), consumer.paused());
      produce(client, "pause", 0, "a", 5);
      produce(client, "pause", 1, "b", 5);
      produce(client, "pause", 2, "c", 5);

      s.fake().push(group, member, 2, "cooperative-sticky", p0, p2);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records,
              () -> acked(s.fake(), group, 2).getAsBoolean() && records.stream().filter(r -> r.partition() == 2)
                  .count() == 5);
      assertEquals(Set.of(p0), consumer.paused());
      assertTrue(records.stream().allMatch(r -> r.partition() == 2), "the paused partition returned nothing");

      consumer.resume(List.of(p0));
      assertTrue(consumer.paused().isEmpty());
      List<ConsumerRecord<String, String>> resumed = new ArrayList<>();
      pollUntil(consumer, resumed, () -> resumed.size() >= 5);
      assertEquals(List.of("a-0", "a-1", "a-2", "a-3", "a-4"), resumed.stream().map(ConsumerRecord::value).toList());
    }
  }

  @Test
  void closeCommitsRevokesAndLeavesTheGroup() {
    Setup s = setup();
    s.fake().createTopic("close", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("close", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "close", 0, "v", 10);
      Consumer<String, String> consumer =
          consumer(
              client,
              config(group, ClientConfig.ENABLE_AUTO_COMMIT, "true", ClientConfig.AUTO_COMMIT_INTERVAL_MS, 3_600_000));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("close"), listener);
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 10);

      consumer.close();
      assertEquals(List.of("assigned [close-0]", "revoked [close-0]"), listener.calls);
      assertEquals(10, s.fake().committedOffset(group, tp), "auto-committed on close");
      assertEquals(1, s.fake().requests(LeaveGroup.class, l -> l.memberId().equals(member)).size());
      assertThrows(IllegalStateException.class, () -> consumer.poll(Duration.ZERO));
      consumer.close(); // idempotent
    }
  }

  @Test
  void aStaticMemberDoesNotLeaveOnClose() {
    Setup s = setup();
    s.fake().createTopic("static", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("static", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(client, config(group, ClientConfig.GROUP_INSTANCE_ID, "static-1"));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("static"), listener);
      joinAlone(s, consumer, group, tp);

      consumer.close(Duration.ofSeconds(10));
      assertEquals(List.of("assigned [static-0]", "revoked [static-0]"), listener.calls);
      client.admin().listTopics(); // a request after the close: anything the member sent has arrived before it
      assertTrue(s.fake().requests(LeaveGroup.class, l -> true).isEmpty(), "a static member does not leave");
    }
  }

  @Test
  void subscribeAndAssignAreMutuallyExclusive() {
    Setup s = setup();
    s.fake().createTopic("both", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("both", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.assign(List.of(tp));
      assertThrows(IllegalStateException.class, () -> consumer.subscribe(List.of("both")));
      assertThrows(IllegalStateException.class, () -> consumer.subscribe(Pattern.compile("b.*")));
      assertEquals(Set.of(tp), consumer.assignment());
      consumer.unsubscribe();
      assertTrue(consumer.assignment().isEmpty());
      assertThrows(IllegalStateException.class, () -> consumer.poll(Duration.ZERO), "neither subscribed nor assigned");

      consumer.subscribe(Pattern.compile("b.*"));
      assertEquals("b.*", join(s.fake(), group, 1).topicPattern());
      assertTrue(join(s.fake(), group, 1).topics().isEmpty());
      assertThrows(IllegalStateException.class, () -> consumer.assign(List.of(tp)));
      assertThrows(IllegalArgumentException.class, () -> consumer.subscribe((Collection<String>) null));
      assertThrows(IllegalArgumentException.class, () -> consumer.subscribe(List.of("both"), null));
      assertThrows(IllegalArgumentException.class, () -> consumer.subscribe(Pattern.compile("")));
      List<String> withNull = new ArrayList<>();
      withNull.add(null);
      assertThrows(IllegalArgumentException.class, () -> consumer.subscribe(withNull));
      consumer.unsubscribe();
      assertTrue(consumer.subscription().isEmpty());
      consumer.assign(List.of(tp));
      assertEquals(Set.of(tp), consumer.assignment());
    }
  }

  @Test
  void subscribeAndCommitNeedANonEmptyGroupId() {
    Setup s = setup();
    TopicPartition tp = new TopicPartition("t", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> empty =
          consumer(client, Map.of(ClientConfig.GROUP_ID, "", ClientConfig.ENABLE_AUTO_COMMIT, "false"));
      TributaryException e = assertThrows(TributaryException.class, () -> empty.subscribe(List.of("t")));
      assertEquals(ErrorCode.INVALID_GROUP_ID, e.errorCode());
      assertEquals(
          ErrorCode.INVALID_GROUP_ID,
          assertThrows(TributaryException.class, () -> empty.subscribe(Pattern.compile("t"))).errorCode());

      Consumer<String, String> none = consumer(client, Map.of());
      assertEquals(
          ErrorCode.INVALID_GROUP_ID,
          assertThrows(TributaryException.class, () -> none.subscribe(List.of("t"))).errorCode());
      none.assign(List.of(tp));
      assertEquals(ErrorCode.INVALID_GROUP_ID, assertThrows(TributaryException.class, none::commitSync).errorCode());
      assertEquals(
          ErrorCode.INVALID_GROUP_ID,
          assertThrows(TributaryException.class, () -> none.committed(Set.of(tp))).errorCode());
      assertEquals(
          ErrorCode.INVALID_GROUP_ID,
          assertThrows(TributaryException.class, () -> none.commitAsync(null)).errorCode());
      assertTrue(s.fake().requests(JoinGroup.class, j -> true).isEmpty());
    }
  }

  @Test
  void aRefusedJoinIsThrownByPollAndRetriedByTheNextOne() {
    Setup s = setup();
    s.fake().createTopic("refused", 1);
    String group = newGroup();
    try (TributaryClient client = s.client()) {
      s.fake().joinFaults.add(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS); // retriable: retried by the member actor
      s.fake().joinFaults.add(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      Consumer<String, String> consumer = consumer(client, config(group, ClientConfig.RETRY_BACKOFF_MS, 10));
      consumer.subscribe(List.of("refused"));
      TributaryException e = assertInstanceOf(TributaryException.class, pollUntilThrows(consumer));
      assertEquals(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, e.errorCode());
      assertEquals(2, s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size());
      consumer.poll(Duration.ZERO);
      join(s.fake(), group, 3); // the next poll tried again
    }
  }

  @Test
  void aGroupMemberStartsAtTheCommittedOffsetAndAutoOffsetResetNoneThrowsWithoutOne() {
    Setup s = setup();
    s.fake().createTopic("start", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("start", 0);
    TopicPartition p1 = new TopicPartition("start", 1);
    try (TributaryClient client = s.client()) {
      produce(client, "start", 0, "a", 10);
      produce(client, "start", 1, "b", 10);
      s.fake().setCommitted(group, p0, 4);
      Consumer<String, String> consumer = consumer(client, config(group, ClientConfig.AUTO_OFFSET_RESET, "none"));
      consumer.subscribe(List.of("start"));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", p0);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 6);
      assertEquals(4L, records.get(0).offset(), "starts at the committed offset");
      assertEquals("a-4", records.get(0).value());

      s.fake().push(group, member, 2, "cooperative-sticky", p0, p1);
      NoOffsetForPartitionException e =
          assertInstanceOf(NoOffsetForPartitionException.class, pollUntilThrows(consumer));
      assertEquals(Set.of(p1), e.partitions());
      assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, e.errorCode());
      assertEquals(refs(p0, p1), Set.copyOf(ackOf(s.fake(), group, 2).owned()), "the assignment itself was applied");
      assertThrows(NoOffsetForPartitionException.class, () -> consumer.position(p1));
      consumer.seek(p1, 8);
      List<ConsumerRecord<String, String>> p1Records = new ArrayList<>();
      pollUntil(consumer, p1Records, () -> p1Records.stream().filter(r -> r.partition() == 1).count() >= 2);
      assertEquals(8L, p1Records.stream().filter(r -> r.partition() == 1).findFirst().orElseThrow().offset());
    }
  }

  /** A {@link Recorder} that also puts each revoked partition's {@code position()} into {@code into}, as it revokes. */
  private static Recorder recordingPositionsWhileRevoking(
      Consumer<String, String> consumer, Map<TopicPartition, Long> into) {
    return new Recorder() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        super.onPartitionsRevoked(partitions);
        for (TopicPartition tp : partitions) {
          into.put(tp, consumer.position(tp));
        }
      }
    };
  }

  /** Whether the consumer sent an OffsetFetch for the group (answered or not). */
  private static BooleanSupplier offsetFetchSent(FakeGateway fake, String group) {
    return () -> !fake.requests(OffsetFetch.class, f -> f.groupId().equals(group)).isEmpty();
  }

  /**
   * The order of ReplicationFailoverIT's coordinator move: partitions assigned, their committed-offset lookup not
   * answered yet, and already revoked by the next rebalance. {@code position()} in {@code onPartitionsRevoked} is
   * the committed offset, as Kafka's, not {@code auto.offset.reset}'s (0 here).
   */
  @Test
  void positionWhileRevokingIsTheCommittedOffsetWhenTheRevocationCameBeforeTheCommittedOffsetsAnswer() {
    Setup s = setup();
    s.fake().createTopic("early", 2);
    String group = newGroup();
    TopicPartition p0 = new TopicPartition("early", 0);
    TopicPartition p1 = new TopicPartition("early", 1);
    try (TributaryClient client = s.client()) {
      produce(client, "early", 0, "a", 10);
      produce(client, "early", 1, "b", 10);
      s.fake().setCommitted(group, p0, 4);
      s.fake().setCommitted(group, p1, 7);
      Consumer<String, String> consumer =
          consumer(client, config(group, ClientConfig.PARTITION_ASSIGNMENT_STRATEGY, "range"));
      Map<TopicPartition, Long> positionsWhileRevoking = new HashMap<>(); // application thread only
      consumer.subscribe(List.of("early"), recordingPositionsWhileRevoking(consumer, positionsWhileRevoking));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().dropOffsetFetchReplies.set(1); // the assignment's lookup stays unanswered
      s.fake().push(group, member, 1, "range", p0, p1);
      pollUntil(consumer, () -> acked(s.fake(), group, 1).getAsBoolean() && offsetFetchSent(s.fake(), group)
          .getAsBoolean());

      s.fake().push(group, member, 2, "range"); // the next eager rebalance revokes everything
      pollUntil(consumer, acked(s.fake(), group, 2));
      assertEquals(Map.of(p0, 4L, p1, 7L), positionsWhileRevoking,
          "position() while revoking is the committed offset, looked up again");
      assertTrue(consumer.assignment().isEmpty());
    }
  }

  /** As above, when the consumer closes (leaves) before the assignment's committed-offset lookup was answered. */
  @Test
  void positionWhileRevokingAtCloseIsTheCommittedOffsetWhenTheCommittedOffsetsAnswerWasNotThere() {
    Setup s = setup();
    s.fake().createTopic("closing", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("closing", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "closing", 0, "a", 10);
      s.fake().setCommitted(group, tp, 6);
      Consumer<String, String> consumer = consumer(client, config(group));
      Map<TopicPartition, Long> positionsWhileRevoking = new HashMap<>(); // application thread only
      consumer.subscribe(List.of("closing"), recordingPositionsWhileRevoking(consumer, positionsWhileRevoking));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().dropOffsetFetchReplies.set(1);
      s.fake().push(group, member, 1, "cooperative-sticky", tp);
      pollUntil(consumer, () -> acked(s.fake(), group, 1).getAsBoolean() && offsetFetchSent(s.fake(), group)
          .getAsBoolean());

      consumer.close();
      assertEquals(Map.of(tp, 6L), positionsWhileRevoking);
      assertEquals(1, s.fake().requests(LeaveGroup.class, l -> l.memberId().equals(member)).size());
    }
  }

  @Test
  void manualAssignmentWithAGroupIdStartsAtTheCommittedOffsetAndCommitsAsASimpleConsumer() {
    Setup s = setup();
    s.fake().createTopic("simple", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("simple", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "simple", 0, "v", 10);
      s.fake().setCommitted(group, tp, 6);
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.assign(List.of(tp));
      assertEquals(6L, consumer.position(tp));
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 4);
      assertEquals(6L, records.get(0).offset());
      consumer.commitSync();
      OffsetCommit commit = s.fake().awaitRequest(OffsetCommit.class, c -> c.groupId().equals(group));
      assertEquals("", commit.memberId());
      assertEquals(-1, commit.generation());
      assertEquals(10, s.fake().committedOffset(group, tp));
      assertTrue(s.fake().requests(JoinGroup.class, j -> true).isEmpty(), "manual assignment joins nothing");
      assertNotNull(consumer.groupMetadata());
    }
  }

  @Test
  void aListenerExceptionIsThrownByPollAfterTheAssignmentWasAcknowledged() {
    Setup s = setup();
    s.fake().createTopic("boom", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("boom", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      consumer.subscribe(
          List.of("boom"),
          new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
              throw new IllegalStateException("listener failed");
            }
          });
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", tp);
      RuntimeException e = pollUntilThrows(consumer);
      assertEquals("listener failed", e.getMessage());
      assertEquals(refs(tp), Set.copyOf(ackOf(s.fake(), group, 1).owned()), "acknowledged all the same");
      assertEquals(Set.of(tp), consumer.assignment());
    }
  }

  @Test
  void withoutAnAnsweredHeartbeatForTheSessionTimeoutThePartitionsAreLostAndTheMemberRejoins() {
    Setup s = setup();
    s.fake().createTopic("silent", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("silent", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer =
          consumer(
              client,
              config(group, ClientConfig.SESSION_TIMEOUT_MS, 1_000, ClientConfig.HEARTBEAT_INTERVAL_MS, 20));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("silent"), listener);
      joinAlone(s, consumer, group, tp);

      s.fake().blackholeHeartbeats = true; // the coordinator is unreachable
      pollUntil(consumer, () -> s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size() == 2);
      assertEquals(List.of("assigned [silent-0]", "lost [silent-0]"), listener.calls);
      assertEquals("", join(s.fake(), group, 2).memberId());
      s.fake().blackholeHeartbeats = false;
    }
  }

  @Test
  void retriableCommitErrorsAreRetriedAndAutoCommitRunsInsidePoll() {
    Setup s = setup();
    s.fake().createTopic("retry", 1);
    String group = newGroup();
    TopicPartition tp = new TopicPartition("retry", 0);
    try (TributaryClient client = s.client()) {
      produce(client, "retry", 0, "v", 10);
      Consumer<String, String> consumer =
          consumer(
              client,
              config(
                  group,
                  ClientConfig.ENABLE_AUTO_COMMIT, true,
                  ClientConfig.AUTO_COMMIT_INTERVAL_MS, 0,
                  ClientConfig.RETRY_BACKOFF_MS, 10));
      consumer.subscribe(List.of("retry"));
      String member = memberIdOf(s.fake(), group, 1);
      s.fake().push(group, member, 1, "cooperative-sticky", tp);
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      pollUntil(consumer, records, () -> records.size() >= 10);
      pollUntil(consumer, () -> s.fake().committedOffset(group, tp) == 10); // auto-commit, asynchronous, in poll
      OffsetCommit auto = s.fake().awaitRequest(OffsetCommit.class, c -> c.groupId().equals(group));
      assertEquals(1, auto.generation());
      consumer.commitSync(); // waits for the auto-commits still in flight: the faults below are for the next ones

      s.fake().commitFaults.add(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
      s.fake().commitFaults.add(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      consumer.commitSync(Map.of(tp, new OffsetAndMetadata(3)));
      assertEquals(3, s.fake().committedOffset(group, tp));
      assertEquals(
          3,
          s.fake().requests(OffsetCommit.class, c -> c.offsets().get(0).offset() == 3).size(),
          "two retries, then stored");

      s.fake().commitFaults.add(ErrorCode.INVALID_COMMIT_OFFSET_SIZE);
      TributaryException e =
          assertThrows(TributaryException.class, () -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(4))));
      assertEquals(ErrorCode.INVALID_COMMIT_OFFSET_SIZE, e.errorCode());
      assertEquals(1, s.fake().requests(JoinGroup.class, j -> j.groupId().equals(group)).size(), "no rejoin for it");
    }
  }

  @Test
  void unsubscribeRevokesAndLeavesAndANewSubscriptionRejoinsAsTheSameMember() {
    Setup s = setup();
    s.fake().createTopic("first", 1);
    s.fake().createTopic("second", 1);
    String group = newGroup();
    TopicPartition first = new TopicPartition("first", 0);
    try (TributaryClient client = s.client()) {
      Consumer<String, String> consumer = consumer(client, config(group));
      Recorder listener = new Recorder();
      consumer.subscribe(List.of("first"), listener);
      String member = joinAlone(s, consumer, group, first);

      consumer.subscribe(List.of("first", "second"), listener); // a new subscription: the member rejoins with it
      JoinGroup rejoin = s.fake().awaitRequest(JoinGroup.class, j -> j.memberId().equals(member));
      assertEquals(List.of("first", "second"), rejoin.topics());
      assertEquals(List.of(new PartitionRef("first", 0)), rejoin.owned());
      assertEquals(Set.of("first", "second"), consumer.subscription());

      consumer.unsubscribe();
      assertEquals(List.of("assigned [first-0]", "revoked [first-0]"), listener.calls);
      assertEquals(1, s.fake().requests(LeaveGroup.class, l -> l.memberId().equals(member)).size());
      assertTrue(consumer.assignment().isEmpty());
      assertTrue(consumer.subscription().isEmpty());
      assertThrows(IllegalStateException.class, () -> consumer.poll(Duration.ZERO));
    }
  }
}
