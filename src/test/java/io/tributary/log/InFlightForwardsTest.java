package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import io.tributary.gateway.ProduceGathering;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The router's book of requests forwarded to other nodes ({@link InFlightForwards}): when a node is lost, what was
 * forwarded to it is answered NOT_LEADER_OR_FOLLOWER at once, so that neither a client nor a gateway gathering a
 * multi-partition request's answers waits for {@code request.timeout.ms}.
 */
class InFlightForwardsTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final String LOST = "akka://tributary@127.0.0.1:2";
  private static final String ALIVE = "akka://tributary@127.0.0.1:3";

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  private static MultiProduceRequest.Entry entry(String topic, int partition) {
    byte[] batch = new byte[] {1, 2, 3};
    return new MultiProduceRequest.Entry(topic, partition, batch, 0, batch.length);
  }

  @Test
  void entriesOfAGatheredRequestForwardedToALostNodeAreAnsweredUnderTheirCorrelationIds() {
    TestProbe<ProduceResponse> gatherer = testKit.createTestProbe();
    TestProbe<MultiProduceResponse> client = testKit.createTestProbe();
    ProduceGathering gathering = new ProduceGathering(gatherer.getRef());
    long now = System.nanoTime();
    List<ProduceRequest> routed = gathering.register(new MultiProduceRequest(ProtocolVersions.CURRENT, (short) -1,
        30_000, List.of(entry("orders", 0), entry("orders", 1)), client.getRef()), now);
    InFlightForwards book = new InFlightForwards();
    for (ProduceRequest r : routed) {
      book.remember(LOST, new PartitionLeader.Produce(r), now);
    }

    assertEquals(2, book.failAll(LOST, "node lost"));
    for (ProduceRequest r : routed) {
      ProduceResponse answer = gatherer.receiveMessage();
      assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, answer.error());
      assertEquals(r.correlationId(), answer.correlationId(), "the answer must carry the entry's correlation id");
      assertTrue(gathering.onResponse(answer), "the gathering must recognise the answer");
    }
    MultiProduceResponse toClient = client.receiveMessage();
    assertEquals(2, toClient.responses().size());
    for (ProduceResponse r : toClient.responses()) {
      assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, r.error());
    }
    assertEquals(0, book.failAll(LOST, "node lost"), "answered requests are forgotten");
  }

  @Test
  void onlyTheLostNodesRequestsAreAnsweredAndAcksZeroIsNotRemembered() {
    TestProbe<ProduceResponse> producer = testKit.createTestProbe();
    TestProbe<FetchResponse> consumer = testKit.createTestProbe();
    InFlightForwards book = new InFlightForwards();
    long now = System.nanoTime();
    book.remember(LOST, new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, "orders", 0,
        (short) 0, 30_000, new byte[] {1}, null)), now);
    book.remember(ALIVE, new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, "orders", 1,
        (short) 1, 30_000, new byte[] {1}, producer.getRef())), now);
    book.remember(LOST, new PartitionLeader.Fetch(new FetchRequest(ProtocolVersions.CURRENT, "orders", 2, 5L,
        1 << 20, 500, consumer.getRef())), now);

    assertEquals(1, book.failAll(LOST, "node lost"));
    FetchResponse fetch = consumer.receiveMessage();
    assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, fetch.error());
    assertEquals(2, fetch.partition());
    producer.expectNoMessage(Duration.ofMillis(100));
    assertEquals(1, book.failAll(ALIVE, "node lost"));
    assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, producer.receiveMessage().error());
  }

  @Test
  void requestsOlderThanTheKeepTimeAreForgotten() {
    TestProbe<ProduceResponse> producer = testKit.createTestProbe();
    InFlightForwards book = new InFlightForwards();
    long t0 = 1_000_000_000L;
    book.remember(LOST, new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, "orders", 0,
        (short) 1, 30_000, new byte[] {1}, producer.getRef())), t0);
    book.remember(LOST, new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, "orders", 1,
        (short) 1, 30_000, new byte[] {1}, producer.getRef())), t0 + InFlightForwards.KEEP_NANOS + 1);

    assertEquals(1, book.failAll(LOST, "node lost"));
    assertEquals(1, producer.receiveMessage().partition());
  }
}
