package io.tributary.it;

import static org.junit.jupiter.api.Assertions.fail;

import io.tributary.cli.LocalClusterDriver;
import io.tributary.client.Admin;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the replication tests share: the replication factor they use, the node settings (fast failure detection), a
 * local cluster of broker JVMs ({@link LocalClusterDriver}, the machinery of {@code tributary cluster}), and waiting
 * on conditions with a bound.
 *
 * <p>{@link #RF} is 3, the point of these tests. Run them with {@code -Dtributary.it.rf=1} to check the harness on a
 * broker without replication: topics are then created with one replica and without {@code min.insync.replicas}, and
 * the failover assertions are expected to fail (there is no replica to fail over to).
 */
final class ReplicatedClusters {
  /** Replication factor of the topics under test (system property {@code tributary.it.rf}, default 3). */
  static final short RF = Short.parseShort(System.getProperty("tributary.it.rf", "3"));
  /** min.insync.replicas of the topics under test (when {@link #RF} is above 1). */
  static final int MIN_ISR = 2;

  /**
   * Node settings: a killed node is unreachable after ~3 s and downed by the Split Brain Resolver 4 s later (defaults
   * 3 s and 20 s); a stopped follower leaves the ISR after 5 s; groups settle fast.
   */
  static final String NODE_CONFIG = String.join("\n",
      "akka.cluster.failure-detector.acceptable-heartbeat-pause = 3s",
      "akka.cluster.split-brain-resolver.stable-after = 4s",
      "tributary.broker.replica.lag.time.max.ms = 5000",
      "tributary.broker.group.initial.rebalance.delay.ms = 500",
      "tributary.broker.group.min.session.timeout.ms = 1000",
      "tributary.broker.offsets.topic.num.partitions = 5",
      "");

  /** Bound on a cluster (or node) start: against hangs on a slow machine, not a performance limit. */
  static final Duration START_BOUND = Duration.ofMinutes(3);

  private ReplicatedClusters() {}

  /** The topic configs of a topic under test: {@code min.insync.replicas=2} when replicated. */
  static Map<String, String> topicConfigs() {
    return RF > 1 ? Map.of("min.insync.replicas", Integer.toString(MIN_ISR)) : Map.of();
  }

  /**
   * Starts a cluster of {@code nodes} broker JVMs in {@code dir/cluster} on free consecutive ports, with
   * {@link #NODE_CONFIG}, and waits until it has converged. Node start lines go to stdout (the test's output file).
   */
  static LocalClusterDriver start(Path dir, int nodes) {
    Path config = dir.resolve("node.conf");
    try {
      Files.writeString(config, NODE_CONFIG, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    LocalClusterDriver cluster = LocalClusterDriver.create(dir.resolve("cluster"), nodes, freeBasePort(nodes), config,
        List.of("-Dlogback.configurationFile=logback.xml"), new PrintWriter(System.out, true));
    try {
      cluster.startAll(START_BOUND);
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** The partitions of {@code topic} as the controller describes them now (empty if the topic is unknown). */
  static List<PartitionDescription> describe(Admin admin, String topic) {
    List<TopicDescription> d = admin.describeTopics(List.of(topic));
    return d.isEmpty() ? List.of() : d.get(0).partitions();
  }

  /** Whether every partition has a leader and all {@link #RF} replicas in sync. */
  static boolean fullyInSync(List<PartitionDescription> partitions, int count) {
    return partitions.size() == count && partitions.stream().allMatch(p -> p.leader() != null
        && !p.leader().isEmpty() && p.replicas() != null && p.replicas().size() == RF && p.isr() != null
        && p.isr().containsAll(p.replicas()));
  }

  /**
   * Waits until every partition of {@code topic} has a leader and its whole replica set in the ISR.
   *
   * @return how long it took, in ms
   */
  static long awaitFullyInSync(Admin admin, String topic, int partitions, Duration bound, Supplier<String> diagnostics)
      throws InterruptedException {
    long t0 = System.nanoTime();
    List<PartitionDescription>[] last = new List[] {List.of()};
    await("every partition of " + topic + " has a leader and " + RF + " in-sync replicas", bound, () -> {
      last[0] = describeQuietly(admin, topic);
      return fullyInSync(last[0], partitions);
    }, () -> "last description: " + last[0] + "\n" + diagnostics.get());
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /** {@link #describe}, or an empty list when the controller does not answer (it may be moving). */
  static List<PartitionDescription> describeQuietly(Admin admin, String topic) {
    try {
      return describe(admin, topic);
    } catch (RuntimeException e) {
      return List.of();
    }
  }

  /**
   * Polls {@code condition} every 100 ms until it holds (another process's state: there is no event to subscribe to).
   *
   * @throws AssertionError after {@code bound}, naming what was awaited and {@code diagnostics}
   */
  static void await(String what, Duration bound, BooleanSupplier condition, Supplier<String> diagnostics)
      throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out after " + bound.toSeconds() + " s waiting until " + what + "\n" + diagnostics.get());
      }
      Thread.sleep(100);
    }
  }

  /** The first of {@code count} consecutive ports that are all free on 127.0.0.1 now. */
  static int freeBasePort(int count) {
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = BrokerProcess.freePort();
      if (base + count - 1 > 65535) {
        continue;
      }
      boolean all = true;
      for (int i = 1; i < count && all; i++) {
        try (ServerSocket s = new ServerSocket()) {
          s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), base + i));
        } catch (IOException e) {
          all = false;
        }
      }
      if (all) {
        return base;
      }
    }
    throw new IllegalStateException("no " + count + " consecutive free ports");
  }

  static long ms(long nanos) {
    return nanos / 1_000_000;
  }
}
