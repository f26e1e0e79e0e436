package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An embedded node that never joins a cluster (no seed nodes, no {@code Cluster.join}): once
 * {@code tributary.join-timeout} has passed, its first request fails at once with BROKER_NOT_AVAILABLE and a message
 * that names seed nodes and joining, instead of timing out blaming the controller.
 */
class NotJoinedNodeTest {

  @Test
  void aNodeThatNeverJoinedSaysSoAndNamesSeedNodes() throws Exception {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "tributary",
        TestNodes.config(TestNodes.tempDataDir(), Map.of("tributary.join-timeout", "1s")));
    try {
      Tributary tributary = Tributary.get(system);
      try (TributaryClient client = tributary.client(); Admin admin = client.admin()) {
        TributaryException e = assertThrows(TributaryException.class,
            () -> admin.createTopic("never", 1, (short) 1, Map.of()));
        assertEquals(ErrorCode.BROKER_NOT_AVAILABLE, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("has not joined a Tributary cluster within tributary.join-timeout"),
            e.getMessage());
        assertTrue(e.getMessage().contains("akka.cluster.seed-nodes"), e.getMessage());
        // later requests are refused at once, the same way
        TributaryException again = assertThrows(TributaryException.class, admin::listTopics);
        assertEquals(ErrorCode.BROKER_NOT_AVAILABLE, again.errorCode(), again.getMessage());
      }
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
