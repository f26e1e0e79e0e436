package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.AbstractActor;
import akka.actor.ExtendedActorSystem;
import akka.actor.Props;
import akka.actor.Terminated;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.remote.artery.GracefulShutdownQuarantinedEvent;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.TestNodes;
import io.tributary.protocol.ClientRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A remote client whose only broker goes away and comes back much later (a new incarnation on the same port and data
 * dir) resumes: its producer's records are acknowledged and stored once, its consumer reads on.
 *
 * <p>What made the outage length matter. The client's Artery quarantines the node's old incarnation (a killed node
 * when death watch gives it up, {@code tributary.client.watch-heartbeat-interval} + {@code
 * watch-acceptable-heartbeat-pause} after its last heartbeat; a stopped one as soon as its stop is flushed) and from
 * then on drops every message sent to a ref at that address. Only actor selections pass: death watch's own heartbeats
 * are such, and the client's failover probe was not (an {@code Identify} through the gateway's ref). The messages
 * let through keep the association's outbound streams going, and the streams, still trying to connect, are what
 * reaches a new incarnation and shakes hands with it. Once death watch has given the node up its heartbeats stop, and
 * {@code akka.remote.artery.advanced.stop-quarantined-after-idle} (3 s) later the streams are stopped: a node back
 * after that (about 8 s after a kill) was never reached again.
 *
 * <p>The test reaches that state in seconds: the node stops gracefully (the client quarantines it a second later), and
 * the node is started again only once each client's death watch has given it up and its outbound message stream to
 * the node has been stopped, states the test awaits. The clients keep Akka's {@code stop-quarantined-after-idle} (3
 * s), which is also how long a new incarnation has to answer the handshake a probe starts: a test once set it to 10
 * ms to get there faster, and reconnecting became a race with that timer.
 */
class BrokerComebackTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Test
  void producerAndConsumerResumeWhenTheirOnlyBrokerComesBackAfterTheClientGaveItUp() throws Exception {
    Path dataDir = TestNodes.tempDataDir();
    BrokerNode node = TestNodes.start(dataDir, Map.of());
    int port = TestNodes.clientPort(node);
    Map<String, Object> clientConfig =
        Map.of(
            ClientConfig.LINGER_MS, 0,
            ClientConfig.REQUEST_TIMEOUT_MS, 5_000,
            ClientConfig.RETRY_BACKOFF_MS, 50,
            // a record never acknowledged fails after this (its default is 2 minutes)
            ClientConfig.DELIVERY_TIMEOUT_MS, 30_000);
    try (TributaryClient producerClient = connect(port, clientConfig);
        TributaryClient consumerClient = connect(port, clientConfig)) {
      try (Admin admin = producerClient.admin()) {
        admin.createTopic("comeback", 1, (short) 1, Map.of());
      }
      Producer<String, String> producer =
          producerClient.producer(Map.of(ClientConfig.ACKS, "all"), Serializer.string(), Serializer.string());
      Consumer<String, String> consumer =
          consumerClient.consumer(
              Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.string(), Deserializer.string());
      consumer.assign(List.of(new TopicPartition("comeback", 0)));
      assertEquals(0L, send(producer, "before"));
      List<String> read = new ArrayList<>();
      pollUntil(consumer, read, 1);

      TestProbe<GracefulShutdownQuarantinedEvent> producerQuarantined = quarantineProbe(producerClient);
      TestProbe<GracefulShutdownQuarantinedEvent> consumerQuarantined = quarantineProbe(consumerClient);
      CompletableFuture<Terminated> producerGaveUp = deathWatchGivesUp(producerClient, port);
      CompletableFuture<Terminated> consumerGaveUp = deathWatchGivesUp(consumerClient, port);
      node.close();
      producerQuarantined.expectMessageClass(GracefulShutdownQuarantinedEvent.class, Duration.ofSeconds(30));
      consumerQuarantined.expectMessageClass(GracefulShutdownQuarantinedEvent.class, Duration.ofSeconds(30));
      assertTrue(producerGaveUp.get(30, TimeUnit.SECONDS).addressTerminated(), "given up by the failure detector");
      assertTrue(consumerGaveUp.get(30, TimeUnit.SECONDS).addressTerminated(), "given up by the failure detector");
      awaitMessageStreamStopped(producerClient, node.system().address());
      awaitMessageStreamStopped(consumerClient, node.system().address());

      node = TestNodes.start(dataDir, Map.of());
      assertEquals(port, TestNodes.clientPort(node), "the same port again");
      assertEquals(1L, send(producer, "after"), "acknowledged by the node that came back, stored once after the first");
      pollUntil(consumer, read, 2);
      assertEquals(List.of("before", "after"), read);
      producer.close();
      consumer.close();
    } finally {
      node.close();
    }
  }

  /** A client as {@link TributaryClient#connect} makes it (same ActorSystem config, one bootstrap node). */
  private static TributaryClient connect(int port, Map<String, Object> config) {
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), TributaryClient.CLIENT_SYSTEM_NAME, TributaryClient.clientSystemConfig());
    ActorRef<ClientRequest> gateway =
        ActorRefResolver.get(system).resolveActorRef(BrokerAddress.parse("127.0.0.1:" + port).gatewayUri());
    return TributaryClient.withFailover(system, List.of(gateway), 0, true, config);
  }

  /**
   * Waits until {@code client}'s Artery has stopped its outbound message stream to {@code node} (a quarantined
   * association, {@code stop-quarantined-after-idle} after the last message let through). Reads Artery's association
   * state ({@code private[remote]} in Scala, public to Java): there is no event for it.
   */
  private static void awaitMessageStreamStopped(TributaryClient client, akka.actor.Address node) {
    akka.remote.artery.ArteryTransport transport =
        (akka.remote.artery.ArteryTransport)
            ((akka.remote.RemoteActorRefProvider) ((ExtendedActorSystem) Adapter.toClassic(client.system())).provider())
                .transport();
    testKit.createTestProbe().awaitAssert(Duration.ofSeconds(30), Duration.ofMillis(20), () -> {
      assertFalse(transport.association(node).isOrdinaryMessageStreamActive(), "message stream to " + node);
      return null;
    });
  }

  /** A probe told when {@code client}'s ActorSystem quarantines a node that stopped. */
  private static TestProbe<GracefulShutdownQuarantinedEvent> quarantineProbe(TributaryClient client) {
    TestProbe<GracefulShutdownQuarantinedEvent> probe = testKit.createTestProbe();
    Adapter.toClassic(client.system())
        .eventStream()
        .subscribe(Adapter.toClassic(probe.ref()), GracefulShutdownQuarantinedEvent.class);
    return probe;
  }

  /**
   * Completes when {@code client}'s death watch gives up the gateway of the node at {@code port}: an actor in the
   * client's ActorSystem watches it as the client's failover does, and gets its {@link Terminated} at the same moment
   * (the failure detector terminates every watch of a node at once, and stops heartbeating it).
   */
  private static CompletableFuture<Terminated> deathWatchGivesUp(TributaryClient client, int port) {
    CompletableFuture<Terminated> terminated = new CompletableFuture<>();
    akka.actor.ActorRef gateway =
        Adapter.toClassic(
            ActorRefResolver.get(client.system())
                .<ClientRequest>resolveActorRef(BrokerAddress.parse("127.0.0.1:" + port).gatewayUri()));
    ((ExtendedActorSystem) Adapter.toClassic(client.system()))
        .systemActorOf(
            Props.create(GatewayWatcher.class, () -> new GatewayWatcher(gateway, terminated)),
            "gateway-watcher-" + UUID.randomUUID());
    return terminated;
  }

  /** Watches one gateway; completes its future with the {@link Terminated}. */
  private static final class GatewayWatcher extends AbstractActor {
    private final CompletableFuture<Terminated> terminated;

    GatewayWatcher(akka.actor.ActorRef gateway, CompletableFuture<Terminated> terminated) {
      this.terminated = terminated;
      getContext().watch(gateway);
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(Terminated.class, t -> {
            terminated.complete(t);
            getContext().stop(getSelf());
          })
          .build();
    }
  }

  private static long send(Producer<String, String> producer, String value) throws Exception {
    return producer
        .send(new ProducerRecord<>("comeback", 0, null, value))
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS)
        .offset();
  }

  private static void pollUntil(Consumer<String, String> consumer, List<String> read, int count) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (read.size() < count && System.nanoTime() < deadline) {
      consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(r.value()));
    }
  }
}
