package io.tributary.log;

import static io.tributary.log.TestCluster.address;
import static io.tributary.log.TestCluster.await;
import static io.tributary.log.TestCluster.create;
import static io.tributary.log.TestCluster.describeTopic;
import static io.tributary.log.TestCluster.follower;
import static io.tributary.log.TestCluster.leaderReplica;
import static io.tributary.log.TestCluster.produceRetrying;
import static io.tributary.log.TestCluster.resolves;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorRef;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicDescription;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Partition leaders as Cluster Sharding entities ({@link LeaderSharding}) and followers as actors of their own
 * ({@link PartitionFollower}), on three brokers in this JVM: the leader is the entity of its partition and epoch on
 * the node the controller elected, and no follower runs there; an election is a new entity on the newly elected node,
 * whose follower stopped first; a leader entity of an epoch that is over, started through another node's shard
 * region, refuses to serve and leaves that node's follower and log alone.
 */
class LeaderShardingTest {

  @Test
  void entityIdsNamePartitionEpochAndTopicId() {
    String topicId = UUID.randomUUID().toString();
    String id = LeaderSharding.entityId("my.topic-v2", 12, 7, topicId);
    assertEquals(new LeaderSharding.LeaderId("my.topic-v2", 12, 7, topicId), LeaderSharding.LeaderId.parse(id));
    assertEquals("my.topic-v2-12", LeaderSharding.LeaderId.parse(id).partitionId());
    assertNull(LeaderSharding.LeaderId.parse("my.topic-v2-12"));
    assertNull(LeaderSharding.LeaderId.parse("t-x@1@" + topicId));
    assertNull(LeaderSharding.LeaderId.parse("t-0@one@" + topicId));
    assertNull(LeaderSharding.LeaderId.parse("t@1@" + topicId));
  }

  @Test
  void leadersAreShardedEntitiesOfTheirEpochOnTheElectedNodeAndFollowersActorsOfTheirOwn() {
    try (TestCluster c = TestCluster.start(3)) {
      BrokerNode n0 = c.nodes.get(0);
      create(new Gw(n0), "sh", 1, 3, "2");
      await("sh-0 with three in-sync replicas", () -> TestCluster.describe(n0, "sh", 0).isr().size() == 3);
      TopicDescription t = describeTopic(n0, "sh");
      PartitionDescription p = t.partitions().get(0);
      BrokerNode leader = c.node(p.leader());
      assertLeaderEntity(leader, t.topicId(), p);
      for (String r : p.replicas()) {
        if (!r.equals(p.leader())) {
          // a new partition's ISR is every replica from its creation on (as Kafka's), before the replica managers
          // have started its followers: wait for the actor (one run under load asked before it started)
          await("a follower actor on " + r, () -> resolves(follower(c.node(r), "sh", 0)));
        }
      }
      for (int i = 0; i < 5; i++) {
        produceRetrying(n0, "sh", 0, (short) -1, "a" + i + "-");
      }

      // the leader's node leaves (controlled shutdown): the controller elects another in-sync replica in a new epoch,
      // whose node stops its follower and starts the new epoch's entity
      String leaving = p.leader();
      c.nodes.set(c.nodes.indexOf(leader), null);
      leader.close();
      BrokerNode via = c.nodes.stream().filter(n -> n != null).findFirst().orElseThrow();
      await("sh-0 led by another node in a newer epoch", () -> {
        PartitionDescription q = TestCluster.describe(via, "sh", 0);
        return !q.leader().isEmpty() && !q.leader().equals(leaving) && q.leaderEpoch() > p.leaderEpoch();
      });
      PartitionDescription p1 = TestCluster.describe(via, "sh", 0);
      BrokerNode leader1 = c.node(p1.leader());
      assertLeaderEntity(leader1, t.topicId(), p1);
      for (int i = 0; i < 5; i++) {
        produceRetrying(via, "sh", 0, (short) -1, "b" + i + "-");
      }

      // the entity of the epoch that is over, started through the third node's region, refuses without touching the
      // follower there
      BrokerNode third = c.nodes.stream().filter(n -> n != null && n != leader1).findFirst().orElseThrow();
      akka.actor.ActorRef followerRef = follower(third, "sh", 0).resolveOne(Gw.T).toCompletableFuture().join();
      String stale = LeaderSharding.entityId("sh", 0, p.leaderEpoch(), t.topicId());
      // asked again while unanswered: until the coordinator has taken the left node's region out, the old shard's
      // home can still be that region, and a message sent there is lost (clients retry the same way)
      ListOffsetsResponse refused = null;
      long deadline = System.nanoTime() + Gw.T.toNanos();
      while (refused == null) {
        try {
          refused = ClusterSharding.get(third.system()).entityRefFor(LeaderSharding.KEY, stale)
              .<ListOffsetsResponse>ask(replyTo -> new PartitionLeader.ListOffsets(new ListOffsetsRequest(
                  ProtocolVersions.CURRENT, "sh", 0, ListOffsetsRequest.LATEST_TIMESTAMP, replyTo)),
                  java.time.Duration.ofSeconds(3))
              .toCompletableFuture().join();
        } catch (java.util.concurrent.CompletionException e) {
          assertTrue(e.getCause() instanceof java.util.concurrent.TimeoutException
              && System.nanoTime() < deadline, "the stale entity answers within " + Gw.T + ": " + e);
        }
      }
      assertEquals(ErrorCode.NOT_LEADER_OR_FOLLOWER, refused.error(), refused.errorMessage());
      assertEquals(followerRef, follower(third, "sh", 0).resolveOne(Gw.T).toCompletableFuture().join(),
          "the follower on " + address(third) + " still runs");
      await("the follower on the third node has all 100 records",
          () -> new Gw(leader1).status("sh", 0).highWatermark() == 100
              && statusOn(via, third).logEndOffset() == 100);
    }
  }

  /** The status of the replica of sh-0 on {@code on}, asked through {@code via}'s router. */
  private static PartitionLeader.PartitionStatus statusOn(BrokerNode via, BrokerNode on) {
    return akka.actor.typed.javadsl.AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionStatus>ask(
            via.tributary().partitions(), r -> new ReplicaManager.ToReplica(address(on),
                new PartitionLeader.GetStatus("sh", 0, r)), Gw.T, via.system().scheduler())
        .toCompletableFuture().join();
  }

  /** The node's local leader of sh-0 is the sharding entity of {@code p}'s epoch, and no follower runs there. */
  private static void assertLeaderEntity(BrokerNode leader, String topicId, PartitionDescription p) {
    String expected = LeaderSharding.entityId("sh", 0, p.leaderEpoch(), topicId);
    await(address(leader) + " leads sh-0 with the entity of epoch " + p.leaderEpoch(), () -> {
      ActorRef<PartitionLeader.Command> ref = LocalLeaders.get(leader.system()).leader("sh", 0);
      return ref != null && URLDecoder.decode(ref.path().name(), StandardCharsets.UTF_8).equals(expected);
    });
    ActorRef<PartitionLeader.Command> entity = leaderReplica(leader, "sh", 0);
    assertTrue(entity.path().toStringWithoutAddress().startsWith("/system/sharding/partition-leader/"),
        entity.path().toString());
    assertFalse(resolves(follower(leader, "sh", 0)), "no follower actor on the leader's node");
  }
}
