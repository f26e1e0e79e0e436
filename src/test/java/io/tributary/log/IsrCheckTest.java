package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.AskPattern;
import akka.cluster.Member;
import akka.cluster.MemberStatus;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.broker.TestNodes;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The partition leader's ISR check ({@code PartitionLeader.onIsrCheck}, run by the timer that {@code syncIsrCheck}
 * keeps), on brokers in one JVM (each its own ActorSystem on 127.0.0.1, a free port and its own data dir), with
 * {@code replica.lag.time.max.ms} at 2000:
 *
 * <ul>
 *   <li>A follower of an rf=3 partition that stops fetching while its node stays an Up, reachable cluster member
 *       leaves that partition's ISR once the leader's log end has moved past it, and the partition keeps answering
 *       acks=all writes with {@code min.insync.replicas=2}: the write that was waiting for the stopped follower is
 *       answered once the ISR has shrunk, later ones at once.
 *   <li>The check's timer runs only on a leader with other replicas in its ISR: not for a partition of replication
 *       factor 1, on for one of replication factor 2, and off again once that ISR has shrunk to the leader alone.
 * </ul>
 *
 * <p>How the follower stops fetching: the test stops that follower's replica actor of the one partition (a {@code
 * PoisonPill} to {@code /system/tributary-replicas/<topic>-<partition>} on the follower's node), which is the actor
 * whose fetch loop sends {@code ReplicaFetch} to the leader. Nothing else on that node changes: its replica manager,
 * its replicas of the other partitions (which keep fetching) and its cluster membership go on, so the controller has
 * no reason to act (it drops a replica from ISRs only when the node becomes unreachable, leaves or shuts down in a
 * controlled way). The only way the ISR can shrink is the leader's own {@code AlterIsr} proposal from the ISR check.
 * The test asserts this: the follower's node is still an Up, reachable member in the leader's and the controller's
 * view, it is still in the ISR of the other partitions, and the leader epoch did not change. Blackholing Artery
 * between the two nodes was not used: it drops the cluster heartbeats too, the node becomes unreachable, and then the
 * controller removes it from every ISR, which is not the check under test.
 *
 * <p>Whether the timer runs is asked of the leader replica with the package-private {@code
 * PartitionLeader.IsrCheckScheduled} query, sent straight to the replica that {@link LocalLeaders} lists.
 */
class IsrCheckTest {
  private final List<BrokerNode> nodes = new ArrayList<>();

  /** Closes the nodes, the first (the controller) last, so that the others' controlled shutdowns find it running. */
  @AfterEach
  void stop() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  /** Starts {@code size} nodes: the first, then the others joining it at once. */
  private void startCluster(int size) {
    Map<String, Object> o = new HashMap<>();
    o.put("tributary.broker.replica.lag.time.max.ms", 2000);
    o.put("tributary.broker.offsets.topic.num.partitions", 1);
    nodes.add(TestNodes.start(TestNodes.tempDataDir(), o));
    o.put("akka.cluster.seed-nodes", List.of(nodes.get(0).system().address().toString()));
    List<CompletableFuture<BrokerNode>> joining = new ArrayList<>();
    for (int i = 1; i < size; i++) {
      joining.add(CompletableFuture.supplyAsync(() -> TestNodes.start(TestNodes.tempDataDir(), o)));
    }
    RuntimeException failed = null;
    for (CompletableFuture<BrokerNode> j : joining) {
      try {
        nodes.add(j.join()); // every node that started is closed after the test, even if another failed
      } catch (RuntimeException e) {
        failed = e;
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  private static void await(String what, BooleanSupplier condition) {
    io.tributary.testing.Await.await(what, condition);
  }

  private BrokerNode node(String address) {
    for (BrokerNode n : nodes) {
      if (n.system().address().toString().equals(address)) {
        return n;
      }
    }
    throw new AssertionError("no node at " + address);
  }

  private static String address(BrokerNode n) {
    return n.system().address().toString();
  }

  /** Creates {@code topic}, retrying while the controller does not see enough nodes yet. */
  private static void create(Gw gw, String topic, int partitions, int rf, String minInsync) {
    AdminResponse[] created = new AdminResponse[1];
    await("topic " + topic + " created", () -> {
      created[0] = gw.ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, topic, partitions, (short) rf,
          Map.of("min.insync.replicas", minInsync), r));
      return created[0].error() != ErrorCode.INVALID_REPLICATION_FACTOR;
    });
    assertEquals(ErrorCode.NONE, created[0].error(), created[0].errorMessage());
  }

  private static PartitionDescription describe(BrokerNode via, String topic, int partition) {
    AdminResponse r = new Gw(via).ask(rt -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(topic),
        rt));
    assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
    return r.topics().get(0).partitions().get(partition);
  }

