package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import akka.Done;
import akka.actor.CoordinatedShutdown;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol.LeaveGroup;
import io.tributary.protocol.GroupProtocol.OffsetCommit;
import io.tributary.protocol.ProtocolVersions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Closing a client while it, its ActorSystem or the JVM shuts down: every close ends within its timeout, and a gateway
 * lost because the local side is going away starts no failover. Each test has its own ActorSystem (some terminate
 * it). Bounds in {@code assertTimeoutPreemptively} are against hangs only (several times what the close is given).
 */
class ClientShutdownTest {

  /** Against hangs only. */
  private static final Duration HANG_BOUND = Duration.ofSeconds(30);

  @Test
  void theClientActorSystemLeavesShutdownToCloseAndWatchesItsGatewayWithAShortPause() {
    Config config = TributaryClient.clientSystemConfig();
    assertFalse(config.getBoolean("akka.jvm-shutdown-hooks"),
        "no Akka JVM hook tears remoting down under the application's own shutdown hook");
    assertEquals(Duration.ofSeconds(1), config.getDuration("akka.remote.watch-failure-detector.heartbeat-interval"));
    assertEquals(Duration.ofSeconds(4),
        config.getDuration("akka.remote.watch-failure-detector.acceptable-heartbeat-pause"));
  }

  /**
   * The rebalance listener commits synchronously while the consumer closes, and the coordinator never answers the
   * commit: the commit gets what is left of the close timeout (1 s), not {@code default.api.timeout.ms} (2 minutes
   * here), and the consumer still leaves the group.
   */
  @Test
  void aCommitInTheRevocationListenerIsBoundedByTheCloseTimeout() {
    ActorTestKit kit = ActorTestKit.create();
    try {
      FakeGateway fake = new FakeGateway();
      fake.createTopic("bounded", 1);
      ActorRef<ClientRequest> gateway = kit.spawn(fake.behavior());
      TributaryClient client = TributaryClient.withFailover(kit.system(), List.of(gateway), 0, false, Map.of());
      Consumer<String, String> consumer = client.consumer(groupConfig("g-bounded"), Deserializer.string(),
          Deserializer.string());
      List<Throwable> listenerErrors = Collections.synchronizedList(new ArrayList<>());
      TopicPartition tp = new TopicPartition("bounded", 0);
      consumer.subscribe(List.of("bounded"), committingListener(consumer, listenerErrors));
      assign(fake, consumer, "g-bounded", tp);

      fake.blackholeCommits = true; // the coordinator does not answer commits any more
      long closing = System.nanoTime();
      assertTimeoutPreemptively(HANG_BOUND, () -> consumer.close(Duration.ofSeconds(1)));
      System.out.printf("ClientShutdownTest: close(1 s) with an unanswered commit in the listener took %d ms%n",
          (System.nanoTime() - closing) / 1_000_000);
      assertEquals(1, listenerErrors.size(), "the listener's commitSync failed: " + listenerErrors);
      assertFalse(fake.requests(OffsetCommit.class, c -> c.groupId().equals("g-bounded")).isEmpty());
      fake.awaitRequest(LeaveGroup.class, l -> l.groupId().equals("g-bounded"));
      client.close();
    } finally {
      kit.shutdownTestKit();
    }
  }

  /**
   * The client's ActorSystem terminates under a subscribed consumer (as a JVM shutdown may do): closing the consumer
   * and then the client ends at once, instead of retrying the listener's commit (asks to a terminated system fail as
   * timeouts, which are retriable) for {@code default.api.timeout.ms} and waiting for a LeaveGroup answer that cannot
   * come.
   */
  @Test
  void aConsumerWhoseActorSystemTerminatedClosesWithoutWaitingForAnswersThatCannotCome() throws Exception {
    ActorTestKit kit = ActorTestKit.create();
    FakeGateway fake = new FakeGateway();
    fake.createTopic("gone", 1);
    ActorRef<ClientRequest> gateway = kit.spawn(fake.behavior());
    TributaryClient client = TributaryClient.withFailover(kit.system(), List.of(gateway), 0, false, Map.of());
    Consumer<String, String> consumer = client.consumer(groupConfig("g-gone"), Deserializer.string(),
        Deserializer.string());
    List<Throwable> listenerErrors = Collections.synchronizedList(new ArrayList<>());
    TopicPartition tp = new TopicPartition("gone", 0);
    consumer.subscribe(List.of("gone"), committingListener(consumer, listenerErrors));
    assign(fake, consumer, "g-gone", tp);

    kit.shutdownTestKit(); // terminates the ActorSystem
    assertNotNull(client.unusableReason());
    long closing = System.nanoTime();
    assertTimeoutPreemptively(HANG_BOUND, () -> consumer.close(Duration.ofSeconds(20)));
    long closed = System.nanoTime();
    assertTimeoutPreemptively(HANG_BOUND, client::close);
    System.out.printf("ClientShutdownTest: with a terminated ActorSystem, consumer close(20 s) took %d ms, client"
        + " close %d ms%n", (closed - closing) / 1_000_000, (System.nanoTime() - closed) / 1_000_000);
    assertEquals(1, listenerErrors.size(), "the listener's commitSync failed: " + listenerErrors);
    TributaryException e = (TributaryException) listenerErrors.get(0);
    assertEquals(ErrorCode.NETWORK_EXCEPTION, e.errorCode(), e.toString());
    assertTrue(e.getMessage().contains("ActorSystem"), e.getMessage());
  }

