package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.receptionist.Receptionist;
import akka.actor.typed.receptionist.ServiceKey;
import akka.cluster.ddata.LWWMap;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.ddata.typed.javadsl.Replicator;
import akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.broker.TopicConfig;
import io.tributary.cluster.ClusterMetadata;
import io.tributary.cluster.Controller;
import io.tributary.cluster.MetadataReplicator;
import io.tributary.cluster.PartitionMetadata;
import io.tributary.cluster.TopicMetadata;
import io.tributary.protocol.CborSerializable;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceResponse;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The partition side of a broker node, as Kafka's ReplicaManager: two actors per node, plus the node's shard region of
 * partition leaders ({@link LeaderSharding}).
 *
 * <ul>
 *   <li>The <b>router</b> ({@link #initRouter}) is what the rest of the node (gateway, controller, group coordinator)
 *       sends {@link PartitionLeader.Command}s to: it looks up the partition's leader and epoch in the replicated
 *       metadata and sends the command through the shard region to the leader entity of that epoch, or answers
 *       UNKNOWN_TOPIC_OR_PARTITION (no such topic) or LEADER_NOT_AVAILABLE (no leader, or its node is not reachable)
 *       itself. Commands it sent to a node that becomes unreachable are answered NOT_LEADER_OR_FOLLOWER at once.
 *       {@link ToReplica} addresses one node's manager instead (the controller's deletes, status of one replica).
 *   <li>The <b>manager</b> ({@link #initManager}) keeps this node's replicas in line with the metadata: a {@link
 *       PartitionFollower} child for each partition another node leads; for each partition this node leads, it wakes
 *       the leader entity of the current epoch through the shard region. It is the authority on who writes a
 *       partition's log on this node: a leader entity serves only once the manager granted its {@link
 *       ClaimLeadership}, which it does only when its metadata names this node the leader in the entity's epoch, and
 *       only after the follower (or an older epoch's entity) of the partition here has stopped. It passes every
 *       metadata change to the running leader entities (ISR changes; a newer epoch or another leader ends one, and its
 *       follower is started once it stopped), and restarts a replica that stopped while the metadata still wants it.
 * </ul>
 *
 * <p>Metadata: both subscribe to the {@link ClusterMetadata#TOPICS} map in Distributed Data (the node's
 * {@link MetadataReplicator}); the controller also pushes every change it writes to every manager
 * ({@link TopicsChanged}), which passes it to its router, so a leader change reaches the nodes without waiting for
 * gossip. Newer versions win. A manager that starts (a node that starts or restarts) grants no leadership until the
 * controller has answered its {@link Controller.SyncTopics} with the current metadata ({@link TopicsSnapshot}): the
 * node's own copy, restored from its durable store, may still name it as the leader it was before it left, and a
 * replica leading on that stale view would acknowledge appends the real leader never gets (as Kafka's brokers, which
 * lead only when the controller says so). Followers start at once.
 *
 * <p>Confinement: each actor's state is touched only on its own thread.
 */
public final class ReplicaManager {
  private ReplicaManager() {}

  /** Managers register under this key; routers find the managers of other nodes through it. */
  public static final ServiceKey<PartitionLeader.Command> MANAGER_KEY =
      ServiceKey.create(PartitionLeader.Command.class, "tributary-replica-manager");

  /** Name of the manager (a system actor). */
  public static final String MANAGER_NAME = "tributary-replicas";
  /** Name of the router (a system actor). */
  public static final String ROUTER_NAME = "tributary-partitions";

  /** A command to a node's router or manager rather than to one partition's replica: no entity id. */
  public interface NodeCommand extends PartitionLeader.Command {
    @Override
    default String entityId() {
      return "";
    }
  }

  /** Sends {@code command} to the replica manager of node {@code address} (an Akka address string). Local only. */
  public record ToReplica(String address, PartitionLeader.Command command)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return command.entityId();
    }
  }

  /**
   * A leader entity's claim of its leadership ({@link PartitionLeader#create}), answered with {@link ClaimResult}:
   * granted once this node's metadata names it the leader of {@code id}'s partition in {@code id}'s epoch and no other
   * actor of this node writes the partition's log (its follower, or a leader entity of an older epoch, has stopped);
   * refused if the metadata names another epoch or leader, or the topic is being deleted. Local only.
   */
  public record ClaimLeadership(
      LeaderSharding.LeaderId id, ActorRef<PartitionLeader.Command> entity, ActorRef<ClaimResult> replyTo)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return id.partitionId();
    }
  }

  /**
   * The answer to {@link ClaimLeadership}.
   *
   * @param role granted: the partition's metadata to lead with; null when refused
   * @param reason why it was refused (null when granted)
   */
  public record ClaimResult(PartitionLeader.UpdateRole role, String reason)
      implements akka.actor.NoSerializationVerificationNeeded {}

  /** The node's shard region of leader entities, for the router (started after it). Local only. */
  private record UseLeaderRegion(ActorRef<ShardingEnvelope<PartitionLeader.Command>> region)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  /** From the manager to its router: the controller's snapshot, after which a topic missing is deleted. */
  private record SnapshotConfirmed(TopicsChanged topics)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  /** A follower or leader entity of partition {@code partitionId} on this node stopped. */
  private record ReplicaStopped(String partitionId, ActorRef<PartitionLeader.Command> ref)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  /** Applies the metadata of {@code topic} again (after one of its replicas stopped). */
  private record ApplyTopic(String topic)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  /**
   * The controller's push of metadata it wrote: topics (whole) and names of topics removed. Control plane (CBOR).
   */
  public record TopicsChanged(
      @JsonProperty("topics") List<TopicMetadata> topics, @JsonProperty("removed") List<String> removed)
      implements NodeCommand, CborSerializable {
    @JsonCreator
    public TopicsChanged {}
  }

  /**
   * The controller's answer to {@link Controller.SyncTopics}: every topic as it holds them. Control plane (CBOR).
   *
   * @param topics every topic, whole
   */
  public record TopicsSnapshot(@JsonProperty("topics") List<TopicMetadata> topics)
      implements NodeCommand, CborSerializable {
    @JsonCreator
    public TopicsSnapshot {}
  }

  /** The manager asks the controller again for {@link TopicsSnapshot} if none came yet. */
  private enum SyncRetry implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {
    INSTANCE
  }

  private record MetadataChanged(Map<String, TopicMetadata> topics)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  private record ManagersListed(Receptionist.Listing listing)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  private record NodeEvent(akka.cluster.ClusterEvent.ClusterDomainEvent event)
      implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {}

  private enum Ignore implements NodeCommand, akka.actor.NoSerializationVerificationNeeded {
    INSTANCE
  }

  // ------------------------------------------------------------------ router

  /**
   * Starts the node's router (a system actor).
   *
   * @param metadata the node's replicator of the topic metadata, whose changes the router subscribes to
   */
  public static ActorRef<PartitionLeader.Command> initRouter(ActorSystem<?> system, MetadataReplicator metadata) {
    return system.systemActorOf(Behaviors.setup(ctx -> new Router(ctx).behavior(metadata.adapter(ctx))), ROUTER_NAME,
        Props.empty());
  }

  /**
   * Starts the node's shard region of partition leaders ({@link LeaderSharding}) and its manager (a system actor),
   * and gives the router the region.
   *
   * @param metadata the node's replicator of the topic metadata, whose changes the manager subscribes to
   * @return the manager
   */
  public static ActorRef<PartitionLeader.Command> initManager(
      ActorSystem<?> system,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<PartitionLeader.Command> router,
      ActorRef<Controller.Command> controller,
      MetadataReplicator metadata) {
    java.util.concurrent.atomic.AtomicReference<ActorRef<PartitionLeader.Command>> manager =
        new java.util.concurrent.atomic.AtomicReference<>();
    ActorRef<ShardingEnvelope<PartitionLeader.Command>> region = LeaderSharding.init(system, settings.role(),
        id -> manager.get() == null ? PartitionLeader.refusing(id.toString())
            : PartitionLeader.create(id, manager.get(), settings, replication, journal, controller, Clock.systemUTC()),
        settings.askTimeout());
    manager.set(system.systemActorOf(
        Behaviors.setup(ctx -> new Manager(ctx, settings, replication, journal, router, controller, region)
            .behavior(metadata.adapter(ctx))),
        MANAGER_NAME, Props.empty()));
    router.tell(new UseLeaderRegion(region));
    return manager.get();
  }

  private static Map<String, TopicMetadata> entries(LWWMap<String, TopicMetadata> map) {
    return new HashMap<>(map.getEntries());
  }

  private static String addressOf(ActorContext<?> ctx, ActorRef<?> ref) {
    akka.actor.Address a = ref.path().address();
    return a.hasLocalScope() ? ctx.getSystem().address().toString() : a.toString();
  }

  /** Applies a pushed change to a metadata view: a topic is replaced only by a newer version. */
  private static void merge(Map<String, TopicMetadata> view, TopicsChanged change) {
    for (TopicMetadata t : change.topics()) {
      TopicMetadata old = view.get(t.name());
      if (old == null || old.version() < t.version()) {
        view.put(t.name(), t);
      }
    }
    for (String name : change.removed()) {
      view.remove(name);
    }
  }

  /** The metadata of partition {@code partitionId} ({@code topic-N}) in {@code topics}, or null. */
  private static PartitionMetadata partitionOf(Map<String, TopicMetadata> topics, String partitionId) {
    int dash = partitionId.lastIndexOf('-');
    TopicMetadata t = dash > 0 ? topics.get(partitionId.substring(0, dash)) : null;
    if (t == null) {
      return null;
    }
    try {
      return t.partition(Integer.parseInt(partitionId.substring(dash + 1)));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static final class Router {
    private final ActorContext<PartitionLeader.Command> ctx;
    private Map<String, TopicMetadata> topics = new HashMap<>();
    private final Map<String, ActorRef<PartitionLeader.Command>> managers = new HashMap<>();
    private final java.util.Set<String> unreachable = new java.util.HashSet<>();
    private final InFlightForwards inFlight = new InFlightForwards();
    private final String self;
    private final LeaderSharding sharding;
    private ActorRef<ShardingEnvelope<PartitionLeader.Command>> leaders;
    private boolean confirmed;

    Router(ActorContext<PartitionLeader.Command> ctx) {
      this.ctx = ctx;
      this.self = ctx.getSystem().address().toString();
      this.sharding = LeaderSharding.get(ctx.getSystem());
      ActorRef<Receptionist.Listing> listings = ctx.messageAdapter(Receptionist.Listing.class, ManagersListed::new);
      ctx.getSystem().receptionist().tell(Receptionist.subscribe(MANAGER_KEY, listings));
      ActorRef<akka.cluster.ClusterEvent.ClusterDomainEvent> events =
          ctx.messageAdapter(akka.cluster.ClusterEvent.ClusterDomainEvent.class, NodeEvent::new);
      akka.cluster.typed.Cluster cluster = akka.cluster.typed.Cluster.get(ctx.getSystem());
      cluster.subscriptions().tell(akka.cluster.typed.Subscribe.create(events.narrow(),
          akka.cluster.ClusterEvent.ReachabilityEvent.class));
      cluster.subscriptions().tell(akka.cluster.typed.Subscribe.create(events.narrow(),
          akka.cluster.ClusterEvent.MemberRemoved.class));
    }

    /** A node became unreachable or left: what was forwarded to it is answered NOT_LEADER_OR_FOLLOWER (retriable). */
    private void onNodeEvent(akka.cluster.ClusterEvent.ClusterDomainEvent e) {
      String lost = null;
      if (e instanceof akka.cluster.ClusterEvent.UnreachableMember u) {
        lost = u.member().address().toString();
        unreachable.add(lost);
      } else if (e instanceof akka.cluster.ClusterEvent.MemberRemoved r) {
        lost = r.member().address().toString();
        unreachable.remove(lost);
      } else if (e instanceof akka.cluster.ClusterEvent.ReachableMember r) {
        unreachable.remove(r.member().address().toString());
      }
      if (lost != null) {
        int failed = inFlight.failAll(lost, "Node " + lost + " failed before answering");
        if (failed > 0) {
          ctx.getLog().info("Node {} is gone: answered {} requests forwarded to it with NOT_LEADER_OR_FOLLOWER", lost,
              failed);
        }
      }
    }

    /** The view changed: the leader allocation of this node's shard coordinator (if it runs here) reads it. */
    private Behavior<PartitionLeader.Command> viewChanged() {
      sharding.publish(topics, confirmed);
      return Behaviors.same();
    }

    Behavior<PartitionLeader.Command> behavior(
        ReplicatorMessageAdapter<PartitionLeader.Command, LWWMap<String, TopicMetadata>> replicator) {
      followTopics(replicator);
      return Behaviors.receive(PartitionLeader.Command.class)
          .onMessage(MetadataChanged.class, m -> {
            topics = keepingPushed(m.topics(), topics);
            return viewChanged();
          })
          .onMessage(TopicsChanged.class, m -> {
            merge(topics, m);
            return viewChanged();
          })
          .onMessage(SnapshotConfirmed.class, m -> {
            merge(topics, m.topics());
            confirmed = true;
            return viewChanged();
          })
          .onMessage(UseLeaderRegion.class, m -> {
            leaders = m.region();
            return Behaviors.same();
          })
          .onMessage(ManagersListed.class, m -> {
            managers.clear();
            for (ActorRef<PartitionLeader.Command> ref : m.listing().getServiceInstances(MANAGER_KEY)) {
              managers.put(addressOf(ctx, ref), ref);
            }
            return Behaviors.same();
          })
          .onMessage(Ignore.class, m -> Behaviors.same())
          .onMessage(NodeEvent.class, m -> {
            onNodeEvent(m.event());
            return Behaviors.same();
          })
          .onMessage(ToReplica.class, m -> {
            ActorRef<PartitionLeader.Command> manager = managers.get(m.address());
            if (manager == null) {
              reject(m.command(), ErrorCode.LEADER_NOT_AVAILABLE, "No replica manager is known at " + m.address());
            } else {
              manager.tell(m.command());
            }
            return Behaviors.same();
          })
          .onMessage(PartitionLeader.Command.class, this::route)
          .build();
    }

    /** Sends {@code cmd} to the partition's leader entity in its current epoch, through the shard region. */
    private Behavior<PartitionLeader.Command> route(PartitionLeader.Command cmd) {
      String entityId = cmd.entityId();
      int dash = entityId.lastIndexOf('-');
      TopicMetadata t = dash > 0 ? topics.get(entityId.substring(0, dash)) : null;
      PartitionMetadata p = t == null || t.state() == TopicMetadata.State.DELETING ? null
          : partitionOf(topics, entityId);
      if (p == null) {
        if (cmd instanceof PartitionLeader.DeletePartition d) {
          d.replyTo().tell(new PartitionLeader.PartitionAck(d.topic(), d.partition(), ErrorCode.NONE));
        } else {
          reject(cmd, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Partition " + entityId + " does not exist");
        }
      } else if (!p.hasLeader()) {
        reject(cmd, ErrorCode.LEADER_NOT_AVAILABLE, "Partition " + entityId + " has no leader right now");
      } else if (leaders == null || !managers.containsKey(p.leader()) || unreachable.contains(p.leader())) {
        reject(cmd, ErrorCode.LEADER_NOT_AVAILABLE,
            "The leader of " + entityId + " (" + p.leader() + ") is not reachable right now");
      } else {
        if (!p.leader().equals(self)) {
          inFlight.remember(p.leader(), cmd, System.nanoTime());
        }
        leaders.tell(new ShardingEnvelope<>(
            LeaderSharding.entityId(t.name(), p.partition(), p.leaderEpoch(), t.topicId()), cmd));
      }
      return Behaviors.same();
    }
  }

  // ------------------------------------------------------------------ manager

  private static final class Manager {
    /** How often a manager that has no answer to {@link Controller.SyncTopics} asks again, ms. */
    private static final long SYNC_RETRY_MS = 2_000L;
    /** How long after a replica stopped its partition's metadata is applied again (a follower started), ms. */
    private static final long REAPPLY_MS = 100L;

    /** A leader entity running on this node, in {@code epoch}. */
    private record LocalLeader(ActorRef<PartitionLeader.Command> ref, int epoch) {}

    private final ActorContext<PartitionLeader.Command> ctx;
    private final BrokerSettings settings;
    private final ReplicationSettings replication;
    private final JournalAccess journal;
    private final ActorRef<PartitionLeader.Command> router;
    private final ActorRef<Controller.Command> controller;
    private final ActorRef<ShardingEnvelope<PartitionLeader.Command>> region;
    private final String self;
    private Map<String, TopicMetadata> topics = new HashMap<>();
    /** Follower replicas of this node, by {@code topic-N} (children). */
    private final Map<String, ActorRef<PartitionLeader.Command>> followers = new HashMap<>();
    /** Leader entities granted on this node, by {@code topic-N} (watched). */
    private final Map<String, LocalLeader> leaders = new HashMap<>();
    /** Claims waiting for a stop or for the metadata, by {@code topic-N}. */
    private final Map<String, ClaimLeadership> claims = new HashMap<>();
    /** The epoch whose leader entity this manager last woke, by {@code topic-N}. */
    private final Map<String, Integer> woken = new HashMap<>();
    /** Whether the controller answered {@link Controller.SyncTopics}: only then may a local replica lead. */
    private boolean leadershipConfirmed;

    Manager(
        ActorContext<PartitionLeader.Command> ctx,
        BrokerSettings settings,
        ReplicationSettings replication,
        JournalAccess journal,
        ActorRef<PartitionLeader.Command> router,
        ActorRef<Controller.Command> controller,
        ActorRef<ShardingEnvelope<PartitionLeader.Command>> region) {
      this.ctx = ctx;
      this.settings = settings;
      this.replication = replication;
      this.journal = journal;
      this.router = router;
      this.controller = controller;
      this.region = region;
      this.self = ctx.getSystem().address().toString();
      ctx.getSystem().receptionist().tell(Receptionist.register(MANAGER_KEY, ctx.getSelf()));
    }

    Behavior<PartitionLeader.Command> behavior(
        ReplicatorMessageAdapter<PartitionLeader.Command, LWWMap<String, TopicMetadata>> replicator) {
      followTopics(replicator);
      requestSync();
      return Behaviors.receive(PartitionLeader.Command.class)
          .onMessage(TopicsSnapshot.class, m -> {
            TopicsChanged asChange = new TopicsChanged(m.topics(), List.of());
            merge(topics, asChange);
            router.tell(new SnapshotConfirmed(asChange));
            if (!leadershipConfirmed) {
              leadershipConfirmed = true;
              ctx.getLog().info("The controller confirmed the metadata ({} topics): replicas on this node may "
                  + "lead now", m.topics().size());
            }
            return changed();
          })
          .onMessage(SyncRetry.class, m -> {
            if (!leadershipConfirmed) {
              requestSync();
            }
            return Behaviors.same();
          })
          .onMessage(MetadataChanged.class, m -> {
            topics = keepingPushed(m.topics(), topics);
            return changed();
          })
          .onMessage(TopicsChanged.class, m -> {
            merge(topics, m);
            router.tell(m);
            for (TopicMetadata t : m.topics()) {
              TopicMetadata current = topics.get(t.name());
              if (current != null) {
                apply(current);
              }
            }
            evaluateClaims();
            publishLeaders();
            return Behaviors.same();
          })
          .onMessage(ClaimLeadership.class, m -> {
            ClaimLeadership old = claims.put(m.id().partitionId(), m);
            if (old != null && !old.entity().equals(m.entity())) {
              old.replyTo().tell(new ClaimResult(null, "a newer claim came from " + m.id()));
            }
            evaluate(m);
            return Behaviors.same();
          })
          .onMessage(ReplicaStopped.class, this::onReplicaStopped)
          .onMessage(ApplyTopic.class, m -> {
            TopicMetadata t = topics.get(m.topic());
            if (t != null) {
              apply(t);
              publishLeaders();
            }
            return Behaviors.same();
          })
          .onMessage(Ignore.class, m -> Behaviors.same())
          .onMessage(PartitionLeader.Command.class, this::deliver)
          .build();
    }

    private Behavior<PartitionLeader.Command> changed() {
      for (TopicMetadata t : topics.values()) {
        apply(t);
      }
      evaluateClaims();
      publishLeaders();
      return Behaviors.same();
    }

    /**
     * Asks the controller for the current metadata ({@link Controller.SyncTopics}), again every {@value
     * #SYNC_RETRY_MS} ms until it answers. Until then no local replica is made leader: this node's copy of the
     * metadata, restored from its durable store at start, may name it as a leader it no longer is (the controlled
     * shutdown's move of its leaderships reached a majority of nodes, not necessarily this one). Such a stale leader
     * would accept appends the real leader does not have and refuse an idempotent producer's batches as out of
     * sequence, which makes the producer re-seal and store them twice.
     */
    private void requestSync() {
      controller.tell(new Controller.SyncTopics(ctx.getSelf()));
      ctx.scheduleOnce(java.time.Duration.ofMillis(SYNC_RETRY_MS), ctx.getSelf(), SyncRetry.INSTANCE);
    }

    /**
     * Brings the local replicas of {@code t} in line with the metadata: a partition this node leads gets its leader
     * entity woken through the shard region (its start claims the leadership, which stops the follower here); a
     * running leader entity gets the metadata (ISR changes; a newer epoch or another leader ends it, and its follower
     * is started once it stopped); a partition this node follows gets its follower, started if needed.
     */
    private void apply(TopicMetadata t) {
      if (t.state() == TopicMetadata.State.DELETING) {
        return;
      }
      TopicConfig config;
      try {
        config = TopicConfig.create(t.configs(), settings);
      } catch (TopicConfig.InvalidConfigException e) {
        ctx.getLog().error("Topic {} has an invalid config in the metadata: {}", t.name(), e.getMessage());
        return;
      }
      for (PartitionMetadata p : t.partitions()) {
        if (!p.replicas().contains(self)) {
          continue;
        }
        String id = PartitionLeader.entityId(t.name(), p.partition());
        PartitionLeader.UpdateRole role =
            new PartitionLeader.UpdateRole(t.name(), p.partition(), t.topicId(), config, t.state(), p);
        LocalLeader leader = leaders.get(id);
        if (leader != null) {
          leader.ref().tell(role);
        }
        if (leadershipConfirmed && leadsHere(p)) {
          Integer w = woken.get(id);
          if (w == null || w != p.leaderEpoch() || leader == null || leader.epoch() != p.leaderEpoch()) {
            if (w == null || w != p.leaderEpoch()) {
              woken.put(id, p.leaderEpoch());
              region.tell(new ShardingEnvelope<>(
                  LeaderSharding.entityId(t.name(), p.partition(), p.leaderEpoch(), t.topicId()),
                  new PartitionLeader.Wake(t.name(), p.partition())));
            }
          }
        } else if (leader == null) {
          follower(id).tell(role); // creates the log if needed; fetches if another node leads
        }
      }
    }

    /** Answers the claims that can be answered now. */
    private void evaluateClaims() {
      for (ClaimLeadership c : List.copyOf(claims.values())) {
        evaluate(c);
      }
    }

    /** Grants or refuses {@code c}, or leaves it waiting (for this node's metadata, or for a replica to stop). */
    private void evaluate(ClaimLeadership c) {
      LeaderSharding.LeaderId id = c.id();
      String pid = id.partitionId();
      TopicMetadata t = topics.get(id.topic());
      PartitionMetadata p = t == null || !t.topicId().equals(id.topicId()) ? null : t.partition(id.partition());
      if (!leadershipConfirmed || p == null || p.leaderEpoch() < id.leaderEpoch()) {
        if (t != null && t.topicId().equals(id.topicId()) && p == null) {
          refuse(c, "partition " + pid + " does not exist");
        }
        return; // this node's metadata has not reached the claim's epoch (or topic) yet: the entity's ask times out
      }
      if (t.state() == TopicMetadata.State.DELETING) {
        refuse(c, "topic " + t.name() + " is being deleted");
        return;
      }
      if (p.leaderEpoch() > id.leaderEpoch() || !leadsHere(p)) {
        refuse(c, "the metadata names " + (p.hasLeader() ? p.leader() : "no leader") + " in epoch "
            + p.leaderEpoch());
        return;
      }
      ActorRef<PartitionLeader.Command> follower = followers.get(pid);
      LocalLeader leader = leaders.get(pid);
      if (leader != null && leader.ref().equals(c.entity())) {
        claims.remove(pid); // already granted (a repeated claim)
        return;
      }
      if (follower != null || leader != null) {
        // one writer of the log at a time: the other stops after its persist in flight, then the claim is granted
        (follower != null ? follower : leader.ref()).tell(PartitionLeader.StopReplica.INSTANCE);
        return;
      }
      TopicConfig config;
      try {
        config = TopicConfig.create(t.configs(), settings);
      } catch (TopicConfig.InvalidConfigException e) {
        refuse(c, "topic " + t.name() + " has an invalid config: " + e.getMessage());
        return;
      }
      claims.remove(pid);
      leaders.put(pid, new LocalLeader(c.entity(), id.leaderEpoch()));
      ctx.watchWith(c.entity(), new ReplicaStopped(pid, c.entity()));
      c.replyTo().tell(new ClaimResult(
          new PartitionLeader.UpdateRole(t.name(), p.partition(), t.topicId(), config, t.state(), p), null));
      publishLeaders();
    }

    private void refuse(ClaimLeadership c, String reason) {
      claims.remove(c.id().partitionId());
      c.replyTo().tell(new ClaimResult(null, reason));
    }

    /**
     * A follower or leader entity stopped: a claim waiting for it is granted; the partition's metadata is applied
     * again shortly after (a follower started if this node still follows; a leader entity woken again if it still
     * leads: one that stopped on its own, e.g. on a journal failure, is not restarted in a tight loop).
     */
    private Behavior<PartitionLeader.Command> onReplicaStopped(ReplicaStopped m) {
      String pid = m.partitionId();
      if (m.ref().equals(followers.get(pid))) {
        followers.remove(pid);
      }
      LocalLeader leader = leaders.get(pid);
      if (leader != null && leader.ref().equals(m.ref())) {
        leaders.remove(pid);
        woken.remove(pid);
        publishLeaders();
      }
      ClaimLeadership claim = claims.get(pid);
      if (claim != null) {
        evaluate(claim);
      }
      int dash = pid.lastIndexOf('-');
      if (dash > 0) {
        ctx.scheduleOnce(java.time.Duration.ofMillis(REAPPLY_MS), ctx.getSelf(),
            new ApplyTopic(pid.substring(0, dash)));
      }
      return Behaviors.same();
    }

    /**
     * Publishes the local leader entities of the current epochs to the node's {@link LocalLeaders}, which the gateway
     * sends clients' requests to directly (the shard region is the way for everything else).
     */
    private void publishLeaders() {
      Map<String, ActorRef<?>[]> view = new HashMap<>();
      for (TopicMetadata t : topics.values()) {
        if (t.state() == TopicMetadata.State.DELETING) {
          continue;
        }
        ActorRef<?>[] byPartition = null;
        for (PartitionMetadata p : t.partitions()) {
          LocalLeader leader = leadershipConfirmed && leadsHere(p)
              ? leaders.get(PartitionLeader.entityId(t.name(), p.partition())) : null;
          if (leader == null || leader.epoch() != p.leaderEpoch()) {
            continue;
          }
          if (byPartition == null) {
            int size = 0;
            for (PartitionMetadata q : t.partitions()) {
              size = Math.max(size, q.partition() + 1);
            }
            byPartition = new ActorRef<?>[size];
          }
          byPartition[p.partition()] = leader.ref();
        }
        if (byPartition != null) {
          view.put(t.name(), byPartition);
        }
      }
      LocalLeaders.get(ctx.getSystem()).publish(view);
    }

    private boolean leadsHere(PartitionMetadata p) {
      return p.hasLeader() && self.equals(p.leader());
    }

    /** This node's follower of {@code id}, started if it does not run. */
    private ActorRef<PartitionLeader.Command> follower(String id) {
      ActorRef<PartitionLeader.Command> ref = followers.get(id);
      if (ref == null) {
        int dash = id.lastIndexOf('-');
        ref = ctx.spawn(PartitionFollower.create(id.substring(0, dash), Integer.parseInt(id.substring(dash + 1)),
            settings, replication, journal, region, Clock.systemUTC()), id);
        followers.put(id, ref);
        ctx.watchWith(ref, new ReplicaStopped(id, ref));
      }
      return ref;
    }

    /**
     * A command addressed to this node's replica of a partition ({@link ToReplica}: the controller's deletes and status
     * queries): to the leader entity if one runs here, else to the follower (started if this node holds a replica).
     */
    private Behavior<PartitionLeader.Command> deliver(PartitionLeader.Command cmd) {
      String entityId = cmd.entityId();
      LocalLeader leader = leaders.get(entityId);
      ActorRef<PartitionLeader.Command> ref = leader != null ? leader.ref() : followers.get(entityId);
      if (ref == null && isHostedHere(entityId)) {
        ref = follower(entityId);
      }
      if (ref != null) {
        ref.tell(cmd);
      } else if (cmd instanceof PartitionLeader.DeletePartition d) {
        d.replyTo().tell(new PartitionLeader.PartitionAck(d.topic(), d.partition(), ErrorCode.NONE));
      } else {
        reject(cmd, ErrorCode.NOT_LEADER_OR_FOLLOWER, "Node " + self + " holds no replica of " + entityId);
      }
      return Behaviors.same();
    }

    private boolean isHostedHere(String entityId) {
      PartitionMetadata p = partitionOf(topics, entityId);
      return p != null && p.replicas().contains(self);
    }
  }

  /** Answers a command that cannot be delivered with {@code error}, in the command's own reply type. */
  static void reject(PartitionLeader.Command cmd, ErrorCode error, String message) {
    if (cmd instanceof PartitionLeader.Produce p) {
      p.request().reply(ProduceResponse.failed(p.request().topic(), p.request().partition(), error, message));
    } else if (cmd instanceof PartitionLeader.Fetch f) {
      f.request().replyTo().tell(FetchResponse.failed(f.request().topic(), f.request().partition(), error, message,
          -1, -1));
    } else if (cmd instanceof PartitionLeader.ListOffsets l) {
      l.request().replyTo().tell(new ListOffsetsResponse(l.request().topic(), l.request().partition(), error, message,
          -1, -1));
    } else if (cmd instanceof PartitionLeader.DeletePartition d) {
      d.replyTo().tell(new PartitionLeader.PartitionAck(d.topic(), d.partition(), error));
    } else if (cmd instanceof PartitionLeader.GetStatus g) {
      g.replyTo().tell(new PartitionLeader.PartitionStatus(g.topic(), g.partition(), error, -1, -1, -1, -1, 0, 0, 0));
    } else if (cmd instanceof PartitionLeader.DeleteRecords d) {
      d.replyTo().tell(new PartitionLeader.RecordsDeleted(d.topic(), d.partition(), error, -1));
    } else if (cmd instanceof PartitionLeader.ReplicaFetch r) {
      r.replyTo().tell(new PartitionLeader.ReplicaFetchResponse(r.topic(), r.partition(), error, r.leaderEpoch(),
          r.fetchOffset(), -1, -1, -1, -1, List.of()));
    }
    // ApplyRetention, UpdateRole: nothing to answer
  }

  /**
   * The topics of a metadata change ({@code gossiped}, from the replicator), where {@code known} (what the controller
   * pushed to this node directly) has a newer version of a topic that gossip has not brought yet: that version is
   * kept. A new map; neither argument is changed.
   */
  static Map<String, TopicMetadata> keepingPushed(
      Map<String, TopicMetadata> gossiped, Map<String, TopicMetadata> known) {
    Map<String, TopicMetadata> next = new HashMap<>(gossiped);
    for (TopicMetadata t : known.values()) {
      TopicMetadata n = next.get(t.name());
      if (n != null && n.version() < t.version()) {
        next.put(t.name(), t);
      }
    }
    return next;
  }

  /**
   * Has the actor of {@code replicator} told of every change of the topic map ({@link MetadataChanged}), and of the
   * map as this node's replica has it now (a local read, so that an actor started after the last change has it too).
   */
  private static void followTopics(
      ReplicatorMessageAdapter<PartitionLeader.Command, LWWMap<String, TopicMetadata>> replicator) {
    replicator.subscribe(ClusterMetadata.TOPICS,
        changed -> changed instanceof Replicator.Changed<LWWMap<String, TopicMetadata>> c
            ? new MetadataChanged(entries(c.dataValue())) : new MetadataChanged(Map.of()));
    replicator.askGet(
        replyTo -> new Replicator.Get<>(ClusterMetadata.TOPICS, Replicator.readLocal(), replyTo),
        rsp -> rsp instanceof Replicator.GetSuccess<LWWMap<String, TopicMetadata>> ok
            ? new MetadataChanged(entries(ok.dataValue())) : Ignore.INSTANCE);
  }
}