  private static CompletableFuture<ProduceResponse> produce(BrokerNode via, String topic, int partition, short acks,
      String prefix) {
    return new Gw(via).<ProduceResponse>askAsync(r -> new ProduceRequest(ProtocolVersions.CURRENT, topic, partition,
        acks, 30000, Gw.batch(prefix, 10, 1000L), r)).toCompletableFuture();
  }

  /** Produces one batch of 10 records, retried while the answer is retriable (leaders still being published). */
  private static void produceRetrying(BrokerNode via, String topic, int partition, short acks, String prefix) {
    ProduceResponse[] r = new ProduceResponse[1];
    await("produce to " + topic + "-" + partition, () -> {
      r[0] = produce(via, topic, partition, acks, prefix).join();
      return r[0].error() == ErrorCode.NONE || !r[0].error().retriable();
    });
    assertEquals(ErrorCode.NONE, r[0].error(), r[0].errorMessage());
  }

  /** The leader replica of {@code topic-partition} on {@code leader}, once that node lists it as a local leader. */
  private static ActorRef<PartitionLeader.Command> leaderReplica(BrokerNode leader, String topic, int partition) {
    await(address(leader) + " lists itself as the leader of " + topic + "-" + partition,
        () -> LocalLeaders.get(leader.system()).leader(topic, partition) != null);
    return LocalLeaders.get(leader.system()).leader(topic, partition);
  }

  /** Whether the replica's ISR check timer is active. */
  private static boolean isrCheckScheduled(BrokerNode on, ActorRef<PartitionLeader.Command> replica) {
    return AskPattern.<PartitionLeader.Command, Boolean>ask(replica, PartitionLeader.IsrCheckScheduled::new, Gw.T,
        on.system().scheduler()).toCompletableFuture().join();
  }

  /**
   * Stops the replica actor of {@code topic-partition} on {@code on} (its follower fetch loop with it) and waits until
   * it is gone; the node and its other replicas keep running.
   */
  private static void stopReplica(BrokerNode on, String topic, int partition) {
    String path = "/system/" + ReplicaManager.MANAGER_NAME + "/" + PartitionLeader.entityId(topic, partition);
    akka.actor.ActorSelection replica = on.system().classicSystem().actorSelection(path);
    replica.resolveOne(Gw.T).toCompletableFuture().join(); // fails if no replica runs there
    replica.tell(akka.actor.PoisonPill.getInstance(), akka.actor.ActorRef.noSender());
    await("the replica at " + path + " stopped", () -> replica.resolveOne(Gw.T).handle((ref, e) -> e != null)
        .toCompletableFuture().join());
  }

  /** Whether {@code viewer}'s cluster state has the node at {@code address} as an Up, reachable member. */
  private static boolean upAndReachable(BrokerNode viewer, String address) {
    akka.cluster.ClusterEvent.CurrentClusterState state = akka.cluster.typed.Cluster.get(viewer.system()).state();
    for (Member m : state.getMembers()) {
      if (m.address().toString().equals(address)) {
        return m.status() == MemberStatus.up() && !state.getUnreachable().contains(m);
      }
    }
    return false;
  }

