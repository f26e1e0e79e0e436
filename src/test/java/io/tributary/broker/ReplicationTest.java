package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.javadsl.AskPattern;
import io.tributary.log.LocalLeaders;
import io.tributary.log.PartitionLeader;
import io.tributary.log.ReplicaManager;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.CompressionType;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three broker nodes in one JVM (each its own ActorSystem, port and data dir): replica placement, acks=all,
 * followers holding the leader's log, a node leaving (controlled shutdown) with leadership moving, and its return
 * into the ISR. Crash tests (SIGKILL) are the multi-JVM ITs.
 */
class ReplicationTest {
  private final List<BrokerNode> nodes = new ArrayList<>();
  private final List<Path> dirs = new ArrayList<>();

  /** Settings added to {@link #tuning()} for every node a test starts. */
  private final Map<String, Object> extraSettings = new HashMap<>();

  private Map<String, Object> tuning() {
    Map<String, Object> o = new HashMap<>(extraSettings);
    o.put("tributary.broker.replica.lag.time.max.ms", 3000);
    o.put("tributary.broker.leader.imbalance.check.interval.seconds", 1);
    o.put("tributary.broker.offsets.topic.num.partitions", 3);
    return o;
  }

  private final Map<Integer, Integer> ports = new HashMap<>();

  /** Starts node {@code i}; a restarted node keeps its port, so it is the same replica (nodes are named by address). */
  private BrokerNode startNode(int i, String seed) {
    Map<String, Object> o = tuning();
    if (ports.containsKey(i)) {
      o.put("akka.remote.artery.canonical.port", ports.get(i));
    }
    if (seed != null) {
      o.put("akka.cluster.seed-nodes", List.of(seed));
    }
    BrokerNode n = TestNodes.start(dirs.get(i), o);
    ports.put(i, (Integer) n.system().address().getPort().get());
    if (i < nodes.size()) {
      nodes.set(i, n);
    } else {
      nodes.add(n);
    }
    return n;
  }

  private String seed() {
    return nodes.get(0).system().address().toString();
  }

  @AfterEach
  void stop() {
    for (BrokerNode n : nodes) {
      if (n != null) {
        n.close();
      }
    }
  }

  private void startCluster() {
    for (int i = 0; i < 3; i++) {
      dirs.add(TestNodes.tempDataDir());
    }
    startNode(0, null);
    startNode(1, seed());
    startNode(2, seed());
  }

