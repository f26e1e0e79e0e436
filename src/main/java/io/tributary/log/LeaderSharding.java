package io.tributary.log;

import akka.actor.AbstractExtensionId;
import akka.actor.ExtendedActorSystem;
import akka.actor.Extension;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Adapter;
import akka.cluster.sharding.ShardCoordinator;
import akka.cluster.sharding.typed.ClusterShardingSettings;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.sharding.typed.ShardingMessageExtractor;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.Entity;
import akka.cluster.sharding.typed.javadsl.EntityTypeKey;
import akka.dispatch.Futures;
import io.tributary.cluster.PartitionMetadata;
import io.tributary.cluster.TopicMetadata;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Future;
import scala.concurrent.Promise;

/**
 * Partition leaders as Cluster Sharding entities, placed where the controller elected them.
 *
 * <p><b>One entity per leadership.</b> The entity id (and shard id: one entity per shard) names the partition, the
 * leader epoch and the topic id: {@code topic-N@epoch@topicId} ({@link #entityId}). An election (the controller bumps
 * the leader epoch at every leader change) is therefore a new shard, which the coordinator allocates on the elected
 * node at its first message, and the end of the old entity, which steps down when its node's metadata shows the new
 * epoch (a hand-off of the partition's leadership from one entity to the next). Why not one entity per partition
 * moved by Akka's hand-off: measured on this machine (docs/sharded-partition-leaders.md), the coordinator does not move
 * a shard off a node that is unreachable until that node is removed from the cluster, and a hand-off started while
 * its old node is unreachable stalls until {@code handoff-timeout} (60 s): failover would wait for the Split Brain
 * Resolver (~15 s) or stall for a minute, where Tributary moves leaderships ~5 s after a node becomes unreachable.
 * A new shard needs no hand-off and nothing from the old node. The epoch in the id also fences: an entity
 * started for an epoch that is not its node's current leadership refuses to serve.
 *
 * <p><b>Placement</b> ({@link LeaderAllocation}): the coordinator (a singleton on the oldest broker node) allocates a
 * shard to the region of the node that the metadata names as the leader in that epoch, waiting (up to the ask
 * timeout, looking every 20 ms) for its node's metadata to reach the epoch; sharding never chooses a node itself and never rebalances a
 * current leader. Shards of epochs that are over (and of deleted topics) are handed off by the periodic rebalance, so
 * the coordinator's state does not grow with elections; a shard on a node that is unreachable is left until the node
 * is removed.
 *
 * <p><b>The metadata view</b> the allocation reads is the node's router's ({@link #publish}, from Distributed Data and
 * the controller's pushes). Thread-safe: an immutable map swapped by the router, read by the coordinator.
 */
public final class LeaderSharding implements Extension {

  /** The entity type of partition leaders. */
  public static final EntityTypeKey<PartitionLeader.Command> KEY =
      EntityTypeKey.create(PartitionLeader.Command.class, "partition-leader");

  /** The extension's id. */
  public static final Id ID = new Id();

  private volatile Map<String, TopicMetadata> topics = Map.of();
  private volatile boolean confirmed;
  /** The high watermark each stopped replica of this node knew, by {@link #handOverKey}. */
  private final java.util.concurrent.ConcurrentHashMap<String, Long> highWatermarks =
      new java.util.concurrent.ConcurrentHashMap<>();

  private LeaderSharding() {}

  /** The extension of {@code system}. */
  public static LeaderSharding get(ActorSystem<?> system) {
    return ID.get(Adapter.toClassic(system));
  }

  /** The entity id of the leader of {@code topic}-{@code partition} in {@code leaderEpoch} of topic {@code topicId}. */
  public static String entityId(String topic, int partition, int leaderEpoch, String topicId) {
    return topic + "-" + partition + "@" + leaderEpoch + "@" + topicId;
  }

  /**
   * The parts of an entity id ({@link #entityId}).
   *
   * @param topic topic name (topic names never hold {@code @})
   * @param partition partition number
   * @param leaderEpoch the leadership's epoch
   * @param topicId the topic's id (a re-created topic of the same name has another)
   */
  public record LeaderId(String topic, int partition, int leaderEpoch, String topicId) {
    /** Parses {@code id}; null if it is not an entity id of {@link #entityId}'s form. */
    public static LeaderId parse(String id) {
      int at = id.indexOf('@');
      int at2 = at < 0 ? -1 : id.indexOf('@', at + 1);
      int dash = at < 0 ? -1 : id.lastIndexOf('-', at);
      if (at2 < 0 || dash <= 0) {
        return null;
      }
      try {
        return new LeaderId(id.substring(0, dash), Integer.parseInt(id.substring(dash + 1, at)),
            Integer.parseInt(id.substring(at + 1, at2)), id.substring(at2 + 1));
      } catch (NumberFormatException e) {
        return null;
      }
    }

