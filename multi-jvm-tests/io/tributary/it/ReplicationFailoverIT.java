package io.tributary.it;

import static io.tributary.it.ReplicatedClusters.RF;
import static io.tributary.it.ReplicatedClusters.START_BOUND;
import static io.tributary.it.ReplicatedClusters.await;
import static io.tributary.it.ReplicatedClusters.awaitFullyInSync;
import static io.tributary.it.ReplicatedClusters.describeQuietly;
import static io.tributary.it.ReplicatedClusters.ms;
import static io.tributary.it.ReplicatedClusters.topicConfigs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.cli.LocalClusterDriver;
import io.tributary.cli.chaos.ChaosConsumer;
import io.tributary.cli.chaos.ChaosProducer;
import io.tributary.cli.chaos.Ledger;
import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.PartitionDescription;
import java.io.IOException;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Replication and failover from the outside, on one local cluster of three broker JVMs (killed with SIGKILL by pid,
 * stopped with SIGTERM), topics with replication factor {@link ReplicatedClusters#RF} and
 * {@code min.insync.replicas=2}, producers with {@code acks=all} and idempotence, and a client given every node's
 * address. Each test has its own topic; the tests run in order on the same cluster (one start instead of five), and
 * each begins by restarting any node an earlier one left down.
 *
 * <ol>
 *   <li>A partition leader is SIGKILLed under continuous produce: another replica becomes leader with a higher leader
 *       epoch, produce to that partition is acknowledged again, the restarted node rejoins the ISR of every partition,
 *       and every acknowledged record is read back once, in order per partition, at its acknowledged offset.
 *   <li>The oldest node (where the group coordinator singleton runs) is SIGKILLed under a consumer group: the
 *       coordinator moves, the members commit again, committed offsets are intact, and a new member resumes exactly
 *       at them.
 *   <li>Rolling restart under continuous produce: each node in turn SIGTERMed (controlled shutdown), restarted and
 *       back in every ISR before the next; the producer sees no non-retriable error; every acknowledged record read
 *       back once, in order.
 *   <li>Two of three nodes SIGKILLed: an {@code acks=all} send is not acknowledged (NOT_ENOUGH_REPLICAS or a
 *       timeout); after all three are started again, everything acknowledged before is there.
 *   <li>All three SIGKILLed at once mid-produce and restarted: nothing acknowledged is lost, and produce works again.
 * </ol>
 *
 * Timings are printed (failsafe's output file), never asserted.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReplicationFailoverIT {
  private static final int NODES = 3;
  private static final int PARTITIONS = 6;
  /** The topics of the tests, created together before the first. */
  private static final List<String> TOPICS = List.of("failover", "grouped", "rolling", "minority", "blackout");
  /** Bounds against hangs only. */
  private static final Duration FAILOVER_BOUND = Duration.ofSeconds(60);
  private static final Duration ISR_BOUND = Duration.ofMinutes(2);
  private static final Duration READ_BOUND = Duration.ofMinutes(2);
  private static final Duration STOP_BOUND = Duration.ofSeconds(60);
  /** Producer settings: Kafka's defaults for a durable producer (acks=all, idempotent, retries within 2 minutes). */
  private static final Map<String, Object> DURABLE = Map.of("acks", "all", "enable.idempotence", "true");
  /** For sends that are expected to fail: give up after 15 s. */
  private static final Map<String, Object> IMPATIENT = Map.of("acks", "all", "enable.idempotence", "true",
      "delivery.timeout.ms", "15000", "request.timeout.ms", "5000", "max.block.ms", "5000");

  private static Path dir;
  private static LocalClusterDriver cluster;
  private final List<AutoCloseable> cleanup = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    dir = JavaProcesses.testDir("ReplicationFailoverIT", "cluster");
    long t0 = System.nanoTime();
    cluster = ReplicatedClusters.start(dir, NODES);
    long up = System.nanoTime();
    // every test's topic at once: placing partitions takes a while, and this way only once
    try (TributaryClient client = TributaryClient.connect(cluster.bootstrap(), Map.of());
        Admin admin = client.admin()) {
      for (String topic : TOPICS) {
        admin.createTopic(topic, PARTITIONS, RF, topicConfigs());
      }
      for (String topic : TOPICS) {
        awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, () -> cluster.diagnostics(25));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    System.out.printf("ReplicationFailoverIT: cluster of %d nodes up in %d ms, %d topics (rf %d) in sync %d ms"
        + " later%n", NODES, ms(up - t0), TOPICS.size(), RF, ms(System.nanoTime() - up));
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Every node runs before a test starts (an earlier test may have failed with nodes down). */
  @BeforeEach
  void everyNodeUp() {
    Set<Integer> down = new TreeSet<>();
    for (int n = 1; n <= NODES; n++) {
      if (!cluster.isRunning(n)) {
        down.add(n);
      }
    }
    if (!down.isEmpty()) {
      if (down.size() > 1) {
        cluster.stopAll(STOP_BOUND);
        down = Set.of(1, 2, 3);
      }
      cluster.start(down, START_BOUND);
    }
  }

  @AfterEach
  void closeClients() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      try {
        cleanup.get(i).close();
      } catch (Exception e) {
        // go on
      }
    }
    cleanup.clear();
  }

  private <T extends AutoCloseable> T closeLater(T resource) {
    cleanup.add(resource);
    return resource;
  }

  private TributaryClient connect() {
    return closeLater(TributaryClient.connect(cluster.bootstrap(), Map.of()));
  }

  /** The test's topic (created before the first test) is in sync, e.g. after an earlier test's restarts. */
  private void awaitTopicInSync(Admin admin, String topic) throws InterruptedException {
    assertTrue(TOPICS.contains(topic), topic);
    awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, this::diagnostics);
  }

  // ------------------------------------------------------------------ 1. leader failover

  @Test
  @Order(1)
  void killedLeaderIsReplacedByAReplicaWithAHigherEpochAndNothingAcknowledgedIsLost() throws Exception {
    String topic = "failover";
    TributaryClient client = connect();
    Admin admin = closeLater(client.admin());
    awaitTopicInSync(admin, topic);
    Ledger ledger = new Ledger();
    ChaosProducer producer = closeLater(new ChaosProducer(client, topic, 0, ledger, DURABLE, 300, 500));
    producer.start();
    await("200 records acknowledged", FAILOVER_BOUND, () -> producer.acknowledged() >= 200, this::diagnostics);

    PartitionDescription before = describeQuietly(admin, topic).get(0);
    int victim = cluster.nodeOf(before.leader());
    assertTrue(victim > 0, "partition 0's leader is a node of the cluster: " + before);
    Map<Integer, Integer> ledByVictim = new TreeMap<>();
    for (PartitionDescription p : describeQuietly(admin, topic)) {
      if (cluster.nodeOf(p.leader()) == victim) {
        ledByVictim.put(p.partition(), p.leaderEpoch());
      }
    }
    long killed = System.nanoTime();
    cluster.kill(victim);

    PartitionDescription[] after = new PartitionDescription[1];
    await("partition 0 has a new leader (not node " + victim + ") with a leader epoch above " + before.leaderEpoch(),
        FAILOVER_BOUND, () -> {
          List<PartitionDescription> ps = describeQuietly(admin, topic);
          if (ps.isEmpty()) {
            return false;
          }
          after[0] = ps.get(0);
          int leader = cluster.nodeOf(after[0].leader());
          return leader > 0 && leader != victim && after[0].leaderEpoch() > before.leaderEpoch();
        }, () -> "last: " + after[0] + diagnostics());
    long elected = System.nanoTime();
    assertTrue(before.replicas().contains(after[0].leader()), "the new leader " + after[0].leader()
        + " is one of the replicas " + before.replicas());
    assertTrue(before.isr().contains(after[0].leader()), "the new leader " + after[0].leader()
        + " was in the ISR " + before.isr());
    assertNotEquals(cluster.nodeOf(before.leader()), cluster.nodeOf(after[0].leader()));
    // every other partition the victim led moves as well
    await("no partition is led by the killed node " + victim, FAILOVER_BOUND, () -> {
      List<PartitionDescription> ps = describeQuietly(admin, topic);
      return ps.size() == PARTITIONS && ps.stream().allMatch(p -> {
        int leader = cluster.nodeOf(p.leader());
        return leader > 0 && leader != victim
            && (!ledByVictim.containsKey(p.partition()) || p.leaderEpoch() > ledByVictim.get(p.partition()));
      });
    }, this::diagnostics);

    long ackedAtElection = producer.acknowledged(0);
    await("partition 0 acknowledges records again after the failover", FAILOVER_BOUND,
        () -> producer.acknowledged(0) >= ackedAtElection + 20, this::diagnostics);
    long producing = System.nanoTime();

    cluster.restart(victim, START_BOUND);
    long restarted = System.nanoTime();
    long rejoinMs = awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, this::diagnostics);
    long ackedAfterRejoin = producer.acknowledged();
    await("more records acknowledged with node " + victim + " back in the ISR", FAILOVER_BOUND,
        () -> producer.acknowledged() >= ackedAfterRejoin + 100, this::diagnostics);

    producer.stopSending();
    assertTrue(producer.awaitAnswers(Duration.ofMinutes(3)), "every send answered");
    Ledger.Result result = readBack(client, topic, ledger);
    assertEquals(0, producer.nonRetriableFailures(), "non-retriable send errors: " + producer.nonRetriableExamples());
    System.out.printf("ReplicationFailoverIT leader failover: partition 0 led by node %d (epoch %d), new leader node"
            + " %d (epoch %d) reported %d ms after SIGKILL; acknowledged again %d ms after that; node restarted in %d"
            + " ms, back in every ISR %d ms later; %s%n",
        victim, before.leaderEpoch(), cluster.nodeOf(after[0].leader()), after[0].leaderEpoch(),
        ms(elected - killed), ms(producing - elected), ms(restarted - producing), rejoinMs, result.details());
  }

  // ------------------------------------------------------------------ 2. group coordinator failover

  @Test
  @Order(2)
  void groupCoordinatorMovesWithTheOldestNodeAndCommittedOffsetsSurvive() throws Exception {
    String topic = "grouped";
    String group = "workers";
    TributaryClient client = connect();
    Admin admin = closeLater(client.admin());
    awaitTopicInSync(admin, topic);
    Ledger ledger = new Ledger();
    ChaosProducer producer = closeLater(new ChaosProducer(client, topic, 0, ledger, DURABLE, 200, 500));
    producer.start();

    Path[] logs = {dir.resolve("grouped-member-0.log"), dir.resolve("grouped-member-1.log"),
        dir.resolve("grouped-member-2.log")};
    List<Process> members = new ArrayList<>();
    cleanup.add(() -> members.forEach(Process::destroyForcibly));
    members.add(startMember(group, topic, logs[0], "member-0"));
    members.add(startMember(group, topic, logs[1], "member-1"));
    await("both members own partitions and commit", FAILOVER_BOUND, () -> {
      for (int i = 0; i < 2; i++) {
        List<String[]> ev = events(logs[i]);
        if (ev.stream().noneMatch(e -> e[0].equals("C")) || owned(ev).isEmpty()) {
          return false;
        }
      }
      return true;
    }, () -> JavaProcesses.tail(logs[0], 10) + JavaProcesses.tail(logs[1], 10) + diagnostics());

    int oldest = cluster.oldestNode().orElseThrow(() -> new AssertionError("no node reports the oldest member"
        + diagnostics()));
    long killed = System.nanoTime();
    long killedMillis = System.currentTimeMillis();
    cluster.kill(oldest);
    await("another node is the oldest (the singletons' host)", FAILOVER_BOUND, () -> {
      var o = cluster.oldestNode();
      return o.isPresent() && o.getAsInt() != oldest;
    }, this::diagnostics);
    long moved = System.nanoTime();
    long movedMillis = System.currentTimeMillis();
    await("both members commit again after the coordinator moved", FAILOVER_BOUND, () -> {
      for (int i = 0; i < 2; i++) {
        if (events(logs[i]).stream().noneMatch(e -> e[0].equals("C") && Long.parseLong(e[1]) > movedMillis)) {
          return false;
        }
      }
      return true;
    }, () -> JavaProcesses.tail(logs[0], 20) + JavaProcesses.tail(logs[1], 20) + diagnostics());
    long committing = System.nanoTime();

    // The commits acknowledged before the kill survived the move: every partition assigned after it resumed at or
    // after its last acknowledged commit (a C line is written once commitSync returned). At or after: a commit whose
    // answer was lost with the coordinator may have been stored too.
    Map<Integer, Long> ackedBeforeKill = new TreeMap<>();
    for (int i = 0; i < 2; i++) {
      for (String[] e : events(logs[i])) {
        if (e[0].equals("C") && Long.parseLong(e[1]) < killedMillis) {
          ackedBeforeKill.merge(Integer.parseInt(e[2]), Long.parseLong(e[3]), Math::max);
        }
      }
    }
    Map<Integer, Long> resumedAfterMove = new TreeMap<>();
    for (int i = 0; i < 2; i++) {
      resumedAfterMove.putAll(resumedAfter(events(logs[i]), killedMillis));
    }
    assertTrue(!resumedAfterMove.isEmpty(), "partitions were assigned after the coordinator moved\n"
        + JavaProcesses.tail(logs[0], 20) + JavaProcesses.tail(logs[1], 20));
    for (var e : resumedAfterMove.entrySet()) {
      long acked = ackedBeforeKill.getOrDefault(e.getKey(), 0L);
      assertTrue(e.getValue() >= acked, "partition " + e.getKey() + " resumed at " + e.getValue() + " after the"
          + " coordinator moved, below the offset " + acked + " committed (and acknowledged) before the kill;"
          + " resumed " + resumedAfterMove + ", acknowledged before the kill " + ackedBeforeKill);
    }

    // stop the members gracefully (leave; a member commits its revoked partitions' positions as it goes)
    for (Process m : members) {
      m.destroy();
    }
    for (Process m : members) {
      assertTrue(m.waitFor(60, TimeUnit.SECONDS), "member stopped on SIGTERM");
    }
    // Every acknowledged commit is kept (committed >= the last C line of the partition) and nothing beyond what a
    // member processed is committed. Not equality: the final commit of a stopping member may be stored although its
    // answer did not arrive (logged E, not C). member-2 below checks that the committed offsets are exact.
    Map<Integer, Long> lastCommitted = new TreeMap<>();
    Map<Integer, Long> processedEnd = new TreeMap<>();
    for (int i = 0; i < 2; i++) {
      for (String[] e : events(logs[i])) {
        if (e[0].equals("C")) {
          lastCommitted.merge(Integer.parseInt(e[2]), Long.parseLong(e[3]), Math::max);
        } else if (e[0].equals("R")) {
          processedEnd.merge(Integer.parseInt(e[2]), Long.parseLong(e[3]) + 1, Math::max);
        }
      }
    }
    Map<Integer, Long> committed = new TreeMap<>();
    for (GroupProtocol.PartitionOffset po : admin.listConsumerGroupOffsets(group)) {
      if (po.topic().equals(topic)) {
        committed.put(po.partition(), po.offset());
      }
    }
    for (var e : lastCommitted.entrySet()) {
      Long c = committed.get(e.getKey());
      assertTrue(c != null && c >= e.getValue() && c <= processedEnd.getOrDefault(e.getKey(), 0L),
          "partition " + e.getKey() + ": committed " + c + ", last acknowledged commit " + e.getValue()
              + ", processed up to " + processedEnd.get(e.getKey()) + "; committed " + committed
              + ", last acknowledged commits " + lastCommitted + ", processed " + processedEnd);
    }

    cluster.restart(oldest, START_BOUND);
    awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, this::diagnostics);

    // a new member resumes exactly at the committed offsets, and processes everything acknowledged after them
    members.add(startMember(group, topic, logs[2], "member-2"));
    producer.stopSending();
    assertTrue(producer.awaitAnswers(Duration.ofMinutes(3)), "every send answered");
    Map<Integer, Long> ends = new TreeMap<>();
    for (var e : admin.listOffsets(ChaosConsumer.partitions(topic, PARTITIONS), -1).entrySet()) {
      ends.put(e.getKey().partition(), e.getValue());
    }
    await("the new member read every partition to its end", READ_BOUND, () -> {
      Map<Integer, Long> next = new HashMap<>();
      for (String[] e : events(logs[2])) {
        if (e[0].equals("R")) {
          next.merge(Integer.parseInt(e[2]), Long.parseLong(e[3]) + 1, Math::max);
        }
      }
      return ends.entrySet().stream().allMatch(e -> e.getValue() <= committed.getOrDefault(e.getKey(), 0L)
          || next.getOrDefault(e.getKey(), 0L) >= e.getValue());
    }, () -> "ends " + ends + ", committed " + committed + "\n" + JavaProcesses.tail(logs[2], 20) + diagnostics());
    Map<Integer, Long> firstRead = new TreeMap<>();
    for (String[] e : events(logs[2])) {
      if (e[0].equals("R")) {
        firstRead.putIfAbsent(Integer.parseInt(e[2]), Long.parseLong(e[3]));
      }
    }
    for (var e : firstRead.entrySet()) {
      assertEquals(committed.getOrDefault(e.getKey(), 0L), e.getValue(),
          "the new member's first offset of partition " + e.getKey() + " is the committed one");
    }
    // and every acknowledged record was processed by some member (at least once)
    Ledger.Reader reader = ledger.reader("members");
    Map<String, Set<String>> seen = new HashMap<>();
    for (Path log : logs) {
      for (String[] e : events(log)) {
        if (e[0].equals("R") && seen.computeIfAbsent(e[2], k -> new TreeSet<>()).add(e[3])) {
          reader.reposition(Integer.parseInt(e[2]));
          reader.read(Integer.parseInt(e[2]), Long.parseLong(e[3]), e[4]);
        }
      }
    }
    Ledger.Result result = ledger.result();
    assertEquals(0, result.lost(), "acknowledged records processed by no member\n" + result.details());
    assertEquals(0, result.divergent() + result.duplicated(), result.details());
    System.out.printf("ReplicationFailoverIT group coordinator: oldest node %d SIGKILLed; another node oldest %d ms"
            + " later; both members committing again %d ms after that; committed offsets %s; member-2 resumed at"
            + " %s; %s%n",
        oldest, ms(moved - killed), ms(committing - moved), committed, firstRead, result.details());
  }

  private Process startMember(String group, String topic, Path log, String name) throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = List.of(java, "-Xmx256m", "-Dlogback.configurationFile=logback.xml", "-cp",
        System.getProperty("java.class.path"), GroupMemberMain.class.getName(), cluster.bootstrap(), group, topic,
        log.toString(), name);
    return new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve(name + ".out").toFile()).start();
  }

  /**
   * Where each partition assigned (A line) after {@code afterMillis} resumed: its first record processed after that
   * assignment, or, if a commit came first, the committed position (nothing was read before it). The first
   * assignment after {@code afterMillis} only.
   */
  private static Map<Integer, Long> resumedAfter(List<String[]> events, long afterMillis) {
    Map<Integer, Long> resumed = new TreeMap<>();
    Set<Integer> pending = new TreeSet<>();
    boolean assigned = false;
    for (String[] e : events) {
      if (!assigned) {
        if (e[0].equals("A") && Long.parseLong(e[1]) > afterMillis && e.length >= 3 && !e[2].equals("-")) {
          assigned = true;
          for (String p : e[2].split(",")) {
            pending.add(Integer.parseInt(p));
          }
        }
        continue;
      }
      if (e[0].equals("V") || e[0].equals("L")) {
        break;
      }
      if (e[0].equals("R") || e[0].equals("C")) {
        int p = Integer.parseInt(e[2]);
        if (pending.remove(p)) {
          resumed.put(p, Long.parseLong(e[3]));
        }
      }
    }
    return resumed;
  }

  /** A member log's lines, split on spaces (see {@link GroupMemberMain}); a line being written is skipped. */
  private static List<String[]> events(Path log) {
    List<String[]> out = new ArrayList<>();
    try {
      if (Files.exists(log)) {
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
          String[] f = line.split(" ");
          if (f.length >= 2 && f[1].matches("\\d+") && (!f[0].equals("R") || f.length >= 5)
              && (!f[0].equals("C") || f.length >= 4)) {
            out.add(f);
          }
        }
      }
    } catch (IOException e) {
      // being written: read again next time
    }
    return out;
  }

  private static Set<Integer> owned(List<String[]> events) {
    Set<Integer> owned = new TreeSet<>();
    for (String[] e : events) {
      if (e.length >= 3 && (e[0].equals("A") || e[0].equals("V") || e[0].equals("L")) && !e[2].equals("-")) {
        for (String p : e[2].split(",")) {
          if (e[0].equals("A")) {
            owned.add(Integer.parseInt(p));
          } else {
            owned.remove(Integer.parseInt(p));
          }
        }
      }
    }
    return owned;
  }

  // ------------------------------------------------------------------ 3. rolling restart

  @Test
  @Order(3)
  void rollingRestartLosesNothingAndTheProducerSeesNoFatalError() throws Exception {
    String topic = "rolling";
    TributaryClient client = connect();
    Admin admin = closeLater(client.admin());
    awaitTopicInSync(admin, topic);
    Ledger ledger = new Ledger();
    ChaosProducer producer = closeLater(new ChaosProducer(client, topic, 0, ledger, DURABLE, 300, 500));
    producer.start();
    await("100 records acknowledged", FAILOVER_BOUND, () -> producer.acknowledged() >= 100, this::diagnostics);
    List<String> timings = new ArrayList<>();
    for (int n = 1; n <= NODES; n++) {
      long t0 = System.nanoTime();
      boolean graceful = cluster.stop(n, STOP_BOUND);
      assertTrue(graceful, "node " + n + " stopped by itself on SIGTERM within " + STOP_BOUND.toSeconds() + " s"
          + diagnostics());
      long stopped = System.nanoTime();
      cluster.restart(n, START_BOUND);
      long restarted = System.nanoTime();
      long rejoin = awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, this::diagnostics);
      long acked = producer.acknowledged();
      await("records acknowledged after node " + n + " rejoined", FAILOVER_BOUND,
          () -> producer.acknowledged() >= acked + 50, this::diagnostics);
      timings.add("node " + n + ": stop " + ms(stopped - t0) + " ms, start " + ms(restarted - stopped)
          + " ms, back in every ISR " + rejoin + " ms");
    }
    producer.stopSending();
    assertTrue(producer.awaitAnswers(Duration.ofMinutes(3)), "every send answered");
    assertEquals(0, producer.nonRetriableFailures(), "non-retriable send errors: " + producer.nonRetriableExamples());
    Ledger.Result result = readBack(client, topic, ledger);
    System.out.printf("ReplicationFailoverIT rolling restart: %s; %s%n", String.join("; ", timings),
        result.details());
  }

  // ------------------------------------------------------------------ 4. two of three down

  @Test
  @Order(4)
  void withTwoOfThreeNodesDownAcksAllIsNotAcknowledgedAndEarlierRecordsSurvive() throws Exception {
    String topic = "minority";
    Ledger ledger = new Ledger();
    {
      TributaryClient client = connect();
      Admin admin = closeLater(client.admin());
      awaitTopicInSync(admin, topic);
      ChaosProducer before = closeLater(new ChaosProducer(client, topic, 0, ledger, DURABLE, 0, 200));
      before.start();
      await("1000 records acknowledged", FAILOVER_BOUND, () -> before.acknowledged() >= 1000, this::diagnostics);
      before.stopSending();
      assertTrue(before.awaitAnswers(Duration.ofMinutes(2)), "every send answered");
      assertEquals(before.sent(), before.acknowledged(), "every send acknowledged on a healthy cluster: "
          + ledger.result().details());
    }
    // The producer runs before the kill, so it knows the partitions' leaders and send() does not block on metadata;
    // every send made after both nodes are gone must stay unacknowledged.
    TributaryClient client = connect();
    ChaosProducer during = closeLater(new ChaosProducer(client, topic, 1, ledger, IMPATIENT, 20, 100));
    during.start();
    await("the second producer is acknowledged", FAILOVER_BOUND, () -> during.acknowledged() >= 10, this::diagnostics);
    long killed = System.nanoTime();
    cluster.killAll(List.of(2, 3));
    long firstAfterKill = during.sent();
    await("20 sends made while two nodes are down", Duration.ofMinutes(2), () -> during.sent() >= firstAfterKill + 20,
        this::diagnostics);
    during.stopSending();
    assertTrue(during.awaitAnswers(Duration.ofMinutes(1)), "every send answered (failed) within its delivery timeout");
    Ledger.Result mid = ledger.result();
    assertTrue(during.highestAcknowledged() < firstAfterKill, "a send made with 2 of 3 nodes down was acknowledged"
        + " (sequence " + during.highestAcknowledged() + ", first after the kill " + firstAfterKill + "): "
        + mid.details());
    boolean downedItself = cluster.awaitExit(1, Duration.ofSeconds(30));
    long survivorGone = System.nanoTime();

    closeClients();
    cluster.stopAll(STOP_BOUND);
    long t0 = System.nanoTime();
    cluster.start(List.of(1, 2, 3), START_BOUND);
    long restarted = System.nanoTime();
    TributaryClient after = connect();
    Admin admin = closeLater(after.admin());
    long isr = awaitFullyInSync(admin, topic, PARTITIONS, ISR_BOUND, this::diagnostics);
    Ledger.Result result = readBack(after, topic, ledger);
    System.out.printf("ReplicationFailoverIT two of three down: %d sends, none acknowledged (failures %s); the lone"
            + " survivor %s (%d ms after the kill); all three restarted in %d ms, in sync %d ms later; %s%n",
        during.sent() - firstAfterKill, mid.failures(), downedItself ? "downed itself and exited" : "still ran after 30 s (killed)",
        ms(survivorGone - killed), ms(restarted - t0), isr, result.details());
  }

  // ------------------------------------------------------------------ 5. all down at once

  @Test
  @Order(5)
  void allNodesKilledAtOnceAndRestartedLoseNothingAcknowledged() throws Exception {
    String topic = "blackout";
    Ledger ledger = new Ledger();
    TributaryClient client = connect();
    Admin admin = closeLater(client.admin());
    awaitTopicInSync(admin, topic);
    ChaosProducer producer = closeLater(new ChaosProducer(client, topic, 0, ledger, IMPATIENT, 500, 500));
    producer.start();
    await("1000 records acknowledged", FAILOVER_BOUND, () -> producer.acknowledged() >= 1000, this::diagnostics);
    long killed = System.nanoTime();
    cluster.killAll(List.of(1, 2, 3));
    producer.stopSending();
    assertTrue(producer.awaitAnswers(Duration.ofMinutes(1)), "every send answered within its delivery timeout");
    long acknowledged = producer.acknowledged();
    closeClients();

    long t0 = System.nanoTime();
    cluster.start(List.of(1, 2, 3), START_BOUND);
    long restarted = System.nanoTime();
    TributaryClient after = connect();
    Admin admin2 = closeLater(after.admin());
    long isr = awaitFullyInSync(admin2, topic, PARTITIONS, ISR_BOUND, this::diagnostics);
    ChaosProducer again = closeLater(new ChaosProducer(after, topic, 1, ledger, DURABLE, 0, 200));
    again.start();
    await("produce acknowledged again after the restart", FAILOVER_BOUND, () -> again.acknowledged() >= 200,
        this::diagnostics);
    again.stopSending();
    assertTrue(again.awaitAnswers(Duration.ofMinutes(2)), "every send answered");
    Ledger.Result result = readBack(after, topic, ledger);
    System.out.printf("ReplicationFailoverIT all down: %d acknowledged before the SIGKILL of all three; restarted in"
            + " %d ms (%d ms after the kill), in sync %d ms later; %s%n",
        acknowledged, ms(restarted - t0), ms(restarted - killed), isr, result.details());
  }

  // ------------------------------------------------------------------ checks

  /**
   * Reads the whole topic from the beginning and checks the ledger: every acknowledged record once, at its
   * acknowledged offset, in send order per partition, no offset with two values.
   */
  private Ledger.Result readBack(TributaryClient client, String topic, Ledger ledger) {
    String missing = ChaosConsumer.readAll(client, topic, PARTITIONS, ledger.reader("read-back"), READ_BOUND);
    Ledger.Result result = ledger.result();
    assertEquals(null, missing, "read back to the end offsets\n" + result.details() + diagnostics());
    assertTrue(result.acknowledged() > 0, "something was acknowledged\n" + result.details());
    assertEquals(0, result.lost(), "acknowledged records lost\n" + result.details());
    assertEquals(0, result.duplicated(), "records read at two offsets\n" + result.details());
    assertEquals(0, result.reordered(), "records out of send order\n" + result.details());
    assertTrue(result.ok(), "no anomaly (divergent offsets, misplaced records, gaps)\n" + result.details());
    return result;
  }

  private String diagnostics() {
    return "\n" + cluster.diagnostics(25);
  }
}
