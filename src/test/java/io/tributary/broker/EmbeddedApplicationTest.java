package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Consumer;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.RecordMetadata;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An application with its own actors embeds a Tributary node in its own cluster ActorSystem: its "orders" actor
 * publishes through the embedded producer and tells the caller where each order landed.
 */
class EmbeddedApplicationTest {
  private static ActorTestKit app;

  /** The application's own actor: publishes each order it receives, keyed by customer. */
  static final class OrderDesk {
    record PlaceOrder(String customer, String item, ActorRef<Placed> replyTo) {}

    record Placed(String customer, int partition, long offset) {}

    private record Published(PlaceOrder order, RecordMetadata md) {}

    static Behavior<Object> create(Producer<String, String> producer) {
      return Behaviors.setup(ctx -> Behaviors.receive(Object.class)
          .onMessage(PlaceOrder.class, o -> {
            ctx.pipeToSelf(producer.send(new ProducerRecord<>("orders", o.customer(), o.item())),
                (md, ex) -> new Published(o, md));
            return Behaviors.same();
          })
          .onMessage(Published.class, p -> {
            p.order().replyTo().tell(new Placed(p.order().customer(), p.md().partition(), p.md().offset()));
            return Behaviors.same();
          })
          .build());
    }
  }

  @BeforeAll
  static void start() {
    Config config = ConfigFactory.parseMap(Map.of(
            "akka.actor.provider", "cluster",
            "akka.cluster.roles", List.of("broker"),
            "akka.remote.artery.canonical.hostname", "127.0.0.1",
            "akka.remote.artery.canonical.port", 0,
            "akka.cluster.jmx.multi-mbeans-in-same-jvm", "on",
            "akka.loglevel", "WARNING",
            // leaving the cluster hands two singletons over: give the shutdown more than the default 10 s
            "akka.actor.testkit.typed.system-shutdown-default", "60s",
            "tributary.data-dir", TestNodes.tempDataDir().toString()))
        .withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve();
    app = ActorTestKit.create("my-app", config);
    Cluster cluster = Cluster.get(app.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    TestProbe<Object> probe = app.createTestProbe();
    probe.awaitAssert(Duration.ofSeconds(30), () -> {
      assertEquals(akka.cluster.MemberStatus.up(), cluster.selfMember().status());
      return null;
    });
  }

  @AfterAll
  static void stop() {
    app.shutdownTestKit();
  }

  @Test
  void applicationActorsPublishAndReadThroughTheEmbeddedNode() {
    Tributary broker = Tributary.get(app.system());
    broker.client().admin().createTopic("orders", 3, (short) 1, Map.of());
    Producer<String, String> producer =
        broker.client().producer(Map.of("acks", "all", "linger.ms", 1), Serializer.string(), Serializer.string());
    ActorRef<Object> desk = app.spawn(OrderDesk.create(producer), "order-desk");
    TestProbe<OrderDesk.Placed> placed = app.createTestProbe();
    for (int i = 0; i < 30; i++) {
      desk.tell(new OrderDesk.PlaceOrder("customer-" + (i % 5), "item-" + i, placed.getRef()));
    }
    Map<String, Integer> partitionOf = new java.util.HashMap<>();
    for (int i = 0; i < 30; i++) {
      OrderDesk.Placed p = placed.receiveMessage(Duration.ofSeconds(30));
      Integer before = partitionOf.putIfAbsent(p.customer(), p.partition());
      assertTrue(before == null || before == p.partition(), "same customer, same partition");
    }
    try (Consumer<String, String> consumer = broker.client().consumer(
        Map.of("auto.offset.reset", "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1),
          new TopicPartition("orders", 2)));
      List<ConsumerRecord<String, String>> all = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (all.size() < 30 && System.nanoTime() < deadline) {
        all.addAll(consumer.poll(Duration.ofMillis(500)));
      }
      assertEquals(30, all.size());
      for (ConsumerRecord<String, String> r : all) {
        assertEquals(partitionOf.get(r.key()), r.partition());
      }
    }
  }

  @Test
  void aSystemWithoutTheBrokerRoleIsRefusedWithTheFix() {
    ActorTestKit plain = ActorTestKit.create("no-role", ConfigFactory.parseMap(Map.of(
            "akka.actor.provider", "cluster", "akka.remote.artery.canonical.port", 0,
            "akka.remote.artery.canonical.hostname", "127.0.0.1", "akka.cluster.jmx.multi-mbeans-in-same-jvm", "on",
            "akka.actor.testkit.typed.system-shutdown-default", "60s",
            "tributary.data-dir", TestNodes.tempDataDir().toString()))
        .withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve());
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> Tributary.get(plain.system()));
      assertTrue(e.getMessage().contains("akka.cluster.roles"), e.getMessage());
    } finally {
      plain.shutdownTestKit();
    }
  }
}
