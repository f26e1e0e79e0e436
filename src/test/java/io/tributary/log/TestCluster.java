package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.typed.ActorRef;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicDescription;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * Broker nodes of one cluster in this JVM for the replication tests of this package, run by the public test kit
 * ({@link io.tributary.testkit.TributaryTestCluster}; each its own ActorSystem on
 * 127.0.0.1, a free port and its own data dir), with {@code replica.lag.time.max.ms} at 2000 and one offsets-topic
 * partition, and the requests those tests make through a node's gateway. Closing closes the nodes, the first (the
 * controller, the oldest node) last, so that the others' controlled shutdowns find it running.
 */
final class TestCluster implements AutoCloseable {
  final List<BrokerNode> nodes = new ArrayList<>();

  /** The public test kit that runs the nodes (and deletes their directories at the end). */
  private io.tributary.testkit.TributaryTestCluster kit;

  /**
   * Starts {@code size} nodes with the public test kit ({@link io.tributary.testkit.TributaryTestCluster}): the
   * first, then the others joining it at once; every message serialized, as {@code TestNodes} does.
   */
  static TestCluster start(int size) {
    TestCluster c = new TestCluster();
    Map<String, Object> o = new HashMap<>();
    o.put("tributary.broker.replica.lag.time.max.ms", 2000);
    o.put("tributary.broker.offsets.topic.num.partitions", 1);
    o.put("akka.actor.serialize-messages", "on");
    o.put("akka.loglevel", "WARNING");
    c.kit = io.tributary.testkit.TributaryTestCluster.start(size, o);
    for (int i = 0; i < size; i++) {
      c.nodes.add(c.kit.node(i));
    }
    return c;
  }

  @Override
  public void close() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      if (nodes.get(i) != null) {
        nodes.get(i).close();
      }
    }
    if (kit != null) {
      kit.close();
    }
  }

  /** The running node at cluster address {@code address}. */
  BrokerNode node(String address) {
    for (BrokerNode n : nodes) {
      if (n != null && address(n).equals(address)) {
        return n;
      }
    }
    throw new AssertionError("no node at " + address);
  }

  static String address(BrokerNode n) {
    return n.system().address().toString();
  }

  static void await(String what, BooleanSupplier condition) {
    io.tributary.testing.Await.await(what, condition);
  }

  /** Creates {@code topic}, retrying while the controller does not see enough nodes yet. */
  static void create(Gw gw, String topic, int partitions, int rf, String minInsync) {
    AdminResponse[] created = new AdminResponse[1];
    await("topic " + topic + " created", () -> {
      created[0] = gw.ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, topic, partitions, (short) rf,
          Map.of("min.insync.replicas", minInsync), r));
      return created[0].error() != ErrorCode.INVALID_REPLICATION_FACTOR;
    });
    assertEquals(ErrorCode.NONE, created[0].error(), created[0].errorMessage());
  }

  static TopicDescription describeTopic(BrokerNode via, String topic) {
    AdminResponse r = new Gw(via).ask(rt -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(topic),
        rt));
    assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
    return r.topics().get(0);
  }

  static io.tributary.protocol.PartitionDescription describe(BrokerNode via, String topic, int partition) {
    return describeTopic(via, topic).partitions().get(partition);
  }

  static CompletableFuture<ProduceResponse> produce(BrokerNode via, String topic, int partition, short acks,
      String prefix) {
    return new Gw(via).<ProduceResponse>askAsync(r -> new ProduceRequest(ProtocolVersions.CURRENT, topic, partition,
        acks, 30000, Gw.batch(prefix, 10, 1000L), r)).toCompletableFuture();
  }

  /** Produces one batch of 10 records, retried while the answer is retriable (leaders still being published). */
  static void produceRetrying(BrokerNode via, String topic, int partition, short acks, String prefix) {
    ProduceResponse[] r = new ProduceResponse[1];
    await("produce to " + topic + "-" + partition, () -> {
      r[0] = produce(via, topic, partition, acks, prefix).join();
      return r[0].error() == ErrorCode.NONE || !r[0].error().retriable();
    });
    assertEquals(ErrorCode.NONE, r[0].error(), r[0].errorMessage());
  }

  /** The leader entity of {@code topic-partition} on {@code leader}, once that node lists it as a local leader. */
  static ActorRef<PartitionLeader.Command> leaderReplica(BrokerNode leader, String topic, int partition) {
    await(address(leader) + " lists itself as the leader of " + topic + "-" + partition,
        () -> LocalLeaders.get(leader.system()).leader(topic, partition) != null);
    return LocalLeaders.get(leader.system()).leader(topic, partition);
  }

  /** The follower actor of {@code topic-partition} on {@code on}, as a selection (resolves only while it runs). */
  static akka.actor.ActorSelection follower(BrokerNode on, String topic, int partition) {
    return on.system().classicSystem().actorSelection(
        "/system/" + ReplicaManager.MANAGER_NAME + "/" + PartitionLeader.entityId(topic, partition));
  }

  /** Whether a selection resolves to a running actor now. */
  static boolean resolves(akka.actor.ActorSelection s) {
    return s.resolveOne(Gw.T).handle((ref, e) -> e == null).toCompletableFuture().join();
  }
}
