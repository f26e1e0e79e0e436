package io.tributary.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import io.tributary.cluster.Controller;
import io.tributary.group.GroupCoordinator;
import io.tributary.log.LocalLeaders;
import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's routing: produce, fetch and list-offsets straight to a local leader replica when {@link LocalLeaders}
 * lists one, else to the router; admin requests: the controller's answer passed on, or REQUEST_TIMED_OUT when it does
 * not answer.
 */
class GatewayTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  private record Setup(
      ActorRef<ClientRequest> gateway,
      TestProbe<Controller.Command> controller,
      TestProbe<PartitionLeader.Command> router,
      TestProbe<GroupCoordinator.Command> groups) {}

  private static Setup setup(Duration controllerTimeout) {
    TestProbe<Controller.Command> controller = testKit.createTestProbe();
    TestProbe<PartitionLeader.Command> partitions = testKit.createTestProbe();
    TestProbe<GroupCoordinator.Command> groups = testKit.createTestProbe();
    ActorRef<ClientRequest> gateway = testKit.spawn(
        Gateway.create(partitions.getRef(), controller.getRef(), groups.getRef(), controllerTimeout));
    return new Setup(gateway, controller, partitions, groups);
  }

  /**
   * A request for a partition whose leader replica runs on this node goes to that replica directly; one for any other
   * partition (another partition of the topic, past its partitions, another topic) goes to the router, which finds
   * the leader's node. When the view changes (leadership moved away), the router gets them again.
   */
  @Test
  void requestsForALocalLeaderGoStraightToItOthersToTheRouter() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<PartitionLeader.Command> leader = testKit.createTestProbe();
    LocalLeaders local = LocalLeaders.get(testKit.system());
    local.publish(Map.of("routed", new ActorRef<?>[] {null, leader.getRef()}));
    try {
      TestProbe<ProduceResponse> produced = testKit.createTestProbe();
      TestProbe<FetchResponse> fetched = testKit.createTestProbe();
      TestProbe<ListOffsetsResponse> listed = testKit.createTestProbe();
      short v = ProtocolVersions.CURRENT;
      s.gateway().tell(new ProduceRequest(v, "routed", 1, (short) 1, 1000, new byte[0], produced.getRef()));
      assertEquals(1, leader.expectMessageClass(PartitionLeader.Produce.class).request().partition());
      s.gateway().tell(new FetchRequest(v, "routed", 1, 0L, 1024, 0, fetched.getRef()));
      assertEquals(1, leader.expectMessageClass(PartitionLeader.Fetch.class).request().partition());
      s.gateway().tell(new ListOffsetsRequest(v, "routed", 1, ListOffsetsRequest.LATEST_TIMESTAMP, listed.getRef()));
      assertEquals(1, leader.expectMessageClass(PartitionLeader.ListOffsets.class).request().partition());

      s.gateway().tell(new ProduceRequest(v, "routed", 0, (short) 1, 1000, new byte[0], produced.getRef()));
      assertEquals(0, s.router().expectMessageClass(PartitionLeader.Produce.class).request().partition());
      s.gateway().tell(new FetchRequest(v, "routed", 2, 0L, 1024, 0, fetched.getRef()));
      assertEquals(2, s.router().expectMessageClass(PartitionLeader.Fetch.class).request().partition());
      s.gateway().tell(new ListOffsetsRequest(v, "other", 1, ListOffsetsRequest.LATEST_TIMESTAMP, listed.getRef()));
      assertEquals("other", s.router().expectMessageClass(PartitionLeader.ListOffsets.class).request().topic());
      leader.expectNoMessage(Duration.ofMillis(100));

      local.publish(Map.of());
      s.gateway().tell(new ProduceRequest(v, "routed", 1, (short) 1, 1000, new byte[0], produced.getRef()));
      assertEquals(1, s.router().expectMessageClass(PartitionLeader.Produce.class).request().partition());
      leader.expectNoMessage(Duration.ofMillis(100));
    } finally {
      local.publish(Map.of());
    }
  }

  /**
   * A multi-partition produce request: each entry is routed as a request of its own (local leader or router), entries
   * the gateway refuses (invalid topic name, a partition repeated, the internal offsets topic) are answered by it, and
   * the client gets one answer with a response per entry in entry order, whatever order the leaders answer in.
   */
  @Test
  void aMultiPartitionProduceRequestIsRoutedPerEntryAndAnsweredOnceInEntryOrder() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<PartitionLeader.Command> leader = testKit.createTestProbe();
    LocalLeaders local = LocalLeaders.get(testKit.system());
    local.publish(Map.of("multi", new ActorRef<?>[] {leader.getRef(), null}));
    try {
      TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
      byte[] b0 = {1, 2, 3};
      byte[] b1 = {4, 5};
      s.gateway().tell(new MultiProduceRequest(ProtocolVersions.CURRENT, (short) -1, 30000, List.of(
          MultiProduceRequest.Entry.of("multi", 0, b0),
          MultiProduceRequest.Entry.of("bad name!", 0, b0),
          MultiProduceRequest.Entry.of("multi", 1, b1),
          MultiProduceRequest.Entry.of("multi", 0, b1),
          MultiProduceRequest.Entry.of("__consumer_offsets", 0, b1)), client.getRef()));
      ProduceRequest toLeader = leader.expectMessageClass(PartitionLeader.Produce.class).request();
      ProduceRequest toRouter = s.router().expectMessageClass(PartitionLeader.Produce.class).request();
      leader.expectNoMessage(Duration.ofMillis(100)); // the repeated partition 0 is not routed
      assertEquals(0, toLeader.partition());
      assertEquals(1, toRouter.partition());
      assertArrayEquals(b0, toLeader.batch());
      assertArrayEquals(b1, toRouter.batch());
      assertEquals(-1, toLeader.acks());
      assertEquals(30000, toRouter.timeoutMs());
      client.expectNoMessage(Duration.ofMillis(100)); // not before every leader answered
      assertTrue(toLeader.correlationId() != 0 && toRouter.correlationId() != 0
          && toLeader.correlationId() != toRouter.correlationId(), "each entry is numbered");
      toRouter.reply(new ProduceResponse("multi", 1, ErrorCode.NONE, null, 7L, -1L, 0L));
      toLeader.reply(ProduceResponse.failed("multi", 0, ErrorCode.NOT_ENOUGH_REPLICAS, "isr"));
      List<ProduceResponse> r = client.receiveMessage().responses();
      assertEquals(5, r.size());
      assertEquals(ErrorCode.NOT_ENOUGH_REPLICAS, r.get(0).error());
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, r.get(1).error());
      assertEquals(ErrorCode.NONE, r.get(2).error());
      assertEquals(7L, r.get(2).baseOffset());
      assertEquals(ErrorCode.INVALID_REQUEST, r.get(3).error());
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, r.get(4).error());
      assertEquals("Cannot append to internal topic __consumer_offsets", r.get(4).errorMessage());
      client.expectNoMessage(Duration.ofMillis(100)); // once
    } finally {
      local.publish(Map.of());
    }
  }

  /** An entry whose leader does not answer within the request's timeoutMs is answered REQUEST_TIMED_OUT (retriable). */
  @Test
  void aMultiPartitionProduceEntryNobodyAnswersTimesOut() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
    s.gateway().tell(twoEntries(ProtocolVersions.CURRENT, 300, client.getRef()));
    ProduceRequest first = s.router().expectMessageClass(PartitionLeader.Produce.class).request();
    s.router().expectMessageClass(PartitionLeader.Produce.class); // never answered
    first.reply(new ProduceResponse("t", 0, ErrorCode.NONE, null, 3L, -1L, 0L));
    List<ProduceResponse> r = client.receiveMessage(Duration.ofSeconds(10)).responses();
    assertEquals(List.of(ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT), r.stream().map(ProduceResponse::error).toList());
    assertTrue(r.get(1).error().retriable());
    assertEquals(3L, r.get(0).baseOffset());
  }

  /** A multi-partition request (acks=1) of one-byte batches for partitions 0 and 1 of topic "t". */
  private static MultiProduceRequest twoEntries(short version, int timeoutMs, ActorRef<MultiProduceResponse> replyTo) {
    return new MultiProduceRequest(version, (short) 1, timeoutMs, List.of(
        MultiProduceRequest.Entry.of("t", 0, new byte[] {1}), MultiProduceRequest.Entry.of("t", 1, new byte[] {2})),
        replyTo);
  }

  /** Two entries with real record batches, of an idempotent producer (producer id 7) or of one without (none). */
  private static MultiProduceRequest twoBatches(boolean idempotent, int timeoutMs,
      ActorRef<MultiProduceResponse> replyTo) {
    List<MultiProduceRequest.Entry> entries = new java.util.ArrayList<>();
    for (int partition = 0; partition < 2; partition++) {
      io.tributary.record.RecordBatchBuilder b = new io.tributary.record.RecordBatchBuilder();
      b.append(1_000L, null, new byte[] {(byte) partition}, null);
      if (idempotent) {
        b.setProducerState(7L, (short) 0, 0);
      }
      entries.add(MultiProduceRequest.Entry.of("t", partition, b.build()));
    }
    return new MultiProduceRequest(ProtocolVersions.CURRENT, (short) (idempotent ? -1 : 1), timeoutMs, entries,
        replyTo);
  }

  /**
   * Once one entry is answered, an entry whose leader stays silent (it died with the request) is answered
   * REQUEST_TIMED_OUT after a short grace, not after the request's whole timeoutMs: the answered entry is not held.
   * Only for an idempotent producer, whose retry of a batch appended after all is recognised as a duplicate.
   */
  @Test
  void aSilentLeaderHoldsUpTheOtherEntriesOnlyForAShortGrace() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
    s.gateway().tell(twoBatches(true, 600_000, client.getRef()));
    ProduceRequest first = s.router().expectMessageClass(PartitionLeader.Produce.class).request();
    s.router().expectMessageClass(PartitionLeader.Produce.class); // its leader died: never answered
    first.reply(new ProduceResponse("t", 0, ErrorCode.NONE, null, 5L, -1L, 0L));
    List<ProduceResponse> r = client.receiveMessage(Duration.ofSeconds(20)).responses();
    assertEquals(List.of(ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT), r.stream().map(ProduceResponse::error).toList());
    assertTrue(r.get(1).errorMessage().contains("of the request's other partitions"), r.get(1).errorMessage());
  }

  /**
   * Without idempotence a slow entry is not cut short by the grace: a retried batch without a producer id would be
   * appended twice (a busy 200-partition {@code acks=1} run stored 3% of its records twice). It waits for the
   * request's timeoutMs, as Kafka's producer request does.
   */
  @Test
  void aSlowEntryOfAProducerWithoutIdempotenceWaitsForTheRequestTimeoutNotTheGrace() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
    int timeoutMs = (int) (ProduceGathering.STRAGGLER_GRACE_NANOS / 1_000_000) + 2_000;
    s.gateway().tell(twoBatches(false, timeoutMs, client.getRef()));
    ProduceRequest first = s.router().expectMessageClass(PartitionLeader.Produce.class).request();
    ProduceRequest second = s.router().expectMessageClass(PartitionLeader.Produce.class).request();
    first.reply(new ProduceResponse("t", 0, ErrorCode.NONE, null, 5L, -1L, 0L));
    // past the grace (and its expiry tick), the request is still open
    client.expectNoMessage(Duration.ofNanos(ProduceGathering.STRAGGLER_GRACE_NANOS).plusMillis(500));
    second.reply(new ProduceResponse("t", 1, ErrorCode.NONE, null, 9L, -1L, 0L));
    List<ProduceResponse> r = client.receiveMessage(Duration.ofSeconds(20)).responses();
    assertEquals(List.of(ErrorCode.NONE, ErrorCode.NONE), r.stream().map(ProduceResponse::error).toList());
    assertEquals(List.of(5L, 9L), r.stream().map(ProduceResponse::baseOffset).toList());
  }

  /** A multi-partition request of a version this broker does not speak: every entry UNSUPPORTED_VERSION. */
  @Test
  void aMultiPartitionProduceRequestOfAnUnknownVersionIsRefusedPerEntry() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
    s.gateway().tell(twoEntries((short) (ProtocolVersions.CURRENT + 1), 1000, client.getRef()));
    List<ProduceResponse> r = client.receiveMessage().responses();
    assertEquals(List.of(ErrorCode.UNSUPPORTED_VERSION, ErrorCode.UNSUPPORTED_VERSION),
        r.stream().map(ProduceResponse::error).toList());
    s.router().expectNoMessage(Duration.ofMillis(100));
  }

  @Test
  void anAdminRequestIsAnsweredWithTheControllersAnswer() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<AdminResponse> client = testKit.createTestProbe();
    s.gateway().tell(new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, "t", 3, (short) 1, Map.of("retention.ms",
        "1000"), client.getRef()));
    Controller.Admin forwarded = s.controller().expectMessageClass(Controller.Admin.class);
    AdminRequest.CreateTopic create = (AdminRequest.CreateTopic) forwarded.request();
    assertEquals("t", create.name());
    assertEquals(3, create.partitions());
    assertEquals(Map.of("retention.ms", "1000"), create.configs());
    assertTrue(!create.replyTo().equals(client.getRef()), "answered to the gateway's child, which passes it on");
    AdminResponse answer = AdminResponse.failed(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.");
    create.replyTo().tell(answer);
    assertEquals(answer, client.receiveMessage());
  }

  /**
   * A controller that does not answer (the request was lost while the singleton moved): the client gets a retriable
   * REQUEST_TIMED_OUT after the gateway's controller timeout, not silence until its own request timeout.
   */
  @Test
  void anAdminRequestTheControllerDoesNotAnswerIsAnsweredRequestTimedOut() {
    Setup s = setup(Duration.ofMillis(200));
    TestProbe<AdminResponse> client = testKit.createTestProbe();
    s.gateway().tell(new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(), client.getRef()));
    s.controller().expectMessageClass(Controller.Admin.class); // and never answered
    AdminResponse r = client.receiveMessage(Duration.ofSeconds(10));
    assertEquals(ErrorCode.REQUEST_TIMED_OUT, r.error());
    assertTrue(r.error().retriable(), "the admin client retries it");
    assertEquals("The controller did not answer within 200 ms (it may be moving to another node after a node"
        + " failure); retry", r.errorMessage());
  }

  /** A commit is passed to the coordinator answered to a child, and the coordinator's answer on to the client. */
  @Test
  void aGroupRequestIsAnsweredWithTheCoordinatorsAnswer() {
    Setup s = setup(Duration.ofSeconds(30));
    TestProbe<GroupProtocol.GroupResponse> client = testKit.createTestProbe();
    List<GroupProtocol.PartitionOffset> offsets = List.of(new GroupProtocol.PartitionOffset("t", 0, 42L, ""));
    s.gateway().tell(new GroupProtocol.OffsetCommit(ProtocolVersions.CURRENT, "g", "m-1", 3, offsets,
        client.getRef()));
    GroupCoordinator.Request forwarded = s.groups().expectMessageClass(GroupCoordinator.Request.class);
    GroupProtocol.OffsetCommit commit = (GroupProtocol.OffsetCommit) forwarded.request();
    assertEquals(offsets, commit.offsets());
    assertEquals("m-1", commit.memberId());
    assertEquals(3, commit.generation());
    assertTrue(!commit.replyTo().equals(client.getRef()), "answered to the gateway's child, which passes it on");
    GroupProtocol.GroupResponse answer = new GroupProtocol.GroupResponse(ErrorCode.ILLEGAL_GENERATION, "stale", 4);
    commit.replyTo().tell(answer);
    assertEquals(answer, client.receiveMessage());
  }

  /**
   * A coordinator that does not answer (the request was lost while the singleton moved off a killed node): the
   * client gets a retriable COORDINATOR_NOT_AVAILABLE after the gateway's timeout, in the request's own response
   * type, not silence until its request timeout. A join, answered only when its rebalance completes, is not timed.
   */
  @Test
  void aGroupRequestTheCoordinatorDoesNotAnswerIsAnsweredCoordinatorNotAvailable() {
    Setup s = setup(Duration.ofMillis(200));
    TestProbe<GroupProtocol.GroupResponse> committer = testKit.createTestProbe();
    s.gateway().tell(new GroupProtocol.OffsetCommit(ProtocolVersions.CURRENT, "g", "m-1", 3,
        List.of(new GroupProtocol.PartitionOffset("t", 0, 42L, "")), committer.getRef()));
    s.groups().expectMessageClass(GroupCoordinator.Request.class); // and never answered
    GroupProtocol.GroupResponse r = committer.receiveMessage(Duration.ofSeconds(10));
    assertEquals(ErrorCode.COORDINATOR_NOT_AVAILABLE, r.error());
    assertTrue(r.error().retriable(), "the consumer retries it");
    assertEquals("The group coordinator did not answer within 200 ms (it may be moving to another node after a node"
        + " failure); retry", r.errorMessage());

    TestProbe<GroupProtocol.OffsetFetchResponse> fetcher = testKit.createTestProbe();
    s.gateway().tell(new GroupProtocol.OffsetFetch(ProtocolVersions.CURRENT, "g", List.of(), fetcher.getRef()));
    s.groups().expectMessageClass(GroupCoordinator.Request.class);
    assertEquals(ErrorCode.COORDINATOR_NOT_AVAILABLE, fetcher.receiveMessage(Duration.ofSeconds(10)).error());

    TestProbe<GroupProtocol.JoinGroupResponse> joiner = testKit.createTestProbe();
    TestProbe<GroupProtocol.MemberEvent> member = testKit.createTestProbe();
    s.gateway().tell(new GroupProtocol.JoinGroup(ProtocolVersions.CURRENT, "g", "", null, "c", List.of("t"), null,
        List.of("range"), 10000, 300000, List.of(), member.getRef(), joiner.getRef()));
    GroupProtocol.JoinGroup join =
        (GroupProtocol.JoinGroup) s.groups().expectMessageClass(GroupCoordinator.Request.class).request();
    assertEquals(joiner.getRef(), join.replyTo(), "a join goes straight to the coordinator");
    joiner.expectNoMessage(Duration.ofMillis(500));
  }
}
