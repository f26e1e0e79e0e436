package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.ProduceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A client with two in-process gateways ({@link FakeGateway}s standing for two nodes) moves to the second when the
 * first is gone or stops answering; producers, consumers and admins only see it as retried requests.
 */
class GatewayFailoverTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  /** One node's gateway: counts what it gets and passes it on to the cluster, unless it is hung. */
  private static final class Node {
    final List<ClientRequest> received = new CopyOnWriteArrayList<>();
    /** What it got while hung. */
    final java.util.concurrent.atomic.AtomicInteger swallowed = new java.util.concurrent.atomic.AtomicInteger();
    volatile boolean hung;
    final ActorRef<ClientRequest> ref;

    Node(ActorRef<ClientRequest> cluster) {
      ref =
          testKit.spawn(
              Behaviors.receiveMessage(
                  (ClientRequest m) -> {
                    if (!hung) {
                      received.add(m);
                      cluster.tell(m);
                    } else {
                      swallowed.incrementAndGet();
                    }
                    return Behaviors.same();
                  }));
    }

    long count(Class<?> type) {
      return received.stream().filter(type::isInstance).count();
    }
  }

  /** Two nodes in front of one cluster (a {@link FakeGateway}: one log per partition, whichever node is used). */
  private record Nodes(FakeGateway cluster, Node a, Node b) {}

  private static Nodes nodes(String topic) {
    FakeGateway cluster = new FakeGateway();
    cluster.createTopic(topic, 1);
    ActorRef<ClientRequest> ref = testKit.spawn(cluster.behavior());
    return new Nodes(cluster, new Node(ref), new Node(ref));
  }

  private static TributaryClient client(Nodes n, Map<String, Object> config) {
    return TributaryClient.withFailover(testKit.system(), List.of(n.a().ref, n.b().ref), 0, false, config);
  }

  private static RecordMetadata send(Producer<String, String> producer, String topic, String value) throws Exception {
    return producer.send(new ProducerRecord<>(topic, 0, null, value)).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /**
   * Every gateway gone (a one-node cluster whose node was killed): an admin call gives up after
   * default.api.timeout.ms and says that the gateway is gone, not only that a request timed out.
   */
  @Test
  void whenEveryGatewayIsGoneAnAdminCallSaysSoWhenItGivesUp() {
    Nodes n = nodes("lost");
    try (TributaryClient client = client(n, Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 300,
            ClientConfig.DEFAULT_API_TIMEOUT_MS, 1500, ClientConfig.RETRY_BACKOFF_MS, 50));
        Admin admin = client.admin()) {
      assertTrue(admin.listTopics().contains("lost"));
      assertEquals(null, client.lostGateway(), "it has a gateway");
      testKit.stop(n.a().ref);
      testKit.stop(n.b().ref);
      TributaryException e = assertThrows(TributaryException.class, admin::listTopics);
      assertTrue(e.isRetriable(), e.getMessage());
      assertTrue(e.getMessage().contains(": no success within default.api.timeout.ms=1500 ms: the Tributary gateway "),
          e.getMessage());
      assertTrue(e.getMessage().contains(" and no node of the bootstrap list has answered since; last error: "),
          e.getMessage());
    }
  }

  @Test
  void whenTheFirstGatewayStopsProducerConsumerAndAdminGoOnThroughTheSecond() throws Exception {
    Nodes n = nodes("moved");
    try (TributaryClient client = client(n, Map.of(ClientConfig.LINGER_MS, 0));
        Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
      assertEquals(0L, send(producer, "moved", "before").offset());
      assertEquals(1, n.a().count(ProduceRequest.class));

      testKit.stop(n.a().ref); // the node is gone: death watch tells the client

      assertEquals(1L, send(producer, "moved", "after").offset(), "written through the second gateway");
      // a send that raced the stop may reach the second gateway twice (once resent after the first was lost): the
      // idempotent producer still writes it once, which the values below show
      assertTrue(n.b().count(ProduceRequest.class) >= 1);
      assertEquals(List.of("before", "after"), n.cluster().values("moved", 0));
      try (Admin admin = client.admin()) {
        assertTrue(admin.listTopics().contains("moved"));
      }
      try (Consumer<String, String> consumer =
          client.consumer(Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.string(),
              Deserializer.string())) {
        consumer.assign(List.of(new TopicPartition("moved", 0)));
        List<String> read = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (read.size() < 2 && System.nanoTime() < deadline) {
          consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
        }
        assertEquals(List.of("before", "after"), read);
      }
      assertTrue(n.b().count(FetchRequest.class) > 0);
      assertTrue(n.b().count(AdminRequest.ListTopics.class) > 0);
      assertEquals(0, n.a().count(FetchRequest.class), "the consumer only ever used the second node");
    }
  }

  @Test
  void aGatewayThatStopsAnsweringIsLeftAfterARequestTimesOutAndTheBatchIsRetriedThroughTheOther() throws Exception {
    Nodes n = nodes("hung");
    Map<String, Object> config =
        Map.of(
            ClientConfig.LINGER_MS, 0,
            ClientConfig.REQUEST_TIMEOUT_MS, 500,
            ClientConfig.RETRY_BACKOFF_MS, 10);
    try (TributaryClient client = client(n, config);
        Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
      assertEquals(0L, send(producer, "hung", "before").offset());
      n.a().hung = true; // alive (its actor still answers Identify) but passes nothing on

      assertEquals(1L, send(producer, "hung", "after").offset());
      assertEquals(List.of("before", "after"), n.cluster().values("hung", 0));
      assertEquals(1, n.a().count(ProduceRequest.class));
      assertEquals(1, n.b().count(ProduceRequest.class), "the retry went through the other node");
    }
  }

  /** An idempotent producer that would wait two minutes (request.timeout.ms) for an answer that does not come. */
  private static final Map<String, Object> IN_FLIGHT_CONFIG =
      Map.of(
          ClientConfig.LINGER_MS, 0,
          ClientConfig.REQUEST_TIMEOUT_MS, 120_000,
          ClientConfig.DELIVERY_TIMEOUT_MS, 240_000,
          ClientConfig.ENABLE_IDEMPOTENCE, "true",
          ClientConfig.ACKS, "all",
          ClientConfig.RETRY_BACKOFF_MS, 10);

  /**
   * A batch in flight through a node that dies is resent through the other node as soon as death watch reports the
   * node gone, not after {@code request.timeout.ms} (two minutes here: the send would not complete within the bound).
   */
  @Test
  void aBatchInFlightThroughAGatewayThatIsGoneIsResentAtOnceThroughTheOther() throws Exception {
    Nodes n = nodes("inflight");
    try (TributaryClient client = client(n, IN_FLIGHT_CONFIG);
        Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
      assertEquals(0L, send(producer, "inflight", "before").offset());
      n.a().hung = true; // the node swallows what it gets, as a node that was just SIGKILLed
      long produceBefore = n.a().count(ProduceRequest.class);
      var pending = producer.send(new ProducerRecord<>("inflight", 0, null, "in flight")).toCompletableFuture();
      awaitTrue(() -> client.inFlightRequests() > 0, "the batch is in flight");
      assertEquals(produceBefore, n.a().count(ProduceRequest.class), "the hung node passed nothing on");

      long stopped = System.nanoTime();
      testKit.stop(n.a().ref); // death watch: the node is gone
      assertEquals(1L, pending.get(30, TimeUnit.SECONDS).offset(), "resent through the second node");
      System.out.printf("GatewayFailoverTest: batch in flight acknowledged through the other node %d ms after its"
          + " node was reported gone (request.timeout.ms 120000)%n", (System.nanoTime() - stopped) / 1_000_000);
      assertEquals(List.of("before", "in flight"), n.cluster().values("inflight", 0));
      assertEquals(1, n.b().count(ProduceRequest.class));
    }
  }

  /**
   * A node killed and started again within seconds on the same address: death watch does not report it (the new
   * process answers the heartbeats) and the new gateway answers new requests, but the batch in flight to the old
   * process is lost. When another actor answers at the gateway's path (the incarnation check's Identify), the batch
   * is resent at once, not after request.timeout.ms (two minutes here).
   */
  @Test
  void aBatchInFlightToANodeThatRestartedIsResentWhenAnotherIncarnationAnswers() throws Exception {
    Nodes n = nodes("restarted");
    try (TributaryClient client = client(n, IN_FLIGHT_CONFIG);
        Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
      assertEquals(0L, send(producer, "restarted", "before").offset());
      n.a().hung = true; // the old process: what it got is lost
      var pending = producer.send(new ProducerRecord<>("restarted", 0, null, "in flight")).toCompletableFuture();
      awaitTrue(() -> client.inFlightRequests() > 0, "the batch is in flight");

      client.incarnationAnsweredForTest(akka.actor.typed.javadsl.Adapter.toClassic(n.b().ref));
      assertEquals(1L, pending.get(30, TimeUnit.SECONDS).offset(), "resent without waiting for the timeout");
      assertEquals(List.of("before", "in flight"), n.cluster().values("restarted", 0));
    }
  }

  /**
   * A node that stops through its coordinated shutdown tells its clients through its client listener ({@link
   * io.tributary.protocol.GatewayClosing}), which they cannot death-watch: a batch in flight through it is resent at
   * once through the other node, not after {@code request.timeout.ms} (two minutes here). A notice naming another
   * node than the current gateway's is ignored.
   */
  @Test
  void aBatchInFlightThroughAGatewayThatSaysItIsClosingIsResentAtOnceThroughTheOther() throws Exception {
    Nodes n = nodes("closing");
    try (TributaryClient client = client(n, IN_FLIGHT_CONFIG);
        Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
      assertEquals(0L, send(producer, "closing", "before").offset());
      n.a().hung = true; // the closing node answers nothing more
      var pending = producer.send(new ProducerRecord<>("closing", 0, null, "in flight")).toCompletableFuture();
      awaitTrue(() -> client.inFlightRequests() > 0, "the batch is in flight");

      client.tellFailoverForTest(new io.tributary.protocol.GatewayClosing("akka://tributary@127.0.0.1:1"));
      int swallowed = n.a().swallowed.get();
      var second = producer.send(new ProducerRecord<>("closing", 0, null, "after the other notice"))
          .toCompletableFuture();
      awaitTrue(() -> n.a().swallowed.get() > swallowed, "a request sent after another node's notice still goes to"
          + " the current gateway");
      assertEquals(null, client.lostGateway(), "another node's notice changes nothing");
      client.tellFailoverForTest(
          new io.tributary.protocol.GatewayClosing(n.a().ref.path().address().toString()));
      assertEquals(1L, pending.get(30, TimeUnit.SECONDS).offset(), "resent without waiting for the timeout");
      assertEquals(2L, second.get(30, TimeUnit.SECONDS).offset());
      assertEquals(List.of("before", "in flight", "after the other notice"), n.cluster().values("closing", 0));
    }
  }

  /** Waits (bounded, against hangs only) until {@code condition} holds. */
  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, what + ": not within 30 s");
      Thread.sleep(5);
    }
  }

  @Test
  void aTimeoutIsNoSuspicionWhenTheGatewayAnsweredSinceTheRequestWasSent() {
    GatewayFailover.Health health = new GatewayFailover.Health();
    TestProbe<Object> probe = testKit.createTestProbe();
    health.failover = probe.getRef();
    int generation = health.generation();

    long sent = System.nanoTime();
    health.answered(generation); // another request through the same gateway was answered after this one was sent
    health.timedOut(generation, sent, "slow");
    health.timedOut(generation - 1, System.nanoTime(), "an older gateway's request");
    health.timedOut(generation, System.nanoTime(), "dead");

    GatewayFailover.Suspect suspect = probe.expectMessageClass(GatewayFailover.Suspect.class);
    assertEquals("dead timed out", suspect.reason(), "the first two were not reported");
    assertEquals(generation, suspect.generation());
  }

  /**
   * Over real Artery remoting: two node ActorSystems, each with a gateway at {@code /system/tributary-gateway} in
   * front of the same fake cluster, and a client made by {@link TributaryClient#connect} with both addresses. The
   * second node does not answer at connect time, so the client starts on the first; then the first node's ActorSystem
   * terminates and the producer's next record goes through the second.
   */
  @Test
  void aRemoteClientMovesToTheNextBootstrapNodeWhenItsNodeTerminates() throws Exception {
    FakeGateway cluster = new FakeGateway();
    cluster.createTopic("remote-move", 1);
    ActorRef<ClientRequest> clusterRef = testKit.spawn(cluster.behavior());
    akka.actor.typed.ActorSystem<Void> nodeA =
        akka.actor.typed.ActorSystem.create(Behaviors.empty(), "nodea", TributaryClient.clientSystemConfig());
    akka.actor.typed.ActorSystem<Void> nodeB =
        akka.actor.typed.ActorSystem.create(Behaviors.empty(), "nodeb", TributaryClient.clientSystemConfig());
    try {
      List<ClientRequest> toA = new CopyOnWriteArrayList<>();
      List<ClientRequest> toB = new CopyOnWriteArrayList<>();
      java.util.concurrent.atomic.AtomicBoolean bAnswers = new java.util.concurrent.atomic.AtomicBoolean();
      nodeA.systemActorOf(forwarder(clusterRef, toA, () -> true), "tributary-gateway", akka.actor.typed.Props.empty());
      nodeB.systemActorOf(forwarder(clusterRef, toB, bAnswers::get), "tributary-gateway",
          akka.actor.typed.Props.empty());
      String bootstrap =
          "nodea@127.0.0.1:" + nodeA.address().getPort().get() + ",nodeb@127.0.0.1:"
              + nodeB.address().getPort().get();
      Map<String, Object> config =
          Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 3000, ClientConfig.RETRY_BACKOFF_MS, 50, ClientConfig.LINGER_MS, 0);
      try (TributaryClient client = TributaryClient.connect(bootstrap, config);
          Producer<String, String> producer = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
        bAnswers.set(true);
        assertEquals(0L, send(producer, "remote-move", "before").offset());
        assertTrue(toA.stream().anyMatch(ProduceRequest.class::isInstance));

        nodeA.terminate();
        nodeA.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);

        assertEquals(1L, send(producer, "remote-move", "after").offset());
        assertTrue(toB.stream().anyMatch(ProduceRequest.class::isInstance), "through the second node");
        assertEquals(List.of("before", "after"), cluster.values("remote-move", 0));
      }
    } finally {
      nodeA.terminate();
      nodeB.terminate();
      nodeB.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** A gateway that passes requests on to {@code cluster} while {@code answers} says so, and records them. */
  private static akka.actor.typed.Behavior<ClientRequest> forwarder(
      ActorRef<ClientRequest> cluster, List<ClientRequest> log, java.util.function.BooleanSupplier answers) {
    return Behaviors.receiveMessage(
        m -> {
          if (answers.getAsBoolean()) {
            log.add(m);
            cluster.tell(m);
          }
          return Behaviors.same();
        });
  }
}
