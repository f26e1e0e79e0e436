package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code tributary cluster} end to end, as a user runs it: {@code cluster start --nodes 3} in its own JVM starts three
 * detached broker JVMs on 127.0.0.1 and exits; records produced through node 2's gateway (acks=all) land on partitions
 * led by all three nodes and are read back through node 3's gateway (gateway → shard on another node → reply to the
 * client); {@code cluster status} reports the members and partition leaders; {@code cluster kill --node 3} (SIGKILL)
 * makes status fail and name node 3 dead; {@code cluster restart --node 3} brings it back with its local data; and
 * {@code cluster stop} leaves no process behind.
 *
 * <p>Node 1 is never killed: in this version topic metadata lives in the controller singleton's journal on the oldest
 * node (node 1), and partitions are not replicated.
 *
 * <p>Every node process is found through the pid files and killed in {@link #killWhatIsLeft()}, even when the test
 * fails half-way.
 */
class ClusterIT {
  private static final String TOPIC = "spread";
  private static final int PARTITIONS = 6;
  private static final int NODES = 3;
  private static final int RECORDS = 3000;
  private static final int KEYS = 300;
  /** Bound on a CLI command: against hangs only (start waits for 3 JVMs on a small machine). */
  private static final Duration CLI_BOUND = Duration.ofMinutes(5);
  /** Idle time before the second read: longer than Akka sharding's rebalance interval (10 s). */
  private static final Duration IDLE = Duration.ofSeconds(15);
  /** Bound on producing or reading everything. */
  private static final Duration BOUND = Duration.ofMinutes(3);

  private Path dir;
  private Path clusterDir;

  @AfterEach
  void killWhatIsLeft() {
    if (clusterDir == null) {
      return;
    }
    for (int n = 1; n <= NODES; n++) {
      long pid = pidOf(n);
      if (pid > 0 && isNodeProcess(pid, n)) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        awaitGone(pid, n, Duration.ofSeconds(30));
      }
    }
  }

  @Test
  void startProduceAcrossNodesStatusKillRestartStop() throws Exception {
    dir = JavaProcesses.testDir("ClusterIT", "startProduceAcrossNodesStatusKillRestartStop");
    clusterDir = dir.resolve("cluster-data");
    int base = freeBasePort(NODES);
    String[] nodes = new String[NODES + 1];
    for (int n = 1; n <= NODES; n++) {
      nodes[n] = "127.0.0.1:" + (base + n - 1);
    }

    long t0 = System.nanoTime();
    JavaProcesses.Result start = cli("start", "cluster", "start", "--nodes", "3", "--base-port",
        Integer.toString(base), "--data-dir", clusterDir.toString());
    assertEquals(0, start.exitCode(), start.describe() + diagnostics());
    assertTrue(start.stdoutText().contains("Cluster of 3 nodes up: bootstrap " + nodes[1] + "," + nodes[2] + ","
        + nodes[3]), start.describe());
    long started = System.nanoTime();
    long[] pids = new long[NODES + 1];
    for (int n = 1; n <= NODES; n++) {
      pids[n] = pidOf(n);
      assertTrue(pids[n] > 0 && isNodeProcess(pids[n], n), "node " + n + " runs after cluster start exited, pid "
          + pids[n] + diagnostics());
    }

    JavaProcesses.Result again = cli("start-again", "cluster", "start", "--nodes", "3", "--base-port",
        Integer.toString(base), "--data-dir", clusterDir.toString());
    assertEquals(1, again.exitCode(), again.describe());
    assertTrue(again.stderr().contains("already running"), again.describe());

    long idleRead;
    Map<Integer, TreeMap<Long, String>> acked;
    Map<Integer, String> leaders = new TreeMap<>();
    long refused = System.nanoTime();
    long created;
    try (TributaryClient viaNode2 = TributaryClient.connect(nodes[2], Map.of())) {
      try (Admin admin = viaNode2.admin()) {
        admin.createTopic(TOPIC, PARTITIONS, (short) 1, Map.of());
        List<TopicDescription> described = admin.describeTopics(List.of(TOPIC));
        for (PartitionDescription p : described.get(0).partitions()) {
          leaders.put(p.partition(), clientHostPort(p.leader()));
        }
      }
      assertEquals(PARTITIONS, leaders.size(), "partitions described: " + leaders);
      assertEquals(Set.of(nodes[1], nodes[2], nodes[3]), new TreeSet<>(leaders.values()),
          "leaders spread over the 3 nodes: " + leaders);
      created = System.nanoTime();
      acked = produce(viaNode2);
    }
    long produced = System.nanoTime();
    assertEquals(RECORDS, acked.values().stream().mapToInt(Map::size).sum());

    try (TributaryClient viaNode3 = TributaryClient.connect(nodes[3], Map.of())) {
      assertLogIs(acked, readAll(viaNode3), "read through node 3's gateway");
      long readOnce = System.nanoTime();
      // Placement must be stable: sharding's periodic rebalance (every 10 s) must not move a partition away from
      // the node that holds its records.
      Thread.sleep(IDLE.toMillis());
      assertLogIs(acked, readAll(viaNode3), "read again through node 3's gateway after " + IDLE.toSeconds()
          + " s idle (longer than sharding's rebalance interval)");
      idleRead = System.nanoTime() - readOnce - IDLE.toNanos();
    }
    long read = System.nanoTime();

    long statusStart = System.nanoTime();
    JavaProcesses.Result status = cli("status-healthy", "cluster", "status", "--data-dir", clusterDir.toString());
    assertEquals(0, status.exitCode(), status.describe());
    String out = status.stdoutText();
    for (int n = 1; n <= NODES; n++) {
      assertTrue(Pattern.compile("(?m)^  " + Pattern.quote(clusterHostPort(nodes[n])) + "\\s+" + n
              + "\\s+Up\\s+broker\\S*\\s+reachable$")
          .matcher(out).find(), "member line of node " + n + "\n" + out);
      assertTrue(Pattern.compile("(?m)^" + n + "\\s+" + Pattern.quote(nodes[n]) + "\\s+" + pids[n] + "\\s+alive$")
          .matcher(out).find(), "node line of node " + n + "\n" + out);
    }
    for (var e : leaders.entrySet()) {
      int leaderNode = java.util.Arrays.asList(nodes).indexOf(e.getValue());
      Matcher m = Pattern.compile("(?m)^  " + leaderNode + "\\s+" + Pattern.quote(e.getValue())
          + "\\s+\\d+\\s+.*" + TOPIC + "\\[([0-9,\\-]+)\\]").matcher(out);
      assertTrue(m.find() && partitionsIn(m.group(1)).contains(e.getKey()),
          "status names node " + leaderNode + " as leader of " + TOPIC + "-" + e.getKey() + "\n" + out);
    }

    long killStart = System.nanoTime();
    JavaProcesses.Result kill = cli("kill-3", "cluster", "kill", "--node", "3", "--data-dir", clusterDir.toString());
    assertEquals(0, kill.exitCode(), kill.describe());
    assertFalse(isNodeProcess(pids[3], 3), "node 3 is gone after cluster kill");
    assertTrue(isNodeProcess(pids[1], 1) && isNodeProcess(pids[2], 2), "nodes 1 and 2 still run");
    long killed = System.nanoTime();

    JavaProcesses.Result degraded = cli("status-degraded", "cluster", "status", "--data-dir",
        clusterDir.toString());
    assertEquals(1, degraded.exitCode(), degraded.describe());
    assertTrue(Pattern.compile("(?m)^3\\s+" + Pattern.quote(nodes[3]) + "\\s+" + pids[3] + "\\s+dead$")
        .matcher(degraded.stdoutText()).find(), degraded.describe());
    assertTrue(degraded.stdoutText().contains("down: node 3"), degraded.describe());

    JavaProcesses.Result restart = cli("restart-3", "cluster", "restart", "--node", "3", "--data-dir",
        clusterDir.toString());
    assertEquals(0, restart.exitCode(), restart.describe() + diagnostics());
    long restarted = System.nanoTime();
    long newPid3 = pidOf(3);
    assertTrue(newPid3 != pids[3] && isNodeProcess(newPid3, 3), "node 3 runs again with a new pid " + newPid3);

    long statusAgainStart = System.nanoTime();
    JavaProcesses.Result healthyAgain = cli("status-restarted", "cluster", "status", "--data-dir",
        clusterDir.toString());
    assertEquals(0, healthyAgain.exitCode(), healthyAgain.describe());
    assertTrue(healthyAgain.stdoutText().contains("Healthy: 3 of 3 nodes alive and Up."), healthyAgain.describe());

    long readAgainStart = System.nanoTime();
    try (TributaryClient viaNode1 = TributaryClient.connect(nodes[1], Map.of())) {
      assertLogIs(acked, readAll(viaNode1), "read through node 1's gateway after node 3 was killed and restarted");
    }
    long readAgain = System.nanoTime();

    JavaProcesses.Result stop = cli("stop", "cluster", "stop", "--data-dir", clusterDir.toString());
    assertEquals(0, stop.exitCode(), stop.describe());
    long stopped = System.nanoTime();
    for (long pid : new long[] {pids[1], pids[2], newPid3}) {
      assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)
          && new String(readCmdline(pid), StandardCharsets.UTF_8).contains("io.tributary.cli.Main"),
          "pid " + pid + " is gone after cluster stop");
    }
    for (int n = 1; n <= NODES; n++) {
      assertFalse(Files.exists(clusterDir.resolve("node-" + n).resolve("pid")), "pid file of node " + n + " removed");
    }

    System.out.printf(
        "ClusterIT timings: cluster start %d ms, refused second start %d ms, connect + create topic %d ms, produce %d"
            + " records (acks=all, via node 2) %d ms, read via node 3 (twice, %d s apart; the second %d ms) %d ms,"
            + " status %d ms, kill %d ms, status (node 3 dead) + restart node 3 %d ms, status %d ms, read again via"
            + " node 1 %d ms, cluster stop %d ms%n",
        ms(started - t0), ms(refused - started), ms(created - refused), RECORDS, ms(produced - created),
        IDLE.toSeconds(), ms(idleRead), ms(read - produced), ms(killStart - statusStart), ms(killed - killStart),
        ms(restarted - killed), ms(readAgainStart - statusAgainStart), ms(readAgain - readAgainStart),
        ms(stopped - readAgain));
  }

  // ------------------------------------------------------------------ producing and reading

  private static String key(int seq) {
    return "key-" + (seq % KEYS);
  }

  private static String value(int seq) {
    return "value-" + seq;
  }

  /** Sends {@link #RECORDS} keyed records with acks=all; every send must succeed. @return partition → offset → value */
  private Map<Integer, TreeMap<Long, String>> produce(TributaryClient client) throws Exception {
    List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>(RECORDS);
    try (Producer<String, String> producer =
        client.producer(Map.of("acks", "all"), Serializer.string(), Serializer.string())) {
      for (int seq = 0; seq < RECORDS; seq++) {
        futures.add(producer.send(new ProducerRecord<>(TOPIC, key(seq), value(seq))).toCompletableFuture());
      }
      producer.flush();
      CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0])).handle((v, ex) -> null)
          .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
    }
    Map<Integer, TreeMap<Long, String>> acked = new TreeMap<>();
    Map<String, Integer> partitionOfKey = new HashMap<>();
    for (int seq = 0; seq < RECORDS; seq++) {
      CompletableFuture<RecordMetadata> f = futures.get(seq);
      assertTrue(f.isDone(), "send " + seq + " answered within " + BOUND.toSeconds() + " s" + diagnostics());
      Throwable failure = f.handle((md, ex) -> ex).join();
      if (failure != null) {
        fail("send " + seq + " failed on a healthy cluster: " + failure + diagnostics(), failure);
      }
      RecordMetadata md = f.join();
      Integer previous = partitionOfKey.putIfAbsent(key(seq), md.partition());
      assertTrue(previous == null || previous == md.partition(), "key " + key(seq) + " went to two partitions");
      String twice = acked.computeIfAbsent(md.partition(), p -> new TreeMap<>()).put(md.offset(), value(seq));
      assertEquals(null, twice, "two records acknowledged at " + md.partition() + "@" + md.offset());
    }
    assertEquals(PARTITIONS, acked.size(), "keys spread over every partition");
    return acked;
  }

  /** Every partition from its beginning to its end offset: partition → values in the order polled, with offsets. */
  private Map<Integer, List<ConsumerRecord<String, String>>> readAll(TributaryClient client) {
    List<TopicPartition> partitions = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      partitions.add(new TopicPartition(TOPIC, p));
    }
    Map<Integer, List<ConsumerRecord<String, String>>> result = new TreeMap<>();
    partitions.forEach(tp -> result.put(tp.partition(), new ArrayList<>()));
    try (Consumer<String, String> consumer =
        client.consumer(Map.of("auto.offset.reset", "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + BOUND.toNanos();
      while (!partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp))) {
        if (System.nanoTime() > deadline) {
          Map<TopicPartition, Long> positions = new HashMap<>();
          partitions.forEach(tp -> positions.put(tp, consumer.position(tp)));
          fail("reading did not reach the end within " + BOUND.toSeconds() + " s: positions " + positions
              + ", end offsets " + ends + diagnostics());
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofSeconds(1))) {
          result.get(r.partition()).add(r);
        }
      }
    }
    return result;
  }

  /** Each partition holds exactly the acknowledged records at their offsets, dense from 0, in offset order. */
  private static void assertLogIs(Map<Integer, TreeMap<Long, String>> acked,
      Map<Integer, List<ConsumerRecord<String, String>>> read, String when) {
    for (int p = 0; p < PARTITIONS; p++) {
      TreeMap<Long, String> expected = acked.getOrDefault(p, new TreeMap<>());
      List<ConsumerRecord<String, String>> got = read.get(p);
      assertEquals(expected.size(), got.size(), when + ": records in partition " + p);
      long offset = 0;
      int lastSeq = -1;
      for (ConsumerRecord<String, String> r : got) {
        assertEquals(offset, r.offset(), when + ": offsets of partition " + p + " are dense and in order");
        assertEquals(expected.get(offset), r.value(), when + ": value at " + p + "@" + offset);
        int seq = Integer.parseInt(r.value().substring("value-".length()));
        assertEquals(key(seq), r.key(), when + ": key at " + p + "@" + offset);
        assertTrue(seq > lastSeq, when + ": partition " + p + " in send order (" + lastSeq + " then " + seq + ")");
        lastSeq = seq;
        offset++;
      }
    }
  }

  // ------------------------------------------------------------------ processes

  private JavaProcesses.Result cli(String name, String... args) {
    try (JavaProcesses.CliProcess p = JavaProcesses.CliProcess.start(name, dir, null, args)) {
      return p.awaitExit(CLI_BOUND);
    }
  }

  private long pidOf(int node) {
    try {
      return Long.parseLong(Files.readString(clusterDir.resolve("node-" + node).resolve("pid")).trim());
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  /** Whether {@code pid} is node {@code node}'s broker: its command line names the main class and its data dir. */
  private boolean isNodeProcess(long pid, int node) {
    String cmdline = new String(readCmdline(pid), StandardCharsets.UTF_8);
    return cmdline.contains("io.tributary.cli.Main\0server\0")
        && cmdline.contains("\0" + clusterDir.resolve("node-" + node) + "\0");
  }

  private static byte[] readCmdline(long pid) {
    try {
      return Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
    } catch (IOException e) {
      return new byte[0];
    }
  }

  private void awaitGone(long pid, int node, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (isNodeProcess(pid, node) && System.nanoTime() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** The tails of every node's output and log, for failure messages. */
  private String diagnostics() {
    StringBuilder sb = new StringBuilder("\n");
    for (int n = 1; n <= NODES; n++) {
      Path nodeDir = clusterDir.resolve("node-" + n);
      sb.append(JavaProcesses.tail(nodeDir.resolve("server.out"), 20))
          .append(JavaProcesses.tail(nodeDir.resolve("members.txt"), 10))
          .append(JavaProcesses.tail(nodeDir.resolve("logs").resolve("tributary.log"), 30));
    }
    return sb.toString();
  }

  /** The first of {@code count} consecutive ports that are all free on 127.0.0.1 now. */
  private static int freeBasePort(int count) {
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = BrokerProcess.freePort();
      if (base + count - 1 > 65535) {
        continue;
      }
      boolean all = base + CLUSTER_PORT_OFFSET + count - 1 <= 65535;
      for (int i = 0; i < count && all; i++) {
        for (int port : new int[] {base + i, base + CLUSTER_PORT_OFFSET + i}) {
          try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
          } catch (IOException e) {
            all = false;
          }
        }
      }
      if (all) {
        return base;
      }
    }
    throw new IllegalStateException("no " + count + " consecutive free ports");
  }

  /** The client address of the node whose cluster address (a partition's leader) is {@code address}. */
  private static String clientHostPort(String address) {
    String hostPort = address.substring(address.lastIndexOf('@') + 1);
    int colon = hostPort.lastIndexOf(':');
    return hostPort.substring(0, colon + 1) + (Integer.parseInt(hostPort.substring(colon + 1)) - CLUSTER_PORT_OFFSET);
  }

  /** The cluster address of the node whose client address is {@code hostPort}. */
  private static String clusterHostPort(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    return hostPort.substring(0, colon + 1) + (Integer.parseInt(hostPort.substring(colon + 1)) + CLUSTER_PORT_OFFSET);
  }

  /** How far above its client port a node of {@code cluster start} has its cluster port. */
  private static final int CLUSTER_PORT_OFFSET = 100;

  /** {@code 0,2-4} → {0, 2, 3, 4}. */
  private static Set<Integer> partitionsIn(String list) {
    Set<Integer> out = new TreeSet<>();
    for (String part : list.split(",")) {
      int dash = part.indexOf('-');
      if (dash < 0) {
        out.add(Integer.parseInt(part));
      } else {
        for (int i = Integer.parseInt(part.substring(0, dash)); i <= Integer.parseInt(part.substring(dash + 1)); i++) {
          out.add(i);
        }
      }
    }
    return out;
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
