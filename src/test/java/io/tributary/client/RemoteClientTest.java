package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.TestNodes;
import io.tributary.protocol.ErrorCode;
import io.tributary.record.Murmur2;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The client library over Artery against a real single-node broker in the same JVM. */
class RemoteClientTest {

  private static OneNode one;
  private static BrokerNode node;
  private static TributaryClient client;

  @BeforeAll
  static void start() {
    one = OneNode.start();
    node = one.node;
    client = one.client;
  }

  @AfterAll
  static void stop() {
    if (one != null) {
      one.close();
    }
  }

  @Test
  void produceAndConsumeOverRemoting() throws Exception {
    try (Admin admin = client.admin()) {
      admin.createTopic("remote", 3, (short) 1, Map.of());
      assertTrue(admin.listTopics().contains("remote"));
      TributaryException e =
          assertThrows(
              TributaryException.class, () -> admin.createTopic("remote", 3, (short) 1, Map.of()));
      assertEquals(ErrorCode.TOPIC_ALREADY_EXISTS, e.errorCode());
    }
    List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
    try (Producer<String, String> producer =
        client.producer(Map.of(ClientConfig.ACKS, "all"), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < 2000; i++) {
        sent.add(producer.send(new ProducerRecord<>("remote", "key-" + (i % 10), "value-" + i)));
      }
      producer.flush();
    }
    Map<Integer, Long> next = new HashMap<>();
    for (int i = 0; i < sent.size(); i++) {
      RecordMetadata m = sent.get(i).toCompletableFuture().get(30, TimeUnit.SECONDS);
      int want = Murmur2.partitionForKey(("key-" + (i % 10)).getBytes(StandardCharsets.UTF_8), 3);
      assertEquals(want, m.partition());
      long offset = next.getOrDefault(want, 0L);
      assertEquals(offset, m.offset());
      next.put(want, offset + 1);
    }

    try (Consumer<String, String> consumer =
        client.consumer(
            Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(
          List.of(
              new TopicPartition("remote", 0), new TopicPartition("remote", 1), new TopicPartition("remote", 2)));
      Map<Integer, Long> read = new HashMap<>();
      int total = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (total < 2000 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          long want = read.getOrDefault(r.partition(), 0L);
          assertEquals(want, r.offset());
          read.put(r.partition(), want + 1);
          total++;
        }
      }
      assertEquals(2000, total);
      assertEquals(next, read);
    }
  }

  /**
   * A first bootstrap address that never answers (a socket that accepts connections and says nothing, as a hung host)
   * is passed over once the second node answered. Before, the client waited for that address until Artery's handshake
   * timeout dropped the Identify (20 s) or request.timeout.ms (two minutes here): the connect must not have waited for
   * either.
   */
  @Test
  void anUnansweringFirstBootstrapAddressDoesNotCostTheRequestTimeout() throws Exception {
    try (java.net.ServerSocket silent =
        new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
      List<java.net.Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            held.add(silent.accept()); // kept open, never read or written
          }
        } catch (java.io.IOException closed) {
          // the test is over
        }
      }, "silent-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
      int live = TestNodes.clientPort(node);
      Duration handshakeTimeout = com.typesafe.config.ConfigFactory.load()
          .getDuration("akka.remote.artery.advanced.handshake-timeout");
      long start = System.nanoTime();
      java.util.concurrent.CompletableFuture<TributaryClient> connecting = java.util.concurrent.CompletableFuture
          .supplyAsync(() -> TributaryClient.connect("127.0.0.1:" + silent.getLocalPort() + ",127.0.0.1:" + live,
              Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 120_000)));
      try (TributaryClient viaSecond = connecting.get(60, TimeUnit.SECONDS);
          Admin admin = viaSecond.admin()) {
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(handshakeTimeout) < 0,
            "connected in " + took + ", not after the silent address's handshake timeout (" + handshakeTimeout + ")");
        admin.createTopic("via-second", 1, (short) 1, Map.of());
        assertTrue(admin.listTopics().contains("via-second"));
      } finally {
        for (java.net.Socket s : held) {
          s.close();
        }
      }
    }
  }

  @Test
  void acksZeroRecordsArrive() throws Exception {
    try (Admin admin = client.admin()) {
      admin.createTopic("fire-and-forget", 1, (short) 1, Map.of());
    }
    try (Producer<String, String> producer =
        client.producer(Map.of(ClientConfig.ACKS, "0"), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < 500; i++) {
        assertEquals(
            -1L,
            producer
                .send(new ProducerRecord<>("fire-and-forget", "v" + i))
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS)
                .offset());
      }
    }
    assertEquals(500, readAll(List.of(new TopicPartition("fire-and-forget", 0)), 500));
  }

  /**
   * Reads the partitions from their start with long polls (each waits for records to arrive) until {@code expected}
   * records were read or 60 s passed; acks=0 gives no acknowledgement to wait on.
   *
   * @return how many records were read
   */
  private static long readAll(List<TopicPartition> tps, long expected) {
    try (Consumer<byte[], byte[]> consumer =
        client.consumer(Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.byteArray(),
            Deserializer.byteArray())) {
      consumer.assign(tps);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      long read = 0;
      while (read < expected && System.nanoTime() < deadline) {
        read += consumer.poll(Duration.ofMillis(500)).size();
      }
      return read;
    }
  }

  /**
   * A burst of {@code acks=0} requests as fast as the producer can build them (small batches, no linger) loses
   * nothing: the producer keeps at most {@code max.in.flight.requests.per.connection} unanswered requests per
   * partition. Before, {@code acks=0} requests had no bound at all: they piled up in Artery's outbound queue (3072
   * messages; more are dropped, logged at DEBUG) and in the leader's stash, and records went missing while every
   * future said "sent" (a newcomer lost 10-30% with six {@code perf produce --producer-props acks=0}).
   */
  @Test
  void aBurstOfAcksZeroRequestsLosesNothing() throws Exception {
    String topic = "fire-hose";
    try (Admin admin = client.admin()) {
      admin.createTopic(topic, 2, (short) 1, Map.of());
    }
    int records = 200_000;
    byte[] value = new byte[100];
    Map<String, Object> config =
        Map.of(ClientConfig.ACKS, "0", ClientConfig.LINGER_MS, 0, ClientConfig.BATCH_SIZE, 2048);
    try (Producer<byte[], byte[]> producer = client.producer(config, Serializer.byteArray(), Serializer.byteArray())) {
      for (int i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>(topic, i % 2, null, value));
      }
      producer.flush();
    }
    List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
    assertEquals(records, readAll(tps, records), "records stored of those sent with acks=0");
  }
}
