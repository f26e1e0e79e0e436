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
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.ProduceResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import static io.tributary.log.TestCluster.await;
import static io.tributary.log.TestCluster.create;
import static io.tributary.log.TestCluster.describe;
import static io.tributary.log.TestCluster.produce;
import static io.tributary.log.TestCluster.produceRetrying;
import static io.tributary.log.TestCluster.leaderReplica;

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
 * <p>How the follower stops fetching: the test pauses that follower's actor of the one partition (the package-private
 * {@code PartitionFollower.PauseFetching} to {@code /system/tributary-replicas/<topic>-<partition>} on the follower's
 * node), the actor whose fetch loop sends {@code ReplicaFetch} to the leader; stopping the actor would not do, as its
 * node's replica manager starts a follower that stopped again. Nothing else on that node changes: its replica manager,
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
  private TestCluster cluster;
  private List<BrokerNode> nodes;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void startCluster(int size) {
    cluster = TestCluster.start(size);
    nodes = cluster.nodes;
  }

  private BrokerNode node(String address) {
    return cluster.node(address);
  }

  /** Whether the replica's ISR check timer is active. */
  private static boolean isrCheckScheduled(BrokerNode on, ActorRef<PartitionLeader.Command> replica) {
    return AskPattern.<PartitionLeader.Command, Boolean>ask(replica, PartitionLeader.IsrCheckScheduled::new, Gw.T,
        on.system().scheduler()).toCompletableFuture().join();
  }

  /**
   * Makes the follower of {@code topic-partition} on {@code on} stop fetching (a stuck fetcher: the actor keeps
   * running); the node and its other replicas keep running.
   */
  private static void stopFetching(BrokerNode on, String topic, int partition) {
    akka.actor.ActorSelection replica = TestCluster.follower(on, topic, partition);
    replica.resolveOne(Gw.T).toCompletableFuture().join(); // fails if no follower runs there
    replica.tell(new PartitionFollower.PauseFetching(true), akka.actor.ActorRef.noSender());
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

    stopFetching(node(stopped), "ic", 0);
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
    stopFetching(node(follower), "pair", 0);
    produceRetrying(n0, "pair", 0, (short) 1, "p-");
    await("pair-0's ISR shrunk to its leader", () -> describe(n0, "pair", 0).isr().equals(List.of(pair.leader())));
    await("the ISR check stops with the leader alone in the ISR", () -> !isrCheckScheduled(pairLeader, leading));
    assertTrue(upAndReachable(pairLeader, follower), follower + " Up and reachable for the leader");
  }
}
