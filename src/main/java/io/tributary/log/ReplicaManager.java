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
import akka.cluster.ddata.typed.javadsl.DistributedData;
import akka.cluster.ddata.typed.javadsl.Replicator;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.broker.TopicConfig;
import io.tributary.cluster.ClusterMetadata;
import io.tributary.cluster.Controller;
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
 * The partition side of a broker node, as Kafka's ReplicaManager: two actors per node.
 *
 * <ul>
 *   <li>The <b>router</b> ({@link #initRouter}) is what the rest of the node (gateway, controller, group coordinator)
 *       sends {@link PartitionLeader.Command}s to: it looks up the partition's leader in the replicated metadata and
 *       forwards the command to the replica manager of the leader's node, or answers UNKNOWN_TOPIC_OR_PARTITION (no
 *       such topic) or LEADER_NOT_AVAILABLE (no leader, or its node is not reachable) itself. {@link ToReplica}
 *       addresses one node's replica instead of the leader (controller's deletes, followers' fetches).
 *   <li>The <b>manager</b> hosts this node's replicas: one {@link PartitionLeader} child per partition the metadata
 *       places here, each told its role ({@link PartitionLeader.UpdateRole}) whenever the metadata changes. Commands
 *       arriving from a router are delivered to the local replica, which answers NOT_LEADER_OR_FOLLOWER if it does
 *       not lead; a command for a partition not hosted here gets that answer from the manager. The manager never
 *       forwards again, so a stale view can never bounce a request between nodes.
 * </ul>
 *
 * <p>Metadata: both subscribe to the {@link ClusterMetadata#TOPICS} map in Distributed Data; the controller also
 * pushes every change it writes to every manager ({@link TopicsChanged}), which passes it to its router, so a
 * leader change reaches the nodes without waiting for gossip. Newer versions win. A manager that starts (a node
 * that starts or restarts) makes no local replica leader until the controller has answered its {@link
 * Controller.SyncTopics} with the current metadata ({@link TopicsSnapshot}): the node's own copy, restored from its
 * durable store, may still name it as the leader it was before it left, and a replica leading on that stale view
 * would acknowledge appends the real leader never gets (as Kafka's brokers, which lead only when the controller says
 * so). Follower roles are taken at once.
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

  /** Sends {@code command} to the replica manager of node {@code address} (an Akka address string). Local only. */
  public record ToReplica(String address, PartitionLeader.Command command)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return command.entityId();
    }
  }

  /**
   * The controller's push of metadata it wrote: topics (whole) and names of topics removed. Control plane (CBOR).
   */
  public record TopicsChanged(
      @JsonProperty("topics") List<TopicMetadata> topics, @JsonProperty("removed") List<String> removed)
      implements PartitionLeader.Command, CborSerializable {
    @JsonCreator
    public TopicsChanged {}

    @Override
    public String entityId() {
      return "";
    }
  }

  /**
   * The controller's answer to {@link Controller.SyncTopics}: every topic as it holds them. Control plane (CBOR).
   *
   * @param topics every topic, whole
   */
  public record TopicsSnapshot(@JsonProperty("topics") List<TopicMetadata> topics)
      implements PartitionLeader.Command, CborSerializable {
    @JsonCreator
    public TopicsSnapshot {}

    @Override
    public String entityId() {
      return "";
    }
  }

  /** The manager asks the controller again for {@link TopicsSnapshot} if none came yet. */
  private enum SyncRetry implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    INSTANCE;

    @Override
    public String entityId() {
      return "";
    }
  }

  private record MetadataChanged(Map<String, TopicMetadata> topics)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return "";
    }
  }

  private record ManagersListed(Receptionist.Listing listing)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return "";
    }
  }

  private record NodeEvent(akka.cluster.ClusterEvent.ClusterDomainEvent event)
      implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return "";
    }
  }

  private enum Ignore implements PartitionLeader.Command, akka.actor.NoSerializationVerificationNeeded {
    INSTANCE;

    @Override
    public String entityId() {
      return "";
    }
  }

  // ------------------------------------------------------------------ router

  /** Starts the node's router (a system actor). */
  public static ActorRef<PartitionLeader.Command> initRouter(ActorSystem<?> system) {
    return system.systemActorOf(Behaviors.setup(ctx -> new Router(ctx).behavior()), ROUTER_NAME, Props.empty());
  }

  /** Starts the node's manager (a system actor); it hosts replicas only if the node has the broker role. */
  public static ActorRef<PartitionLeader.Command> initManager(
      ActorSystem<?> system,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<PartitionLeader.Command> router,
      ActorRef<Controller.Command> controller) {
    return system.systemActorOf(
        Behaviors.setup(ctx -> new Manager(ctx, settings, replication, journal, router, controller).behavior()),
        MANAGER_NAME, Props.empty());
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

  private static final class Router {
    private final ActorContext<PartitionLeader.Command> ctx;
    private Map<String, TopicMetadata> topics = new HashMap<>();
    private final Map<String, ActorRef<PartitionLeader.Command>> managers = new HashMap<>();
    private final java.util.Set<String> unreachable = new java.util.HashSet<>();
    private final InFlightForwards inFlight = new InFlightForwards();
    private final String self;

    Router(ActorContext<PartitionLeader.Command> ctx) {
      this.ctx = ctx;
      this.self = ctx.getSystem().address().toString();
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

    Behavior<PartitionLeader.Command> behavior() {
      return DistributedData.withReplicatorMessageAdapter(
          (akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter<PartitionLeader.Command,
                  LWWMap<String, TopicMetadata>> replicator) -> {
            replicator.subscribe(ClusterMetadata.TOPICS,
                changed -> changed instanceof Replicator.Changed<LWWMap<String, TopicMetadata>> c
                    ? new MetadataChanged(entries(c.dataValue())) : new MetadataChanged(Map.of()));
            replicator.askGet(
                replyTo -> new Replicator.Get<>(ClusterMetadata.TOPICS, Replicator.readLocal(), replyTo),
                rsp -> rsp instanceof Replicator.GetSuccess<LWWMap<String, TopicMetadata>> ok
                    ? new MetadataChanged(entries(ok.dataValue())) : Ignore.INSTANCE);
            return Behaviors.receive(PartitionLeader.Command.class)
                .onMessage(MetadataChanged.class, m -> {
                  topics = new HashMap<>(m.topics());
                  return Behaviors.same();
                })
                .onMessage(TopicsChanged.class, m -> {
                  merge(topics, m);
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
          });
    }

    private Behavior<PartitionLeader.Command> route(PartitionLeader.Command cmd) {
      String entityId = cmd.entityId();
      int dash = entityId.lastIndexOf('-');
      TopicMetadata t = dash > 0 ? topics.get(entityId.substring(0, dash)) : null;
      PartitionMetadata p = null;
      if (t != null && t.state() != TopicMetadata.State.DELETING) {
        try {
          p = t.partition(Integer.parseInt(entityId.substring(dash + 1)));
        } catch (NumberFormatException e) {
          p = null;
        }
      }
      if (p == null) {
        if (cmd instanceof PartitionLeader.DeletePartition d) {
          d.replyTo().tell(new PartitionLeader.PartitionAck(d.topic(), d.partition(), ErrorCode.NONE));
        } else {
          reject(cmd, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Partition " + entityId + " does not exist");
        }
      } else if (!p.hasLeader()) {
        reject(cmd, ErrorCode.LEADER_NOT_AVAILABLE, "Partition " + entityId + " has no leader right now");
      } else {
        ActorRef<PartitionLeader.Command> manager = managers.get(p.leader());
        if (manager == null || unreachable.contains(p.leader())) {
          reject(cmd, ErrorCode.LEADER_NOT_AVAILABLE,
              "The leader of " + entityId + " (" + p.leader() + ") is not reachable right now");
        } else {
          if (!p.leader().equals(self)) {
            inFlight.remember(p.leader(), cmd, System.nanoTime());
          }
          manager.tell(cmd);
        }
      }
      return Behaviors.same();
    }
  }

  // ------------------------------------------------------------------ manager

  private static final class Manager {
    /** How often a manager that has no answer to {@link Controller.SyncTopics} asks again, ms. */
    private static final long SYNC_RETRY_MS = 2_000L;

    private final ActorContext<PartitionLeader.Command> ctx;
    private final BrokerSettings settings;
    private final ReplicationSettings replication;
    private final JournalAccess journal;
    private final ActorRef<PartitionLeader.Command> router;
    private final ActorRef<Controller.Command> controller;
    private final String self;
    private Map<String, TopicMetadata> topics = new HashMap<>();
    private final Map<String, ActorRef<PartitionLeader.Command>> replicas = new HashMap<>();
    /** Whether the controller answered {@link Controller.SyncTopics}: only then may a local replica lead. */
    private boolean leadershipConfirmed;

    Manager(
        ActorContext<PartitionLeader.Command> ctx,
        BrokerSettings settings,
        ReplicationSettings replication,
        JournalAccess journal,
        ActorRef<PartitionLeader.Command> router,
        ActorRef<Controller.Command> controller) {
      this.ctx = ctx;
      this.settings = settings;
      this.replication = replication;
      this.journal = journal;
      this.router = router;
      this.controller = controller;
      this.self = ctx.getSystem().address().toString();
      ctx.getSystem().receptionist().tell(Receptionist.register(MANAGER_KEY, ctx.getSelf()));
    }

    Behavior<PartitionLeader.Command> behavior() {
      return DistributedData.withReplicatorMessageAdapter(
          (akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter<PartitionLeader.Command,
                  LWWMap<String, TopicMetadata>> replicator) -> {
            replicator.subscribe(ClusterMetadata.TOPICS,
                changed -> changed instanceof Replicator.Changed<LWWMap<String, TopicMetadata>> c
                    ? new MetadataChanged(entries(c.dataValue())) : new MetadataChanged(Map.of()));
            replicator.askGet(
                replyTo -> new Replicator.Get<>(ClusterMetadata.TOPICS, Replicator.readLocal(), replyTo),
                rsp -> rsp instanceof Replicator.GetSuccess<LWWMap<String, TopicMetadata>> ok
                    ? new MetadataChanged(entries(ok.dataValue())) : Ignore.INSTANCE);
            requestSync();
            return Behaviors.receive(PartitionLeader.Command.class)
                .onMessage(TopicsSnapshot.class, m -> {
                  TopicsChanged asChange = new TopicsChanged(m.topics(), List.of());
                  merge(topics, asChange);
                  router.tell(asChange);
                  if (!leadershipConfirmed) {
                    leadershipConfirmed = true;
                    ctx.getLog().info("The controller confirmed the metadata ({} topics): replicas on this node may "
                        + "lead now", m.topics().size());
                  }
                  applyAll();
                  publishLeaders();
                  return Behaviors.same();
                })
                .onMessage(SyncRetry.class, m -> {
                  if (!leadershipConfirmed) {
                    requestSync();
                  }
                  return Behaviors.same();
                })
                .onMessage(MetadataChanged.class, m -> {
                  Map<String, TopicMetadata> next = new HashMap<>(m.topics());
                  // keep pushed versions that gossip has not brought yet
                  for (TopicMetadata t : topics.values()) {
                    TopicMetadata n = next.get(t.name());
                    if (n != null && n.version() < t.version()) {
                      next.put(t.name(), t);
                    }
                  }
                  topics = next;
                  applyAll();
                  publishLeaders();
                  return Behaviors.same();
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
                  publishLeaders();
                  return Behaviors.same();
                })
                .onMessage(Ignore.class, m -> Behaviors.same())
                .onMessage(PartitionLeader.Command.class, this::deliver)
                .build();
          });
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

    private void applyAll() {
      for (TopicMetadata t : topics.values()) {
        apply(t);
      }
    }

    /** Tells every local replica of {@code t} its role, spawning the ones that do not run yet. */
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
        if (p.replicas().contains(self)) {
          String entityId = PartitionLeader.entityId(t.name(), p.partition());
          ActorRef<PartitionLeader.Command> replica = replica(entityId); // recovers its log meanwhile
          if (leadershipConfirmed || !leadsHere(p)) {
            replica.tell(new PartitionLeader.UpdateRole(t.name(), p.partition(), t.topicId(), config, t.state(), p));
          }
        }
      }
    }

    /**
     * Publishes the local replicas the metadata names as leaders to the node's {@link LocalLeaders}, which the gateway
     * sends clients' requests to directly. Run after every change of the metadata view (after {@link #apply}, which
     * spawns the replicas).
     */
    private void publishLeaders() {
      Map<String, ActorRef<?>[]> view = new HashMap<>();
      for (TopicMetadata t : topics.values()) {
        if (t.state() == TopicMetadata.State.DELETING) {
          continue;
        }
        ActorRef<?>[] byPartition = null;
        for (PartitionMetadata p : t.partitions()) {
          ActorRef<PartitionLeader.Command> ref = leadershipConfirmed && leadsHere(p)
              ? replicas.get(PartitionLeader.entityId(t.name(), p.partition())) : null;
          if (ref == null) {
            continue;
          }
          if (byPartition == null) {
            int size = 0;
            for (PartitionMetadata q : t.partitions()) {
              size = Math.max(size, q.partition() + 1);
            }
            byPartition = new ActorRef<?>[size];
          }
          byPartition[p.partition()] = ref;
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

    private ActorRef<PartitionLeader.Command> replica(String entityId) {
      ActorRef<PartitionLeader.Command> ref = replicas.get(entityId);
      if (ref == null) {
        ref = ctx.spawn(PartitionLeader.create(entityId, settings, replication, journal, router, controller,
            Clock.systemUTC()), entityId);
        replicas.put(entityId, ref);
      }
      return ref;
    }

    private Behavior<PartitionLeader.Command> deliver(PartitionLeader.Command cmd) {
      String entityId = cmd.entityId();
      ActorRef<PartitionLeader.Command> ref = replicas.get(entityId);
      if (ref == null && isHostedHere(entityId)) {
        ref = replica(entityId);
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
      int dash = entityId.lastIndexOf('-');
      if (dash <= 0) {
        return false;
      }
      TopicMetadata t = topics.get(entityId.substring(0, dash));
      if (t == null) {
        return false;
      }
      try {
        PartitionMetadata p = t.partition(Integer.parseInt(entityId.substring(dash + 1)));
        return p != null && p.replicas().contains(self);
      } catch (NumberFormatException e) {
        return false;
      }
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
}
