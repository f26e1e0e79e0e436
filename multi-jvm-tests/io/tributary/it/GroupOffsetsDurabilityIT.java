package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.tributary.client.ClientConfig;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.OffsetAndMetadata;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Committed offsets survive a broker SIGKILL and restart: they are records of __consumer_offsets. */
class GroupOffsetsDurabilityIT {
  private BrokerProcess broker;

  @AfterEach
  void stop() {
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void committedOffsetsSurviveSigkill() throws Exception {
    Path dir = JavaProcesses.testDir("GroupOffsetsDurabilityIT", "sigkill");
    int port = BrokerProcess.freePort();
    broker = BrokerProcess.start("broker", dir.resolve("data"), port, dir.resolve("logs"));
    String bootstrap = broker.awaitReady();
    TopicPartition p0 = new TopicPartition("orders", 0);
    TopicPartition p1 = new TopicPartition("orders", 1);
    TopicPartition p2 = new TopicPartition("orders", 2);
    Map<String, Object> cfg = Map.of(ClientConfig.GROUP_ID, "billing", ClientConfig.AUTO_OFFSET_RESET, "earliest",
        ClientConfig.ENABLE_AUTO_COMMIT, "false");
    try (TributaryClient client = TributaryClient.connect(bootstrap)) {
      client.admin().createTopic("orders", 3, (short) 1, Map.of());
      try (Producer<String, String> p = client.producer(Map.of(), Serializer.string(), Serializer.string())) {
        for (int i = 0; i < 300; i++) {
          p.send(new ProducerRecord<>("orders", i % 3, "k", "v" + i));
        }
        p.flush();
      }
      Consumer<String, String> c = client.consumer(cfg, Deserializer.string(), Deserializer.string());
      c.subscribe(List.of("orders"));
      int read = 0;
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (read < 300 && System.nanoTime() < deadline) {
        List<ConsumerRecord<String, String>> records = c.poll(Duration.ofMillis(200));
        read += records.size();
      }
      assertEquals(300, read);
      c.commitSync(Map.of(p0, new OffsetAndMetadata(100, "all of p0"), p1, new OffsetAndMetadata(42, null)));
      // no commit for p2
    }
    broker.kill();
    broker = BrokerProcess.start("broker-restarted", dir.resolve("data"), port, dir.resolve("logs"));
    bootstrap = broker.awaitReady();
    try (TributaryClient client = TributaryClient.connect(bootstrap)) {
      Consumer<String, String> c = client.consumer(cfg, Deserializer.string(), Deserializer.string());
      Map<TopicPartition, OffsetAndMetadata> committed = c.committed(Set.of(p0, p1, p2));
      assertEquals(100, committed.get(p0).offset());
      assertEquals("all of p0", committed.get(p0).metadata());
      assertEquals(42, committed.get(p1).offset());
      assertNull(committed.get(p2));
      // a new member of the group resumes at the committed offsets
      c.subscribe(List.of("orders"));
      Map<Integer, Long> first = new HashMap<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (first.size() < 2 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          first.putIfAbsent(r.partition(), r.offset());
        }
      }
      assertEquals(42L, first.get(1));
      assertEquals(0L, first.get(2), "no commit: auto.offset.reset=earliest");
      c.close();
    }
  }
}
