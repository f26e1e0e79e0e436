package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.Admin;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.RecordMetadata;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hostile-client suite of issue 34: a process that is not a cluster member ({@link HostileClientMain}) sends to a
 * broker's client listener every message that took a node apart when clients reached its cluster port: cluster
 * {@code Down}, {@code Leave} and a real join as a {@code broker} node, {@code PoisonPill} and {@code Kill},
 * {@code Identify} of system actors, Distributed Data messages, the node's internal metadata push, a produce whose
 * answer would go to one of the node's own actors, arbitrary serialized messages and socket garbage. Afterwards the
 * broker process must still run, the hostile process must have learnt no system actor and joined nothing, the records
 * stored before must read back exactly (nothing lost, nothing added), and a new client must be served: produce,
 * consume, create a topic, a consumer group.
 */
class HostileClientIT {
  private static final String TOPIC = "precious";
  private static final int PARTITIONS = 3;
  private static final int RECORDS = 300;

  private BrokerProcess broker;

  @AfterEach
  void stopBroker() {
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void aNonMemberThatReachesTheClientListenerCannotStopLeaveJoinOrChangeTheNode() throws Exception {
    Path dir = JavaProcesses.testDir("HostileClientIT", "attacks");
    int port = BrokerProcess.freePort();
    broker = BrokerProcess.start("broker", dir.resolve("data"), port, dir);
    String bootstrap = broker.awaitReady();
    assertEquals("127.0.0.1:" + port, bootstrap, "the listener is what the broker advertises");
    String clusterHostPort = "127.0.0.1:" + (port + 100);

    Map<TopicPartition, List<String>> stored;
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      try (Admin admin = client.admin()) {
        admin.createTopic(TOPIC, PARTITIONS, (short) 1, Map.of());
      }
      produce(client, TOPIC, "before", RECORDS);
      stored = readAll(client, TOPIC);
    }
    assertEquals(RECORDS, stored.values().stream().mapToInt(List::size).sum());

    Map<String, String> results = runHostile(dir, bootstrap, clusterHostPort);
    assertTrue(results.get("identify " + HostileClientMain.GATEWAY).startsWith("answered"),
        "the hostile process reached a live listener: " + results);
    assertTrue(results.get("identify " + HostileClientMain.GATEWAY + " after the messages").startsWith("answered"),
        "the listener still answers after the messages: " + results);
    for (String path : HostileClientMain.SYSTEM_PATHS) {
      String outcome = results.get("identify " + path);
      assertTrue(outcome != null, path + " was probed: " + results);
      if (!path.equals("/system/remote-watcher")) { // answers failure detectors' heartbeats, so Identify too
        assertFalse(outcome.startsWith("answered"), path + " must not be reachable: " + results);
      }
    }
    assertEquals("not joined", results.get("join"), "a non-member cannot join through the listener: " + results);
    assertTrue(broker.isAlive(), "the broker process still runs\n" + broker.diagnostics());

    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of())) {
      assertEquals(stored, readAll(client, TOPIC), "the records stored before, exactly: none lost, none added");
      produce(client, TOPIC, "after", RECORDS);
      Map<TopicPartition, List<String>> now = readAll(client, TOPIC);
      assertEquals(2 * RECORDS, now.values().stream().mapToInt(List::size).sum(), "produce and read still work");
      try (Admin admin = client.admin()) {
        admin.createTopic("after-attacks", 1, (short) 1, Map.of());
        assertTrue(admin.listTopics(false).contains("after-attacks"), "the controller still serves");
      }
      try (Consumer<String, String> group = client.consumer(Map.of("group.id", "survivors", "auto.offset.reset",
          "earliest"), Deserializer.string(), Deserializer.string())) {
        group.subscribe(List.of(TOPIC));
        int seen = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (seen < 2 * RECORDS && System.nanoTime() < deadline) {
          seen += group.poll(Duration.ofMillis(500)).size();
        }
        assertEquals(2 * RECORDS, seen, "a consumer group still gets every record");
        group.commitSync();
      }
    }
    assertTrue(broker.isAlive(), "the broker process still runs\n" + broker.diagnostics());
    assertEquals(0, broker.stop(), "the broker shuts down cleanly\n" + broker.diagnostics());
  }

  private static Map<String, String> runHostile(Path dir, String listener, String cluster) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Path out = dir.resolve("hostile.out");
    Process p = new ProcessBuilder(List.of(java, "-Xmx256m", "-Dlogback.configurationFile=logback.xml", "-cp",
        System.getProperty("java.class.path"), HostileClientMain.class.getName(), listener, cluster, TOPIC))
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      assertTrue(p.waitFor(3, TimeUnit.MINUTES), "the hostile process ends\n" + JavaProcesses.tail(out, 50));
    } finally {
      p.destroyForcibly();
    }
    assertEquals(0, p.exitValue(), JavaProcesses.tail(out, 50));
    Map<String, String> results = new TreeMap<>();
    for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
      if (line.startsWith("RESULT ")) {
        int colon = line.indexOf(": ");
        results.put(line.substring("RESULT ".length(), colon), line.substring(colon + 2));
      }
    }
    return results;
  }

  private static void produce(TributaryClient client, String topic, String prefix, int count) throws Exception {
    try (Producer<String, String> producer = client.producer(Map.of("acks", "all"), Serializer.string(),
        Serializer.string())) {
      List<java.util.concurrent.CompletableFuture<RecordMetadata>> sends = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        sends.add(producer.send(new ProducerRecord<>(topic, prefix + "-" + i, prefix + "-value-" + i))
            .toCompletableFuture());
      }
      for (var f : sends) {
        f.get(60, TimeUnit.SECONDS);
      }
    }
  }

  /** Every record of {@code topic}, per partition in offset order, as "offset:key=value". */
  private static Map<TopicPartition, List<String>> readAll(TributaryClient client, String topic) {
    Map<TopicPartition, List<String>> all = new TreeMap<>((a, b) -> Integer.compare(a.partition(), b.partition()));
    try (Consumer<String, String> consumer = client.consumer(Map.of(), Deserializer.string(),
        Deserializer.string())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int i = 0; i < consumer.partitionsFor(topic); i++) {
        partitions.add(new TopicPartition(topic, i));
        all.put(new TopicPartition(topic, i), new ArrayList<>());
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        assertTrue(System.nanoTime() < deadline, "read up to " + ends + " within 60 s");
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          all.get(new TopicPartition(r.topic(), r.partition())).add(r.offset() + ":" + r.key() + "=" + r.value());
        }
      }
    }
    return all;
  }
}
