package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.TestNodes;
import io.tributary.gateway.ClientListener;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node's client listener ({@code tributary.broker.listeners}) in front of its cluster port: what clients connect to,
 * its settings, and the notice it sends its clients when it closes.
 */
class ClientListenerTest {

  private static ClientListener.Settings settings(String value) {
    return ClientListener.Settings.create(ConfigFactory.parseMap(Map.of(ClientListener.LISTENERS_KEY, value)));
  }

  @Test
  void theListenerKeyIsHostAndPortOrEmptyForNone() {
    assertEquals(new ClientListener.Settings("127.0.0.1", 9092), settings("127.0.0.1:9092"));
    assertEquals(new ClientListener.Settings("127.0.0.1", 0), settings(" PLAINTEXT://127.0.0.1:0 "));
    assertEquals(new ClientListener.Settings("::1", 9092), settings("[::1]:9092"));
    assertNull(settings(""), "no listener");
    for (String bad : List.of("127.0.0.1", ":9092", "127.0.0.1:65536", "127.0.0.1:-1", "a,b:1", "h:x")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> settings(bad), bad);
      assertTrue(e.getMessage().startsWith(ClientListener.LISTENERS_KEY + " must be HOST:PORT"), e.getMessage());
    }
  }

  /**
   * A client's failure detector heartbeats the listener's remote watcher by actor selection; untrusted mode drops
   * selections of untrusted paths, and a listener that dropped these would look dead to every client seconds after it
   * connected (a producer with {@code acks=1} then resent what was in flight and stored it twice: GroupFailoverIT).
   */
  @Test
  void theListenerAnswersTheHeartbeatsOfClientsFailureDetectors() throws Exception {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    akka.actor.ActorSystem client = akka.actor.ActorSystem.create("heartbeats", TributaryClient.clientSystemConfig());
    try {
      akka.actor.ActorSelection watcher = client.actorSelection("akka://tributary@" + node.bootstrapServer()
          + "/system/remote-watcher");
      Object answer = akka.pattern.Patterns.ask(watcher, akka.remote.RemoteWatcher.ArteryHeartbeat$.MODULE$,
          java.time.Duration.ofSeconds(10)).toCompletableFuture().get(20, TimeUnit.SECONDS);
      assertTrue(answer instanceof akka.remote.RemoteWatcher.ArteryHeartbeatRsp, String.valueOf(answer));
    } finally {
      client.terminate();
      client.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      node.close();
    }
  }

  /**
   * A node's cluster port given as a bootstrap server: no gateway for clients answers there (the node's own has
   * another name), and the client says that it is a cluster port and what to give instead.
   */
  @Test
  void aClientGivenTheClusterPortIsToldToUseTheClientListener() throws Exception {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    try {
      TributaryException e = assertThrows(TributaryException.class,
          () -> TributaryClient.connect(node.clusterAddress(), Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 20_000)));
      assertEquals(io.tributary.protocol.ErrorCode.NETWORK_EXCEPTION, e.errorCode());
      assertTrue(e.getMessage().contains(node.clusterAddress() + " is the cluster port of a Tributary node"),
          e.getMessage());
      assertTrue(e.getMessage().contains("client listener"), e.getMessage());
    } finally {
      node.close();
    }
  }

  /** {@code localhost} works wherever {@code 127.0.0.1} does, although the node's Artery address is the latter. */
  @Test
  void aClientConnectsByTheNameLocalhost() throws Exception {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    try {
      String port = node.bootstrapServer().substring(node.bootstrapServer().lastIndexOf(':') + 1);
      try (TributaryClient client = TributaryClient.connect("localhost:" + port); Admin admin = client.admin()) {
        admin.createTopic("by-name", 1, (short) 1, Map.of());
        assertTrue(admin.listTopics().contains("by-name"));
      }
    } finally {
      node.close();
    }
  }

  /**
   * A node's bootstrap address is its listener, not its cluster port; a client served through it learns that it
   * closes (the node stops) from the listener's notice, since it cannot death-watch the listener, and gives the node up
   * at once, saying why (its failure detector would say "gone", seconds later).
   */
  @Test
  void aClientServedThroughTheListenerIsToldWhenItCloses() throws Exception {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    try {
      assertNotEquals(node.clusterAddress(), node.bootstrapServer(), "two ports");
      try (TributaryClient client = TributaryClient.connect(node.bootstrapServer(),
          Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 20_000));
          Admin admin = client.admin()) {
        admin.createTopic("served", 1, (short) 1, Map.of());
        assertTrue(admin.listTopics().contains("served"));
        assertNull(client.lostGateway());
        node.tributary().listener().orElseThrow().close().toCompletableFuture().get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (client.lostGateway() == null) {
          assertTrue(System.nanoTime() < deadline, "the client gives its gateway up within 30 s");
          Thread.sleep(10); // polling the client's state: no event to wait on
        }
        assertTrue(client.lostGateway().contains(" is closing (its node stops)"), client.lostGateway());
      }
    } finally {
      node.close();
    }
  }

  /**
   * A client started again on the port of one that closed (a fixed {@code tributary.client.port}, or the same free port
   * picked twice by the kernel over a long test run) is answered. The node answers clients through its cluster
   * transport, which quarantines a closed client's incarnation a second after it said it terminates and then stops its
   * streams to that address; answers to a quarantined address are dropped until a new handshake, which a client that
   * only ever sends to the listener never makes. Each client ActorSystem has a name of its own, so no two incarnations
   * share an address. (Found by CI: every request of one CLI command timed out, twice, in CliRoundTripTest.)
   */
  @Test
  void aClientStartedAgainOnTheSamePortIsAnswered() throws Exception {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    akka.actor.ExtendedActorSystem nodeSystem =
        (akka.actor.ExtendedActorSystem) akka.actor.typed.javadsl.Adapter.toClassic(node.tributary().system());
    java.util.concurrent.CompletableFuture<Object> quarantined = new java.util.concurrent.CompletableFuture<>();
    akka.actor.ActorRef events =
        nodeSystem.systemActorOf(akka.actor.Props.create(QuarantineListener.class, quarantined), "quarantine-events");
    nodeSystem.eventStream().subscribe(events, akka.remote.artery.GracefulShutdownQuarantinedEvent.class);
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Map<String, Object> config = Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 15_000, "tributary.client.port", port);
    try {
      akka.actor.Address firstAddress;
      try (TributaryClient first = TributaryClient.connect(node.bootstrapServer(), config);
          Admin admin = first.admin()) {
        firstAddress = first.system().address();
        assertEquals(port, (int) firstAddress.getPort().orElseThrow());
        admin.createTopic("first", 1, (short) 1, Map.of());
      }
      // the node puts the first client's incarnation in quarantine ("ActorSystem terminated") ...
      Object event = quarantined.get(30, TimeUnit.SECONDS);
      assertTrue(event.toString().contains(firstAddress.toString()), event.toString());
      // ... and stops its streams to that address (Artery's stop-quarantined-after-idle, 3 s)
      akka.remote.artery.Association association = ((akka.remote.artery.ArteryTransport)
          ((akka.remote.RemoteActorRefProvider) nodeSystem.provider()).transport()).association(firstAddress);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (association.isStreamActive(0) || association.isOrdinaryMessageStreamActive()) {
        assertTrue(System.nanoTime() < deadline, "the node stops its streams to a quarantined client within 30 s");
        Thread.sleep(10); // polling Artery's state: it publishes no event for this
      }
      try (TributaryClient second = TributaryClient.connect(node.bootstrapServer(), config);
          Admin admin = second.admin()) {
        assertEquals(port, (int) second.system().address().getPort().orElseThrow());
        assertTrue(admin.listTopics().contains("first"));
        admin.createTopic("second", 1, (short) 1, Map.of());
      }
    } finally {
      nodeSystem.stop(events);
      node.close();
    }
  }

  /** Completes its future with the first event it is sent (the node's quarantine events). */
  static final class QuarantineListener extends akka.actor.AbstractActor {
    private final java.util.concurrent.CompletableFuture<Object> seen;

    QuarantineListener(java.util.concurrent.CompletableFuture<Object> seen) {
      this.seen = seen;
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder().matchAny(seen::complete).build();
    }
  }
}
