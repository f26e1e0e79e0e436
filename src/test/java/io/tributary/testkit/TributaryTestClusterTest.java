package io.tributary.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The public test kit as a user's test uses it: three nodes, a client, a killed node, a restart, a stop. */
class TributaryTestClusterTest {

  @Test
  void aUsersTestKillsRestartsAndStopsNodesAndLosesNothingAcknowledged() {
    Path dataRoot;
    try (TributaryTestCluster cluster =
            TributaryTestCluster.start(3, Map.of("tributary.broker.replica.lag.time.max.ms", 2000));
        TributaryClient client = TributaryClient.connect(cluster.bootstrapServers())) {
      assertEquals(3, cluster.bootstrapServers().split(",").length, cluster.bootstrapServers());
      dataRoot = Path.of(cluster.node(0).tributary().settings().dataDir().toString()).getParent();
      client.admin().createTopic("kit", 1, (short) 3, Map.of("min.insync.replicas", "2"));
      try (Producer<String, String> producer =
          client.producer(Map.of("acks", "all"), Serializer.string(), Serializer.string())) {
        for (int i = 0; i < 10; i++) {
          producer.send(new ProducerRecord<>("kit", "k", "v" + i)).toCompletableFuture().join();
        }
        String killed = cluster.bootstrapServer(1);
        cluster.kill(1);
        assertFalse(cluster.isRunning(1));
        assertEquals(killed, cluster.bootstrapServer(1), "a node keeps its address");
        for (int i = 10; i < 20; i++) { // acks=all with 2 of 3 replicas: the ISR shrinks, writes go on
          producer.send(new ProducerRecord<>("kit", "k", "v" + i)).toCompletableFuture().join();
        }
        cluster.restart(1);
        assertTrue(cluster.isRunning(1));
        cluster.stop(2);
        producer.send(new ProducerRecord<>("kit", "k", "v20")).toCompletableFuture().join();
      }
      List<String> values = new ArrayList<>();
      try (Consumer<String, String> consumer = client.consumer(Map.of("auto.offset.reset", "earliest"),
          Deserializer.string(), Deserializer.string())) {
        consumer.assign(List.of(new TopicPartition("kit", 0)));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (values.size() < 21 && System.nanoTime() < deadline) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
            values.add(r.value());
          }
        }
      }
      List<String> expected = new ArrayList<>();
      for (int i = 0; i <= 20; i++) {
        expected.add("v" + i);
      }
      assertEquals(expected, values);

      assertThrows(IllegalArgumentException.class, () -> cluster.node(3));
      assertThrows(IllegalStateException.class, () -> cluster.node(2), "node 2 was stopped");
      assertThrows(IllegalStateException.class, () -> cluster.restart(0), "node 0 runs");
    }
    assertFalse(Files.exists(dataRoot), "close deletes the cluster's directory");
  }

  @Test
  void aClusterNeedsANodeAndValidSettings() {
    assertThrows(IllegalArgumentException.class, () -> TributaryTestCluster.start(0));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TributaryTestCluster.start(1, Map.of("tributary.broker.num.partitions", 0)));
    assertTrue(e.getMessage().contains("tributary.broker.num.partitions"), e.getMessage());
  }
}