    /** {@code topic-N}. */
    public String partitionId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /**
   * Starts the shard region of partition leaders on this node (a proxy only if the node lacks {@code role}).
   *
   * @param role the broker role ("" = every node hosts leaders)
   * @param entity the behavior of one leader entity, given its id
   * @param askTimeout how long an allocation waits for this node's metadata to reach a shard's epoch
   * @return the region: send it {@link ShardingEnvelope}s with {@link #entityId}s
   */
  public static ActorRef<ShardingEnvelope<PartitionLeader.Command>> init(
      ActorSystem<?> system, String role, Function<LeaderId, Behavior<PartitionLeader.Command>> entity,
      Duration askTimeout) {
    LeaderSharding view = get(system);
    ClusterShardingSettings settings = ClusterShardingSettings.create(system);
    ClusterShardingSettings.TuningParameters tuning = settings.tuningParameters()
        // the coordinator's state is written to and read from a majority only: while one node of three is unreachable
        // the others keep allocating (Akka's defaults need every node of clusters of up to 5; see also
        // akka.cluster.sharding.distributed-data.majority-min-cap in the broker's config)
        .withCoordinatorStateWriteMajorityPlus(0)
        .withCoordinatorStateReadMajorityPlus(0)
        // shards whose leadership is over are released every second
        .withRebalanceInterval(Duration.ofSeconds(1))
        // a region whose allocation failed (the elected node's region not registered yet) asks again soon
        .withRetryInterval(Duration.ofMillis(200));
    settings = settings.withTuningParameters(tuning)
        .withPassivationStrategy(ClusterShardingSettings.PassivationStrategySettings$.MODULE$.disabled());
    if (!role.isEmpty()) {
      settings = settings.withRole(role);
    }
    return ClusterSharding.get(system).init(
        Entity.of(KEY, ctx -> {
              LeaderId id = LeaderId.parse(ctx.getEntityId());
              return id == null ? PartitionLeader.refusing(ctx.getEntityId()) : entity.apply(id);
            })
            .withMessageExtractor(new OneEntityPerShard())
            .withStopMessage(PartitionLeader.HandOff.INSTANCE)
            .withAllocationStrategy(new LeaderAllocation(system, view, askTimeout))
            .withSettings(settings));
  }

  /**
   * Replaces the metadata view (the node's router calls it whenever its view changes). {@code confirmed}: the
   * controller has answered this node's sync, so a topic missing from the view is deleted.
   */
  void publish(Map<String, TopicMetadata> view, boolean confirmed) {
    this.topics = Map.copyOf(view);
    this.confirmed = confirmed;
  }

  /** The key of a partition log's hand-over: {@code topicId/topic-N}. */
  static String handOverKey(String topicId, String partitionId) {
    return topicId + "/" + partitionId;
  }

  /**
   * A replica of this node stopped knowing high watermark {@code hw} (it writes the log no more): the next leader
   * entity of the partition on this node starts from it, as a Kafka follower that becomes leader keeps the high
   * watermark it learned, instead of the one of its last snapshot. Any thread.
   */
  void handOverHighWatermark(String key, long hw) {
    highWatermarks.merge(key, hw, Math::max);
  }

  /** Takes the high watermark handed over for {@code key}, or -1. Any thread. */
  long takeHighWatermark(String key) {
    Long hw = highWatermarks.remove(key);
    return hw == null ? -1 : hw;
  }

  /** The partition's metadata in the view, or null. */
  PartitionMetadata partition(LeaderId id) {
    TopicMetadata t = topics.get(id.topic());
    return t == null || !t.topicId().equals(id.topicId()) ? null : t.partition(id.partition());
  }

  /** Whether the shard of {@code id} is a leadership that is over (a newer epoch, or its topic is gone). */
  boolean over(LeaderId id) {
    TopicMetadata t = topics.get(id.topic());
    if (t == null) {
      return confirmed;
    }
    if (!t.topicId().equals(id.topicId()) || t.state() == TopicMetadata.State.DELETING) {
      return true;
    }
    PartitionMetadata p = t.partition(id.partition());
    return p == null || p.leaderEpoch() > id.leaderEpoch();
  }

  /** One shard per entity: the shard id is the entity id, so that the allocation can place each leadership. */
  private static final class OneEntityPerShard
      extends ShardingMessageExtractor<ShardingEnvelope<PartitionLeader.Command>, PartitionLeader.Command> {
    @Override
    public String entityId(ShardingEnvelope<PartitionLeader.Command> envelope) {
      return envelope.entityId();
    }

    @Override
    public String shardId(String entityId) {
      return entityId;
    }

    @Override
    public PartitionLeader.Command unwrapMessage(ShardingEnvelope<PartitionLeader.Command> envelope) {
      return envelope.message();
    }
  }