  private static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Timed out waiting for: " + what);
      }
      try {
        Thread.sleep(50); // polling a condition with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private static List<PartitionDescription> describe(BrokerNode via, String topic) {
    AdminResponse r = new Gw(via).ask(rt -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(topic),
        rt));
    assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
    return r.topics().get(0).partitions();
  }

  /**
   * Every running node's {@link LocalLeaders} (the gateway's shortcut to local leaders) lists exactly the partitions of
   * {@code topic} that the metadata says the node leads, and no partition of a topic that is gone ({@code gone}).
   */
  private void awaitLocalLeaders(BrokerNode via, String topic, boolean gone) {
    await("every node's LocalLeaders lists the partitions of " + topic + " it leads", () -> {
      List<PartitionDescription> parts = gone ? List.of() : describe(via, topic);
      for (BrokerNode n : nodes) {
        if (n == null) {
          continue;
        }
        String address = n.system().address().toString();
        LocalLeaders local = LocalLeaders.get(n.system());
        for (PartitionDescription p : parts) {
          if (address.equals(p.leader()) != (local.leader(topic, p.partition()) != null)) {
            return false;
          }
        }
        for (int p = 0; gone && p < 3; p++) {
          if (local.leader(topic, p) != null) {
            return false;
          }
        }
      }
      return true;
    });
  }

  /**
   * Creates {@code topic} with 3 partitions of 3 replicas, retrying while the controller does not see the third node
   * yet (it may see the last node Up a moment after that node itself does).
   */
  private static void createWithThreeReplicas(Gw gw, String topic, String minInsyncReplicas) {
    AdminResponse[] created = new AdminResponse[1];
    await("a topic with three replicas can be created", () -> {
      created[0] = gw.ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, topic, 3, (short) 3,
          Map.of("min.insync.replicas", minInsyncReplicas), r));
      return created[0].error() != ErrorCode.INVALID_REPLICATION_FACTOR;
    });
    assertEquals(ErrorCode.NONE, created[0].error(), created[0].errorMessage());
  }

  /**
   * Produces batches {@code from} .. {@code to - 1} of 10 records ({@code prefix + i + "-" + k}) with acks=all through
   * {@code via}, each retried while the answer is retriable (a leader moving), and adds their records to {@code
   * expected}; fails on a non-retriable error.
   */
  private static void produceRetrying(BrokerNode via, String topic, int partition, String prefix, int from, int to,
      List<String> expected) {
    for (int i = from; i < to; i++) {
      int n = i;
      ProduceResponse[] r = new ProduceResponse[1];
      await("acks=all produce to " + topic + "-" + partition, () -> {
        r[0] = produceAll(via, topic, partition, Gw.batch(prefix + n + "-", 10, 1000L));
        return r[0].error() == ErrorCode.NONE || !r[0].error().retriable();
      });
      assertEquals(ErrorCode.NONE, r[0].error(), r[0].errorMessage());
      for (int k = 0; k < 10; k++) {
        expected.add(prefix + i + "-" + k);
      }
    }
  }

  private static ProduceResponse produceAll(BrokerNode via, String topic, int partition, byte[] batch) {
    return new Gw(via).ask(r -> new ProduceRequest(ProtocolVersions.CURRENT, topic, partition, (short) -1, 30000,
        batch, r));
  }

  /** The status of the replica of {@code topic-p} on node {@code on}, asked through {@code via}'s router. */
  private static PartitionLeader.PartitionStatus replicaStatus(BrokerNode via, BrokerNode on, String topic, int p) {
    return AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionStatus>ask(via.tributary().partitions(),
            r -> new ReplicaManager.ToReplica(on.system().address().toString(),
                new PartitionLeader.GetStatus(topic, p, r)), Gw.T, via.system().scheduler())
        .toCompletableFuture().join();
  }

  private static List<String> readAll(BrokerNode via, String topic, int partition) {
    List<String> out = new ArrayList<>();
    Gw gw = new Gw(via);
    long offset = 0;
    while (true) {
      FetchResponse f = gw.fetch(topic, partition, offset, 1 << 20, 0);
      assertEquals(ErrorCode.NONE, f.error(), f.errorMessage());
      if (f.batches().isEmpty()) {
        return out;
      }
      for (byte[] b : f.batches()) {
        for (Record r : RecordBatch.wrap(b)) {
          if (r.offset() >= offset) {
            assertEquals(offset, r.offset(), "offsets are dense");
            out.add(new String(r.value(), StandardCharsets.UTF_8));
            offset++;
          }
        }
      }
    }
  }

  @Test
  void threeReplicasTakeOverWhenALeaderLeavesAndTheNodeRejoinsTheIsr() {
    startCluster();
    BrokerNode n0 = nodes.get(0);
    Gw gw = new Gw(n0);
    createWithThreeReplicas(gw, "r", "2");

    // the offsets topic, created when only the first node ran, grew to three in-sync replicas as the others joined
    await("__consumer_offsets on three in-sync replicas", () -> {
      for (PartitionDescription p : describe(n0, "__consumer_offsets")) {
        if (p.replicas().size() != 3 || p.isr().size() != 3) {
          return false;
        }
      }
      return true;
    });

    // placement: three distinct replicas per partition, one leader per node
    List<PartitionDescription> parts = describe(n0, "r");
    Set<String> leaders = new HashSet<>();
    for (PartitionDescription p : parts) {
      assertEquals(3, new HashSet<>(p.replicas()).size(), "replicas on distinct nodes: " + p.replicas());
      assertEquals(p.replicas().get(0), p.leader());
      leaders.add(p.leader());
    }
    assertEquals(3, leaders.size(), "leaders spread over the nodes: " + parts);
    awaitLocalLeaders(n0, "r", false);
    // rf above the live brokers is refused
    AdminResponse tooMany = gw.ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, "r4", 1, (short) 4,
        Map.of(), r));
    assertEquals(ErrorCode.INVALID_REPLICATION_FACTOR, tooMany.error());

    // acks=all: answered once every in-sync replica has the batch; followers copy compressed batches as they are
    List<String> expected0 = new ArrayList<>();
    CompressionType[] codecs = {CompressionType.NONE, CompressionType.LZ4, CompressionType.ZSTD, CompressionType.GZIP};
    for (int i = 0; i < 20; i++) {
      ProduceResponse r = produceAll(n0, "r", 0, Gw.batch("a" + i + "-", 10, 1000L, codecs[i % codecs.length]));
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      assertEquals(i * 10L, r.baseOffset());
      for (int k = 0; k < 10; k++) {
        expected0.add("a" + i + "-" + k);
      }
    }
    // every replica holds the same log, and the high watermark covers it
    for (BrokerNode on : nodes) {
      PartitionLeader.PartitionStatus s = replicaStatus(n0, on, "r", 0);
      assertEquals(200L, s.logEndOffset(), "log end offset of the replica on " + on.system().address());
    }
    assertEquals(200L, gw.status("r", 0).highWatermark());
    assertEquals(expected0, readAll(n0, "r", 0));

    // the leader of a partition leaves (controlled shutdown): leadership moves to an in-sync replica, epoch bumps.
    // The partition is one not led by the first node (it runs the controller: its crash is the multi-JVM tests' job).
    String firstAddress = n0.system().address().toString();
    int part = -1;
    for (PartitionDescription p : describe(n0, "r")) {
      if (!p.leader().equals(firstAddress) && part < 0) {
        part = p.partition();
      }
    }
    assertTrue(part >= 0);
    int movedPartition = part;
    PartitionDescription before = describe(n0, "r").get(movedPartition);
    int leaving = 1;
    for (int i = 1; i < 3; i++) {
      if (nodes.get(i).system().address().toString().equals(before.leader())) {
        leaving = i;
      }
    }
    // put the same records into the moving partition first
    List<String> expected = new ArrayList<>(movedPartition == 0 ? expected0 : List.of());
    for (int i = 0; i < 20; i++) {
      ProduceResponse r = produceAll(n0, "r", movedPartition, Gw.batch("b" + i + "-", 10, 1000L));
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      for (int k = 0; k < 10; k++) {
        expected.add("b" + i + "-" + k);
      }
    }
    String leavingAddress = nodes.get(leaving).system().address().toString();
    nodes.get(leaving).close();
    nodes.set(leaving, null);
    await("the partition led elsewhere and its ISR without the departed node", () -> {
      PartitionDescription p = describe(n0, "r").get(movedPartition);
      return !p.leader().equals(leavingAddress) && !p.isr().contains(leavingAddress)
          && p.leaderEpoch() > before.leaderEpoch();
    });
    // the new leader never reports a log end below what was acknowledged: until its high watermark has caught up it
    // answers OFFSET_NOT_AVAILABLE (Kafka's KIP-207), a retriable error
    int acknowledgedBefore = expected.size();
    long[] latest = {-1};
    await("the new leader answers ListOffsets latest", () -> {
      io.tributary.protocol.ListOffsetsResponse l = gw.listOffsets("r", movedPartition,
          io.tributary.protocol.ListOffsetsRequest.LATEST_TIMESTAMP);
      if (l.error() == ErrorCode.NONE) {
        latest[0] = l.offset();
        return true;
      }
      assertTrue(l.error().retriable(), l.error() + ": " + l.errorMessage());
      return false;
    });
    assertTrue(latest[0] >= acknowledgedBefore, "latest " + latest[0] + " < acknowledged " + acknowledgedBefore);
    PartitionDescription after = describe(n0, "r").get(movedPartition);
    assertNotEquals(leavingAddress, after.leader());
    assertTrue(after.leaderEpoch() > before.leaderEpoch());
    awaitLocalLeaders(n0, "r", false);

    // writes continue with two in-sync replicas (min.insync.replicas=2), and nothing acknowledged is lost
    produceRetrying(n0, "r", movedPartition, "b", 20, 30, expected);
    assertEquals(expected, readAll(n0, "r", movedPartition));

    // the node returns on its data dir: it catches up and rejoins the ISR of every partition
    startNode(leaving, seed());
    await("the returning node back in every ISR", () -> {
      for (PartitionDescription p : describe(n0, "r")) {
        if (!p.isr().contains(leavingAddress)) {
          return false;
        }
      }
      return true;
    });
    BrokerNode back = nodes.get(leaving);
    await("the returning replica reports its log",
        () -> replicaStatus(n0, back, "r", movedPartition).error() == ErrorCode.NONE);
    assertEquals(expected.size(), replicaStatus(n0, back, "r", movedPartition).logEndOffset());
    // and the preferred leader (the returning node) leads its partition again (auto.leader.rebalance.enable)
    await("preferred leader restored", () -> describe(n0, "r").get(movedPartition).leader().equals(leavingAddress));
    // the controller's metadata says so before every node's router has the new leader (a client retries the
    // retriable NOT_LEADER_OR_FOLLOWER meanwhile): wait until n0 routes to it
    await("n0 routes to the restored leader",
        () -> new Gw(n0).fetch("r", movedPartition, 0, 1 << 20, 0).error() != ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assertEquals(expected, readAll(n0, "r", movedPartition));
    awaitLocalLeaders(n0, "r", false);

    // deleted and created again under the same name (leader epochs start at 0 again): every replica takes its role
    assertEquals(ErrorCode.NONE, gw.delete("r").error());
    awaitLocalLeaders(n0, "r", true);
    AdminResponse again = gw.ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, "r", 3, (short) 3,
        Map.of("min.insync.replicas", "2"), r));
    assertEquals(ErrorCode.NONE, again.error(), again.errorMessage());
    for (int p = 0; p < 3; p++) {
      int part2 = p;
      ProduceResponse[] r = new ProduceResponse[1];
      await("acks=all produce to the new topic", () -> {
        r[0] = produceAll(n0, "r", part2, Gw.batch("c-", 5, 1000L));
        return r[0].error() == ErrorCode.NONE || !r[0].error().retriable();
      });
      assertEquals(ErrorCode.NONE, r[0].error(), r[0].errorMessage());
      assertEquals(0L, r[0].baseOffset(), "the new topic's log starts empty");
    }
  }
  /**
   * A node restarted with a stale copy of the metadata in its durable store (here: the copy it had while it led a
   * partition, restored after a controlled shutdown moved the leadership away; in practice the move may reach a
   * majority of nodes but not the leaving one) does not lead that partition on its stale view: its replicas take
   * leadership only once the controller has answered the replica manager's {@code SyncTopics}. Distributed Data
   * gossip is slowed to an hour, so the stale view would last: without that rule the restarted node acknowledges the
   * record below as the partition's leader in the old epoch, and the real leader never has it.
   */
  /**
   * A multi-partition produce request through one node's gateway whose partitions are led on all three nodes: the
   * entries led elsewhere are routed there and their leaders' answers come back to this gateway (numbered), which
   * answers once; each batch is stored once in its partition, on every replica's leader read.
   */
  @Test
  void aMultiPartitionProduceRequestIsAnsweredOnceForPartitionsLedOnOtherNodes() {
    startCluster();
    BrokerNode n0 = nodes.get(0);
    Gw gw = new Gw(n0);
    createWithThreeReplicas(gw, "mp", "2");
    java.util.Set<String> leaders = new java.util.HashSet<>();
    await("the three partitions are led by three nodes", () -> {
      leaders.clear();
      describe(n0, "mp").forEach(p -> leaders.add(p.leader()));
      return leaders.size() == 3 && !leaders.contains(null);
    });
    MultiProduceResponse[] r = new MultiProduceResponse[1];
    int[] attempt = {0};
    await("acks=all multi-partition produce", () -> {
      int a = attempt[0]++;
      r[0] = gw.ask(rt -> new MultiProduceRequest(ProtocolVersions.CURRENT, (short) -1, 30000, List.of(
          MultiProduceRequest.Entry.of("mp", 0, Gw.batch("a" + a + "-", 3, 1000L)),
          MultiProduceRequest.Entry.of("mp", 1, Gw.batch("b" + a + "-", 4, 1000L)),
          MultiProduceRequest.Entry.of("mp", 2, Gw.batch("c" + a + "-", 5, 1000L))), rt));
      return r[0].responses().stream().allMatch(x -> x.error() == ErrorCode.NONE);
    });
    List<ProduceResponse> answers = r[0].responses();
    assertEquals(List.of(0, 1, 2), answers.stream().map(ProduceResponse::partition).toList());
    int last = attempt[0] - 1;
    assertEquals(List.of("a" + last + "-0", "a" + last + "-1", "a" + last + "-2"),
        readAll(n0, "mp", 0).subList((int) answers.get(0).baseOffset(), (int) answers.get(0).baseOffset() + 3));
    assertEquals("b" + last + "-3", readAll(n0, "mp", 1).get((int) answers.get(1).baseOffset() + 3));
    assertEquals("c" + last + "-4", readAll(n0, "mp", 2).get((int) answers.get(2).baseOffset() + 4));
  }

  @Test
  void aNodeRestartedWithStaleDurableMetadataDoesNotLeadOnIt() throws Exception {
    extraSettings.put("tributary.metadata.replicator.gossip-interval", "1h");
    extraSettings.put("tributary.broker.auto.leader.rebalance.enable", false);
    startCluster();
    BrokerNode n0 = nodes.get(0);
    Gw gw = new Gw(n0);
    createWithThreeReplicas(gw, "stale", "1");
    awaitLocalLeaders(n0, "stale", false);
    // a partition led by node 1 or 2 (node 0 runs the controller)
    int leaving = -1;
    int part = -1;
    for (PartitionDescription p : describe(n0, "stale")) {
      for (int i = 1; i < 3 && part < 0; i++) {
        if (nodes.get(i).system().address().toString().equals(p.leader())) {
          leaving = i;
          part = p.partition();
        }
      }
    }
    assertTrue(part >= 0, "a partition led by node 1 or 2");
    int partition = part;
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ProduceResponse r = produceAll(n0, "stale", partition, Gw.batch("a" + i + "-", 10, 1000L));
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      for (int k = 0; k < 10; k++) {
        expected.add("a" + i + "-" + k);
      }
    }
    // the durable metadata of the leader while it leads
    Path ddata = dirs.get(leaving).resolve("ddata");
    Path copy = TestNodes.tempDataDir().resolve("ddata-copy");
    copyTree(ddata, copy);
    String leavingAddress = nodes.get(leaving).system().address().toString();
    nodes.get(leaving).close();
    nodes.set(leaving, null);
    await("the partition led elsewhere", () -> !describe(n0, "stale").get(partition).leader().equals(leavingAddress));
    produceRetrying(n0, "stale", partition, "a", 5, 10, expected);
    deleteTree(ddata);
    copyTree(copy, ddata);

    BrokerNode back = startNode(leaving, seed());
    // a producer whose client went through the restarted node: acks=1, retried while the answer is retriable
    ProduceResponse[] z = new ProduceResponse[1];
    await("acks=1 produce through the restarted node", () -> {
      z[0] = new Gw(back).ask(r -> new ProduceRequest(ProtocolVersions.CURRENT, "stale", partition, (short) 1, 30000,
          Gw.batch("z-", 1, 1000L), r));
      return z[0].error() == ErrorCode.NONE || !z[0].error().retriable();
    });
    assertEquals(ErrorCode.NONE, z[0].error(), z[0].errorMessage());
    expected.add("z-0");
    assertEquals(expected.size() - 1, z[0].baseOffset(), "appended after every acknowledged record, by the leader");
    // acks=1 answers before the followers have the record: it is readable once the high watermark passes it
    await("the high watermark covers the acks=1 record",
        () -> readAll(n0, "stale", partition).size() >= expected.size());
    assertEquals(expected, readAll(n0, "stale", partition));
  }

  private static void copyTree(Path from, Path to) throws java.io.IOException {
    try (var paths = java.nio.file.Files.walk(from)) {
      for (Path p : (Iterable<Path>) paths::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (java.nio.file.Files.isDirectory(p)) {
          java.nio.file.Files.createDirectories(target);
        } else if (!p.getFileName().toString().equals("LOCK")) {
          java.nio.file.Files.copy(p, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var paths = java.nio.file.Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