  @Test
  void aFollowerThatStopsFetchingLeavesTheIsrAndAcksAllWritesGoOn() {
    startCluster(3);
    BrokerNode n0 = nodes.get(0); // runs the controller (the oldest node)
    create(new Gw(n0), "ic", 3, 3, "2");
    await("every partition of ic with three in-sync replicas", () -> {
      for (int p = 0; p < 3; p++) {
        if (describe(n0, "ic", p).isr().size() != 3) {
          return false;
        }
      }
      return true;
    });
    PartitionDescription before = describe(n0, "ic", 0);
    BrokerNode leader = node(before.leader());
    String stopped = before.replicas().get(2); // a follower: the leader is the first replica
    String other = before.replicas().get(1);
    assertTrue(!stopped.equals(before.leader()) && !other.equals(before.leader()), before.toString());
    ActorRef<PartitionLeader.Command> replica = leaderReplica(leader, "ic", 0);
    // acks=all: answered once every in-sync replica has the batch, so the follower to stop holds offsets 0..49
    for (int i = 0; i < 5; i++) {
      produceRetrying(n0, "ic", 0, (short) -1, "a" + i + "-");
    }
    await("the leader runs the ISR check", () -> isrCheckScheduled(leader, replica));

    stopReplica(node(stopped), "ic", 0);
    // the leader's log end moves past the stopped follower: this acks=all write waits for it until the ISR shrinks
    CompletableFuture<ProduceResponse> waiting = produce(n0, "ic", 0, (short) -1, "b-");
    await("the stopped follower out of the ISR of ic-0", () -> describe(n0, "ic", 0).isr().size() == 2);
    PartitionDescription after = describe(n0, "ic", 0);
    assertEquals(java.util.Set.of(before.leader(), other), java.util.Set.copyOf(after.isr()));
    assertEquals(before.replicas(), after.replicas(), "still a replica, out of sync");
    assertEquals(before.leader(), after.leader());
    assertEquals(before.leaderEpoch(), after.leaderEpoch(), "no leader election: the leader shrank its own ISR");
    ProduceResponse answered = waiting.join();
    assertEquals(ErrorCode.NONE, answered.error(), answered.errorMessage());
    assertEquals(50L, answered.baseOffset());

    // it was the leader's ISR check: the follower's node is an Up, reachable member for the leader and the controller,
    // and it stays in sync for the partitions whose replicas still fetch on it
    assertTrue(upAndReachable(leader, stopped), stopped + " Up and reachable for the leader");
    assertTrue(upAndReachable(n0, stopped), stopped + " Up and reachable for the controller");
    for (int p = 1; p < 3; p++) {
      assertEquals(3, describe(n0, "ic", p).isr().size(), "ISR of ic-" + p);
    }

    // acks=all writes go on with two in-sync replicas (min.insync.replicas=2), answered with the high watermark there
    ProduceResponse next = produce(n0, "ic", 0, (short) -1, "c-").join();
    assertEquals(ErrorCode.NONE, next.error(), next.errorMessage());
    assertEquals(60L, next.baseOffset());
    PartitionLeader.PartitionStatus status = new Gw(leader).status("ic", 0);
    assertEquals(70L, status.logEndOffset());
    assertEquals(70L, status.highWatermark());
    // two replicas in sync: the leader keeps checking
    assertTrue(isrCheckScheduled(leader, replica));
  }

  @Test
  void theIsrCheckRunsOnlyWhileTheIsrHasOtherReplicasThanTheLeader() {
    startCluster(2);
    BrokerNode n0 = nodes.get(0);
    Gw gw = new Gw(n0);

    // replication factor 1: the ISR is the leader alone, no timer
    create(gw, "solo", 1, 1, "1");
    produceRetrying(n0, "solo", 0, (short) 1, "s-"); // the replica leads (its role is applied)
    BrokerNode soloLeader = node(describe(n0, "solo", 0).leader());
    ActorRef<PartitionLeader.Command> solo = leaderReplica(soloLeader, "solo", 0);
    assertFalse(isrCheckScheduled(soloLeader, solo), "no ISR check for an ISR of the leader alone");

    // replication factor 2: the timer runs while the follower is in the ISR
    create(gw, "pair", 1, 2, "1");
    await("both replicas of pair-0 in sync", () -> describe(n0, "pair", 0).isr().size() == 2);
    PartitionDescription pair = describe(n0, "pair", 0);
    BrokerNode pairLeader = node(pair.leader());
    ActorRef<PartitionLeader.Command> leading = leaderReplica(pairLeader, "pair", 0);
    await("the ISR check runs with two in-sync replicas", () -> isrCheckScheduled(pairLeader, leading));

    // the follower stops fetching and leaves the ISR: the leader alone again, the timer stops
    String follower = pair.replicas().get(0).equals(pair.leader()) ? pair.replicas().get(1) : pair.replicas().get(0);
    stopReplica(node(follower), "pair", 0);
    produceRetrying(n0, "pair", 0, (short) 1, "p-");
    await("pair-0's ISR shrunk to its leader", () -> describe(n0, "pair", 0).isr().equals(List.of(pair.leader())));
    await("the ISR check stops with the leader alone in the ISR", () -> !isrCheckScheduled(pairLeader, leading));
    assertTrue(upAndReachable(pairLeader, follower), follower + " Up and reachable for the leader");
  }
}