  /**
   * The gateway is lost while the client's ActorSystem runs its coordinated shutdown (held in its first phase by the
   * test): no failover starts, the request in flight fails at once with NETWORK_EXCEPTION, and nothing goes to the
   * other node. The same loss without a shutdown (the control) fails the request in flight for a retry and moves to
   * the other node.
   */
  @Test
  void aGatewayLostWhileTheActorSystemShutsDownStartsNoFailover() throws Exception {
    Config config = ConfigFactory.parseString(
            "akka.coordinated-shutdown.phases.before-service-unbind.timeout = 60s")
        .withFallback(ConfigFactory.load());
    ActorTestKit kit = ActorTestKit.create("shutting-down", config);
    CompletableFuture<Done> holdShutdown = new CompletableFuture<>();
    try {
      // control: no shutdown
      Failover control = failover(kit);
      CompletableFuture<Object> inFlight = control.track();
      kit.stop(control.a);
      TributaryException retry = failure(inFlight);
      assertEquals(ErrorCode.NETWORK_EXCEPTION, retry.errorCode());
      assertTrue(retry.isRetriable());
      assertTrue(retry.getMessage().contains("retry through another node"), retry.getMessage());
      ClientRequest next = listTopics(kit);
      control.ref.tell(next);
      assertEquals(next, control.b.expectMessageClass(AdminRequest.ListTopics.class), "moved to the other node");

      // the same while the ActorSystem shuts down
      Failover f = failover(kit);
      CoordinatedShutdown shutdown = CoordinatedShutdown.get(kit.system());
      shutdown.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "hold", () -> holdShutdown);
      shutdown.run(CoordinatedShutdown.unknownReason());
      CompletableFuture<Object> lost = f.track();
      kit.stop(f.a);
      TributaryException stopping = failure(lost);
      assertEquals(ErrorCode.NETWORK_EXCEPTION, stopping.errorCode());
      assertTrue(stopping.getMessage().contains("shutting down"), stopping.getMessage());
      assertNotNull(f.health.stopping(), "requests are refused from now on");
      f.ref.tell(listTopics(kit));
      f.b.expectNoMessage(Duration.ofMillis(300)); // the other node is never used
    } finally {
      holdShutdown.complete(Done.getInstance());
      kit.shutdownTestKit();
    }
  }

  // -----------------------------------------------------------------------------------------------------------------

  /** A failover actor between two gateways: {@code a} (current, a stoppable actor) and the probe {@code b}. */
  private record Failover(
      ActorRef<ClientRequest> a, TestProbe<ClientRequest> b, GatewayFailover.Health health, ActorRef<Object> ref) {

    /** A request in flight through the current gateway. */
    CompletableFuture<Object> track() {
      CompletableFuture<Object> future = new CompletableFuture<>();
      ClientRequest request = () -> (short) 0; // stands for any request the failover actor has forwarded
      health.register(request, future);
      health.forwarded(request, health.generation());
      return future;
    }
  }

  private static Failover failover(ActorTestKit kit) {
    ActorRef<ClientRequest> a = kit.spawn(Behaviors.<ClientRequest>ignore()); // swallows: a hung node
    TestProbe<ClientRequest> b = kit.createTestProbe();
    GatewayFailover.Health health = new GatewayFailover.Health();
    ActorRef<Object> ref = kit.spawn(GatewayFailover.create(List.of(a, b.getRef()), 0, health, 30_000, 10));
    return new Failover(a, b, health, ref);
  }

  private static ClientRequest listTopics(ActorTestKit kit) {
    return new AdminRequest.ListTopics(ProtocolVersions.CURRENT, false, kit.createTestProbe().getRef().unsafeUpcast());
  }

  /** The TributaryException {@code future} fails with (bounded wait, against hangs only). */
  private static TributaryException failure(CompletableFuture<?> future) throws Exception {
    try {
      future.get(HANG_BOUND.toMillis(), TimeUnit.MILLISECONDS);
      return fail("completed normally");
    } catch (ExecutionException e) {
      return (TributaryException) e.getCause();
    }
  }

  private static Map<String, Object> groupConfig(String group) {
    Map<String, Object> config = new HashMap<>();
    config.put(ClientConfig.GROUP_ID, group);
    config.put(ClientConfig.AUTO_OFFSET_RESET, "earliest");
    config.put(ClientConfig.ENABLE_AUTO_COMMIT, "false");
    config.put(ClientConfig.DEFAULT_API_TIMEOUT_MS, 120_000);
    config.put(ClientConfig.RETRY_BACKOFF_MS, 20);
    return config;
  }

  /** A listener that commits synchronously on revocation (as GroupMemberMain), recording what the commit threw. */
  private static ConsumerRebalanceListener committingListener(
      Consumer<String, String> consumer, List<Throwable> errors) {
    return new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        try {
          consumer.commitSync();
        } catch (RuntimeException e) {
          errors.add(e);
        }
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
    };
  }

  /** The fake coordinator assigns {@code tp} to the consumer's member; polls until the consumer owns it. */
  private static void assign(FakeGateway fake, Consumer<String, String> consumer, String group, TopicPartition tp) {
    var join = fake.awaitRequest(io.tributary.protocol.GroupProtocol.JoinGroup.class, j -> j.groupId().equals(group));
    String member = join.memberId().isEmpty() ? group + "-member-1" : join.memberId();
    fake.push(group, member, 1, "range", tp);
    pollUntil(consumer, () -> consumer.assignment().contains(tp));
  }

  private static void pollUntil(Consumer<String, String> consumer, BooleanSupplier done) {
    long deadline = System.nanoTime() + HANG_BOUND.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("condition not reached within " + HANG_BOUND);
      }
      consumer.poll(Duration.ofMillis(50));
    }
  }
}