  /**
   * The allocation strategy: a leadership's shard goes to the region of the node the metadata elected in its epoch.
   * Runs in the shard coordinator (one node); its futures complete on the metadata publisher's or the scheduler's
   * thread.
   */
  static final class LeaderAllocation extends ShardCoordinator.AbstractShardAllocationStrategy {
    /** How often an allocation waiting for the metadata looks again, ms. */
    private static final long RECHECK_MS = 20;

    private final ActorSystem<?> system;
    private final LeaderSharding view;
    private final Duration askTimeout;

    LeaderAllocation(ActorSystem<?> system, LeaderSharding view, Duration askTimeout) {
      this.system = system;
      this.view = view;
      this.askTimeout = askTimeout;
    }

    @Override
    public Future<akka.actor.ActorRef> allocateShard(
        akka.actor.ActorRef requester, String shardId, Map<akka.actor.ActorRef, IndexedSeq<String>> current) {
      LeaderId id = LeaderId.parse(shardId);
      if (id == null) {
        return Futures.successful(requester); // not a leader's id: its entity refuses wherever it runs
      }
      Promise<akka.actor.ActorRef> promise = Futures.promise();
      long deadline = System.nanoTime() + askTimeout.toNanos();
      tryAllocate(id, requester, current, promise, deadline);
      return promise.future();
    }

    private void tryAllocate(LeaderId id, akka.actor.ActorRef requester,
        Map<akka.actor.ActorRef, IndexedSeq<String>> current, Promise<akka.actor.ActorRef> promise, long deadline) {
      if (promise.isCompleted()) {
        return;
      }
      if (view.over(id)) {
        // a leadership that is over: its entity refuses (NOT_LEADER_OR_FOLLOWER) wherever it starts
        promise.trySuccess(requester);
        return;
      }
      PartitionMetadata p = view.partition(id);
      if (p != null && p.leaderEpoch() == id.leaderEpoch() && p.hasLeader()) {
        akka.actor.ActorRef region = regionOf(p.leader(), current);
        if (region != null) {
          promise.trySuccess(region);
        } else {
          // the elected node's region is not registered (yet): the requesting region asks again
          promise.tryFailure(new IllegalStateException("No shard region of partition leaders is registered on "
              + p.leader() + ", elected for " + id.partitionId() + " in epoch " + id.leaderEpoch()));
        }
        return;
      }
      if (System.nanoTime() >= deadline) {
        promise.tryFailure(new IllegalStateException("The metadata of this node did not reach leader epoch "
            + id.leaderEpoch() + " of " + id.partitionId() + " in time"));
        return;
      }
      // this node's metadata has not reached the shard's epoch yet (the controller's push is on its way): look again
      Adapter.toClassic(system).scheduler().scheduleOnce(Duration.ofMillis(RECHECK_MS),
          () -> tryAllocate(id, requester, current, promise, deadline), system.executionContext());
    }

    private akka.actor.ActorRef regionOf(String address, Map<akka.actor.ActorRef, IndexedSeq<String>> current) {
      String self = system.address().toString();
      for (akka.actor.ActorRef region : current.keySet()) {
        akka.actor.Address a = region.path().address();
        String at = a.hasLocalScope() ? self : a.toString();
        if (at.equals(address)) {
          return region;
        }
      }
      return null;
    }

    @Override
    public Future<Set<String>> rebalance(
        Map<akka.actor.ActorRef, IndexedSeq<String>> current, Set<String> rebalanceInProgress) {
      Set<String> release = new HashSet<>();
      akka.cluster.Cluster cluster = akka.cluster.Cluster.get(Adapter.toClassic(system));
      Set<akka.actor.Address> unreachable = new HashSet<>();
      cluster.state().getUnreachable().forEach(m -> unreachable.add(m.address()));
      for (Map.Entry<akka.actor.ActorRef, IndexedSeq<String>> e : current.entrySet()) {
        akka.actor.Address a = e.getKey().path().address();
        if (!a.hasLocalScope() && unreachable.contains(a)) {
          continue; // a hand-off there would wait for handoff-timeout; the node's removal frees its shards
        }
        scala.collection.Iterator<String> it = e.getValue().iterator();
        while (it.hasNext()) {
          String shard = it.next();
          LeaderId id = LeaderId.parse(shard);
          if (!rebalanceInProgress.contains(shard) && (id == null || view.over(id))) {
            release.add(shard);
          }
        }
      }
      return Futures.successful(release);
    }
  }

  /** Creates the extension. */
  public static final class Id extends AbstractExtensionId<LeaderSharding> {
    private Id() {}

    @Override
    public LeaderSharding createExtension(ExtendedActorSystem system) {
      return new LeaderSharding();
    }
  }
}
