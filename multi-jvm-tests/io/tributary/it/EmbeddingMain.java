package io.tributary.it;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.Tributary;
import io.tributary.client.Admin;
import io.tributary.client.Consumer;
import io.tributary.client.ConsumerRecord;
import io.tributary.client.Deserializer;
import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An application that embeds a Tributary node with nothing but the README's minimal settings (cluster provider,
 * {@code broker} role, data dir, a seed node: itself), run by {@link EmbeddingClassPathIT} with Akka's jars before
 * Tributary's on the class path. {@code create DIR PORT}: creates topic {@code embedded}, writes one record of
 * {@value #VALUE_BYTES} bytes and reads it back; {@code reopen DIR PORT}: a new node on the same data dir and cluster
 * port (a node's replicas are named by its address) lists the topic and reads the record again (the metadata and the journal survived the restart). Prints {@code message.max.bytes=N}
 * and {@code OK <mode>} on stdout; exits 0 on success, 1 with the failure on stderr.
 */
public final class EmbeddingMain {
  /** The record's size: more than a quarter MiB would not fit Akka's default frame, so stays below it. */
  static final int VALUE_BYTES = 100_000;

  private EmbeddingMain() {}

  public static void main(String[] args) {
    String mode = args[0];
    String dataDir = args[1];
    String port = args[2];
    Config config = ConfigFactory.parseString(
            "akka.actor.provider = cluster\n"
                + "akka.remote.artery.canonical.hostname = 127.0.0.1\n"
                + "akka.remote.artery.canonical.port = " + port + "\n"
                + "akka.cluster.roles = [broker]\n"
                + "akka.loglevel = WARNING\n"
                + "akka.loggers = [\"akka.event.slf4j.Slf4jLogger\"]\n"
                + "akka.logging-filter = \"akka.event.slf4j.Slf4jLoggingFilter\"\n"
                + "akka.coordinated-shutdown.exit-jvm = off\n")
        .withFallback(ConfigFactory.parseMap(Map.of("tributary.data-dir", dataDir)));
    // load(config), not config.withFallback(load()): reference.conf's ${tributary.data-dir} must see dataDir
    config = ConfigFactory.load(config);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "embedding-app", config);
    int code = 1;
    try {
      Cluster.get(system).manager().tell(Join.create(Cluster.get(system).selfMember().address()));
      Tributary broker = Tributary.get(system);
      System.out.println("message.max.bytes=" + broker.settings().messageMaxBytes());
      TributaryClient client = broker.client();
      Admin admin = client.admin();
      if (mode.equals("create")) {
        admin.createTopic("embedded", 1, (short) 1, Map.of());
        try (Producer<String, String> producer =
            client.producer(Map.of("acks", "all"), Serializer.string(), Serializer.string())) {
          producer.send(new ProducerRecord<>("embedded", "k", "v".repeat(VALUE_BYTES)))
              .toCompletableFuture().join();
        }
      } else if (!admin.listTopics().contains("embedded")) {
        throw new IllegalStateException("topic 'embedded' is gone after the restart: " + admin.listTopics());
      }
      List<ConsumerRecord<String, String>> read = new ArrayList<>();
      try (Consumer<String, String> consumer = client.consumer(Map.of("auto.offset.reset", "earliest"),
          Deserializer.string(), Deserializer.string())) {
        consumer.assign(List.of(new TopicPartition("embedded", 0)));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (read.isEmpty() && System.nanoTime() < deadline) {
          consumer.poll(Duration.ofMillis(500)).forEach(read::add);
        }
      }
      if (read.size() != 1 || read.get(0).value().length() != VALUE_BYTES) {
        throw new IllegalStateException("read back " + read.size() + " records, expected the one of "
            + VALUE_BYTES + " bytes");
      }
      System.out.println("OK " + mode);
      code = 0;
    } catch (RuntimeException e) {
      e.printStackTrace();
    } finally {
      system.terminate();
      try {
        system.getWhenTerminated().toCompletableFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        e.printStackTrace();
        code = 1;
      }
    }
    System.exit(code);
  }
}
