package io.tributary.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.StashBuffer;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.ClusterEvent;
import akka.cluster.Member;
import akka.cluster.MemberStatus;
import akka.cluster.ddata.LWWMap;
import akka.cluster.ddata.SelfUniqueAddress;
import akka.cluster.ddata.typed.javadsl.Replicator;
import akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.ClusterSingleton;
import akka.cluster.typed.ClusterSingletonSettings;
import akka.cluster.typed.SingletonActor;
import akka.cluster.typed.Subscribe;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.broker.TopicConfig;
import io.tributary.log.PartitionLeader;
import io.tributary.log.ReplicaManager;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.CborSerializable;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The cluster's metadata owner, as Kafka's controller: topics, their partitions' replica assignment, leaders, leader
 * epochs and ISRs. A Cluster Singleton (role {@code tributary.role}) whose state is the {@link ClusterMetadata#TOPICS}
 * map in Akka Distributed Data (Tributary's own replicator, {@link MetadataReplicator}) — durable on every node and
 * written with majority consistency — so that a controller that starts on another node (the old one failed or left)
 * reads it back ({@code ReadMajority}, falling back to the local durable copy) and carries on.
 *
 * <h2>What it does</h2>
 * <ul>
 *   <li><b>Topics</b> ({@link Admin}): create (Kafka's name rules; replicas of a partition on distinct nodes,
 *       leaders spread round-robin; replication factor above the live brokers → INVALID_REPLICATION_FACTOR; waits
 *       until every partition leader exists), delete (every replica deletes its log), list, describe (leader,
 *       replicas, ISR, leader epoch per partition). Every request gets exactly one {@link AdminResponse}.
 *   <li><b>Leader election</b>: when a node becomes unreachable or leaves, every partition it led gets a new leader
 *       — the first of its replicas that is in the ISR and alive — and a bumped leader epoch; dead followers leave
 *       the ISR. A partition with no live in-sync replica has no leader (offline) until one returns; replicas outside
 *       the ISR are never elected (no unclean election).
 *   <li><b>ISR changes</b> from partition leaders ({@link AlterIsr}, as Kafka's AlterPartition), checked against the
 *       leader epoch.
 *   <li><b>Controlled shutdown</b> ({@link ControlledShutdown}): a node that is leaving asks first; its leaderships
 *       move to other in-sync replicas and it leaves the ISRs, so producers see only a retriable error.
 *   <li><b>Metadata for a starting node</b> ({@link SyncTopics}): a replica manager that starts asks for every
 *       topic before it lets a local replica lead, since its durable copy may be stale.
 *   <li><b>Preferred leaders</b>: every {@code leader.imbalance.check.interval.seconds}, if
 *       {@code auto.leader.rebalance.enable}, a partition whose first replica is alive and in sync but not leading is
 *       given back to it.
 * </ul>
 * Every metadata write is also pushed to every node's {@link ReplicaManager} ({@link ReplicaManager.TopicsChanged}),
 * so replicas take their new roles without waiting for gossip.
 *
 * <p>Confinement: all state is touched only on the singleton's thread.
 */
public final class Controller {

  /** Messages the controller accepts. */
  public interface Command {}

  /** A client's admin request, forwarded by a gateway. */
  public record Admin(@JsonProperty("request") AdminRequest request) implements Command, CborSerializable {
    @JsonCreator
    public Admin {}
  }

  /**
   * A partition leader's ISR change (Kafka's AlterPartition): accepted only from the current leader in the current
   * leader epoch, with an ISR that holds the leader, only replicas of the partition, and only live nodes when growing.
   * Answered with {@link AlterIsrResult}: NONE (the new ISR then arrives with the metadata), FENCED_LEADER_EPOCH,
   * UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST.
   */
  public record AlterIsr(
      @JsonProperty("topic") String topic,
      @JsonProperty("partition") int partition,
      @JsonProperty("leader") String leader,
      @JsonProperty("leaderEpoch") int leaderEpoch,
      @JsonProperty("isr") List<String> isr,
      @JsonProperty("replyTo") ActorRef<AlterIsrResult> replyTo)
      implements Command, CborSerializable {
    @JsonCreator
    public AlterIsr {}
  }

  /** Answer to {@link AlterIsr}. */
  public record AlterIsrResult(@JsonProperty("error") ErrorCode error, @JsonProperty("message") String message)
      implements CborSerializable {
    @JsonCreator
    public AlterIsrResult {}
  }

  /**
   * Node {@code address} is shutting down (as Kafka's controlled shutdown): it is no longer elected, its leaderships
   * move to other live in-sync replicas and it leaves every ISR. Answered with {@link ControlledShutdownResult} once
   * that is written.
   */
  public record ControlledShutdown(
      @JsonProperty("address") String address, @JsonProperty("replyTo") ActorRef<ControlledShutdownResult> replyTo)
      implements Command, CborSerializable {
    @JsonCreator
    public ControlledShutdown {}
  }

  /**
   * Answer to {@link ControlledShutdown}.
   *
   * @param remainingLeaderships partitions the node still leads (no other in-sync replica was alive)
   */
  public record ControlledShutdownResult(@JsonProperty("remainingLeaderships") int remainingLeaderships)
      implements CborSerializable {
    @JsonCreator
    public ControlledShutdownResult {}
  }

  /**
   * A node's replica manager (re)started and asks for the current metadata before it lets any local replica lead:
   * answered with every topic as the controller holds it ({@link ReplicaManager.TopicsSnapshot}). Its Distributed
   * Data copy may be stale: restored from the node's durable store, it can still name the node as a leader it was
   * before a controlled shutdown moved the leadership away.
   *
   * @param replyTo the asking replica manager
   */
  public record SyncTopics(@JsonProperty("replyTo") ActorRef<PartitionLeader.Command> replyTo)
      implements Command, CborSerializable {
    @JsonCreator
    public SyncTopics {}
  }

  private interface Internal extends Command, akka.actor.NoSerializationVerificationNeeded {}

  private record Loaded(Map<String, TopicMetadata> topics) implements Internal {}

  private record LoadFailed(String reason, boolean local) implements Internal {}

  private record MembershipChanged(Object event) implements Internal {}

  private record WriteDone(long writeId, boolean ok) implements Internal {}

  private record PartitionsDone(String topic, String topicId, boolean creation, ErrorCode error, String message)
      implements Internal {}

  private enum PreferredLeaderTick implements Internal {
    INSTANCE
  }

  private enum ReconcileTick implements Internal {
    INSTANCE
  }

  // ------------------------------------------------------------------ wiring

  /**
   * Starts the singleton (on the oldest node with the broker role) and returns its proxy.
   *
   * @param partitions the node's partition router
   * @param metadata the node's replicator of the topic metadata, which the singleton reads and writes when it runs on
   *     this node
   */
  public static ActorRef<Command> init(
      ActorSystem<?> system,
      BrokerSettings settings,
      ReplicationSettings replication,
      ActorRef<PartitionLeader.Command> partitions,
      MetadataReplicator metadata) {
    Behavior<Command> behavior = Behaviors.<Command>supervise(Behaviors.setup(ctx -> Behaviors.withTimers(
            timers -> Behaviors.withStash(10_000, stash ->
                new Controller(ctx, timers, stash, metadata.adapter(ctx), settings, replication, partitions)
                    .loading()))))
        .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
    return ClusterSingleton.get(system).init(
        SingletonActor.of(behavior, "tributary-controller")
            .withSettings(ClusterSingletonSettings.create(system).withRole(settings.role())));
  }

  private final ActorContext<Command> ctx;
  private final ActorSystem<?> system;
  private final TimerScheduler<Command> timers;
  private final StashBuffer<Command> stash;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, TopicMetadata>> replicator;
  private final BrokerSettings settings;
  private final ReplicationSettings replication;
  private final ActorRef<PartitionLeader.Command> partitions;
  private final SelfUniqueAddress node;
  private final Map<String, TopicMetadata> topics = new TreeMap<>();
  private final Set<String> shuttingDown = new HashSet<>();
  private final Map<String, List<ActorRef<AdminResponse>>> waiting = new HashMap<>();
  private final Map<Long, Runnable> afterWrite = new HashMap<>();
  private long nextWriteId;
  private long nextVersion;

  private Controller(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, LWWMap<String, TopicMetadata>> replicator,
      BrokerSettings settings,
      ReplicationSettings replication,
      ActorRef<PartitionLeader.Command> partitions) {
    this.ctx = ctx;
    this.system = ctx.getSystem();
    this.timers = timers;
    this.stash = stash;
    this.replicator = replicator;
    this.settings = settings;
    this.replication = replication;
    this.partitions = partitions;
    // as DistributedData.selfUniqueAddress(), without starting that extension's replicator (the application's)
    this.node = new SelfUniqueAddress(Cluster.get(system).selfMember().uniqueAddress());
  }

  // ------------------------------------------------------------------ loading

  private Behavior<Command> loading() {
    load(new Replicator.ReadMajority(replication.metadataWriteTimeout()), false);
    return Behaviors.receive(Command.class)
        .onMessage(Loaded.class, m -> {
          topics.clear();
          topics.putAll(m.topics());
          long maxLoaded = 0;
          for (TopicMetadata t : topics.values()) {
            maxLoaded = Math.max(maxLoaded, t.version());
          }
          nextVersion = Math.max(nextVersion, firstVersion(maxLoaded, System.currentTimeMillis()));
          ctx.getLog().info("Controller started with {} topics", topics.size());
          return start();
        })
        .onMessage(LoadFailed.class, m -> {
          if (!m.local()) {
            ctx.getLog().warn("Controller: reading the metadata from a majority failed ({}); using this node's copy",
                m.reason());
            load(Replicator.readLocal(), true);
            return Behaviors.same();
          }
          throw new IllegalStateException("Cannot read the cluster metadata: " + m.reason());
        })
        .onAnyMessage(m -> {
          stash.stash(m);
          return Behaviors.same();
        })
        .build();
  }

  private void load(Replicator.ReadConsistency consistency, boolean local) {
    replicator.askGet(replyTo -> new Replicator.Get<>(ClusterMetadata.TOPICS, consistency, replyTo), rsp -> {
      if (rsp instanceof Replicator.GetSuccess<LWWMap<String, TopicMetadata>> ok) {
        return new Loaded(new HashMap<>(ok.get(ClusterMetadata.TOPICS).getEntries()));
      } else if (rsp instanceof Replicator.NotFound) {
        return new Loaded(Map.of());
      }
      return new LoadFailed(rsp.getClass().getSimpleName(), local);
    });
  }

  private Behavior<Command> start() {
    ActorRef<Object> events = ctx.messageAdapter(Object.class, MembershipChanged::new);
    Cluster.get(system).subscriptions().tell(Subscribe.create(events.narrow(), ClusterEvent.MemberEvent.class));
    Cluster.get(system).subscriptions().tell(Subscribe.create(events.narrow(), ClusterEvent.ReachabilityEvent.class));
    if (replication.autoLeaderRebalance()) {
      timers.startTimerWithFixedDelay(PreferredLeaderTick.INSTANCE, replication.leaderImbalanceCheckInterval());
    }
    // membership events drive elections; this catches anything an event did not (it writes only what changed)
    timers.startTimerWithFixedDelay(ReconcileTick.INSTANCE, Duration.ofSeconds(2));
    push(new ArrayList<>(topics.values()), List.of()); // every node learns the current state at once
    reconcile("controller start");
    for (TopicMetadata t : new ArrayList<>(topics.values())) {
      switch (t.state()) {
        case CREATING -> awaitCreation(t);
        case DELETING -> deleteReplicas(t);
        default -> { }
      }
    }
    return stash.unstashAll(active());
  }

  // ------------------------------------------------------------------ active

  private Behavior<Command> active() {
    return Behaviors.receive(Command.class)
        .onMessage(Admin.class, m -> {
          onAdmin(m.request());
          return Behaviors.same();
        })
        .onMessage(AlterIsr.class, m -> {
          onAlterIsr(m);
          return Behaviors.same();
        })
        .onMessage(ControlledShutdown.class, m -> {
          onControlledShutdown(m);
          return Behaviors.same();
        })
        .onMessage(SyncTopics.class, m -> {
          m.replyTo().tell(new ReplicaManager.TopicsSnapshot(List.copyOf(topics.values())));
          return Behaviors.same();
        })
        .onMessage(MembershipChanged.class, m -> {
          if (m.event() instanceof ClusterEvent.MemberRemoved r) {
            shuttingDown.remove(r.member().address().toString());
          }
          if (m.event() instanceof ClusterEvent.ReachableMember r) {
            // pushes skipped it while it was unreachable: a replica there may still lead on what it knew before
            partitions.tell(new ReplicaManager.ToReplica(r.member().address().toString(),
                new ReplicaManager.TopicsChanged(List.copyOf(topics.values()), List.of())));
          }
          reconcile(m.event().getClass().getSimpleName());
          return Behaviors.same();
        })
        .onMessage(ReconcileTick.class, m -> {
          reconcile("periodic check");
          return Behaviors.same();
        })
        .onMessage(PreferredLeaderTick.class, m -> {
          preferredLeaders();
          return Behaviors.same();
        })
        .onMessage(WriteDone.class, m -> {
          Runnable r = afterWrite.remove(m.writeId());
          if (!m.ok()) {
            ctx.getLog().warn("Controller: a metadata write did not reach a majority of nodes in {} ms; it is kept "
                + "on this node and spreads by gossip", replication.metadataWriteTimeout().toMillis());
          }
          if (r != null) {
            r.run();
          }
          return Behaviors.same();
        })
        .onMessage(PartitionsDone.class, m -> {
          onPartitionsDone(m);
          return Behaviors.same();
        })
        .onMessage(Loaded.class, m -> Behaviors.same())
        .onMessage(LoadFailed.class, m -> Behaviors.same())
        .build();
  }

  /**
   * Writes topics (whole) and removals to Distributed Data with majority consistency, pushes them to every node's
   * replica manager, then runs {@code then} (also when the majority was not reached: the write stays local and
   * spreads by gossip).
   */
  private void write(List<TopicMetadata> changed, List<String> removed, Runnable then) {
    for (TopicMetadata t : changed) {
      topics.put(t.name(), t);
    }
    for (String r : removed) {
      topics.remove(r);
    }
    long id = nextWriteId++;
    if (then != null) {
      afterWrite.put(id, then);
    }
    replicator.askUpdate(
        replyTo -> new Replicator.Update<>(ClusterMetadata.TOPICS, LWWMap.create(),
            new Replicator.WriteMajority(replication.metadataWriteTimeout()), replyTo, map -> {
              LWWMap<String, TopicMetadata> m = map;
              for (TopicMetadata t : changed) {
                m = m.put(node, t.name(), t);
              }
              for (String r : removed) {
                m = m.remove(node, r);
              }
              return m;
            }),
        rsp -> new WriteDone(id, rsp instanceof Replicator.UpdateSuccess));
    push(changed, removed);
  }

  private void push(List<TopicMetadata> changed, List<String> removed) {
    ReplicaManager.TopicsChanged msg = new ReplicaManager.TopicsChanged(List.copyOf(changed), List.copyOf(removed));
    for (String address : liveBrokers(false)) {
      partitions.tell(new ReplicaManager.ToReplica(address, msg));
    }
  }

  /**
   * The first metadata version a controller starting now writes: above every version it loaded, and above every
   * version an earlier controller can have written, including writes that never reached a majority but were pushed to
   * the replica managers before that controller's node died (a manager keeps the highest version it was told, so a
   * new controller that reused those numbers would be ignored until its counter passed them: a chaos run saw
   * {@code __consumer_offsets-0} without a leader for minutes). Versions are the start time in ms times 1000 plus a
   * count of writes: an earlier controller started earlier and writes far fewer than 1000 versions per ms, so this
   * holds as long as the nodes' clocks differ by less than how long the earlier controller ran.
   *
   * @param maxLoaded the highest version in the metadata read at start (0 if none)
   * @param nowMillis the wall clock, ms since the epoch
   * @return the first version to write
   */
  static long firstVersion(long maxLoaded, long nowMillis) {
    return Math.max(maxLoaded + 1, nowMillis * 1000);
  }

  private TopicMetadata versioned(TopicMetadata t) {
    return new TopicMetadata(t.name(), t.topicId(), t.replicationFactor(), t.configs(), t.state(), t.partitions(),
        nextVersion++);
  }

  /** Live brokers (Up, reachable), sorted; without those shutting down if {@code electable}. */
  private List<String> liveBrokers(boolean electable) {
    akka.cluster.ClusterEvent.CurrentClusterState state = Cluster.get(system).state();
    Set<Member> unreachable = new HashSet<>();
    state.getUnreachable().forEach(unreachable::add);
    List<String> out = new ArrayList<>();
    for (Member m : state.getMembers()) {
      boolean up = m.status() == MemberStatus.up() || m.status() == MemberStatus.weaklyUp();
      boolean broker = settings.role().isEmpty() || m.hasRole(settings.role());
      String a = m.address().toString();
      if (up && broker && !unreachable.contains(m) && !(electable && shuttingDown.contains(a))) {
        out.add(a);
      }
    }
    out.sort(String::compareTo);
    return out;
  }

  // ------------------------------------------------------------------ elections

  /** Elects leaders for partitions whose leader is gone, drops dead replicas from ISRs, writes what changed. */
  private void reconcile(String why) {
    Set<String> live = new HashSet<>(liveBrokers(true));
    List<TopicMetadata> changed = new ArrayList<>();
    for (TopicMetadata t : topics.values()) {
      if (t.state() == TopicMetadata.State.DELETING) {
        continue;
      }
      List<PartitionMetadata> ps = new ArrayList<>(t.partitions().size());
      boolean any = false;
      for (PartitionMetadata p : t.partitions()) {
        PartitionMetadata elected = elect(p, live);
        PartitionMetadata n = expand(elected, t.replicationFactor(), live);
        if (n != elected) {
          ctx.getLog().info("Partition {}-{}: replicas {} -> {} (replication factor {})", t.name(), p.partition(),
              elected.replicas(), n.replicas(), t.replicationFactor());
        }
        if (n != p) {
          any = true;
          if (!n.leader().equals(p.leader())) {
            ctx.getLog().info("Partition {}-{}: leader {} -> {} in epoch {} ({}); ISR {}", t.name(), p.partition(),
                p.leader().isEmpty() ? "none" : p.leader(), n.leader().isEmpty() ? "none" : n.leader(),
                n.leaderEpoch(), why, n.isr());
          }
        }
        ps.add(n);
      }
      if (any) {
        changed.add(versioned(t.withPartitions(ps)));
      }
    }
    if (!changed.isEmpty()) {
      write(changed, List.of(), null);
    }
  }

  private static PartitionMetadata elect(PartitionMetadata p, Set<String> live) {
    List<String> isrLive = new ArrayList<>();
    for (String r : p.isr()) {
      if (live.contains(r)) {
        isrLive.add(r);
      }
    }
    if (p.hasLeader() && live.contains(p.leader())) {
      return isrLive.size() < p.isr().size() ? p.withIsr(isrLive) : p;
    }
    for (String r : p.replicas()) {
      if (isrLive.contains(r)) {
        return p.withLeader(r).withIsr(isrLive);
      }
    }
    if (p.hasLeader()) {
      // no in-sync replica alive: offline; the ISR keeps its last members, the first of them to return leads
      return new PartitionMetadata(p.partition(), p.replicas(), "", p.leaderEpoch() + 1, p.isr());
    }
    return p;
  }

  /**
   * An internal topic created while fewer brokers ran than its replication factor gets more replicas as brokers join
   * (Kafka instead waits to create it): the new replica starts as a follower outside the ISR, catches up, and the
   * leader adds it to the ISR.
   */
  private static PartitionMetadata expand(PartitionMetadata p, short rf, Set<String> live) {
    if (p.replicas().size() >= rf || !p.hasLeader()) {
      return p;
    }
    List<String> candidates = new ArrayList<>();
    for (String b : live) {
      if (!p.replicas().contains(b)) {
        candidates.add(b);
      }
    }
    if (candidates.isEmpty()) {
      return p;
    }
    candidates.sort(String::compareTo);
    List<String> replicas = new ArrayList<>(p.replicas());
    replicas.add(candidates.get(p.partition() % candidates.size()));
    return new PartitionMetadata(p.partition(), replicas, p.leader(), p.leaderEpoch(), p.isr());
  }

  private void preferredLeaders() {
    Set<String> live = new HashSet<>(liveBrokers(true));
    List<TopicMetadata> changed = new ArrayList<>();
    for (TopicMetadata t : topics.values()) {
      if (t.state() != TopicMetadata.State.READY) {
        continue;
      }
      List<PartitionMetadata> ps = new ArrayList<>(t.partitions());
      boolean any = false;
      for (int i = 0; i < ps.size(); i++) {
        PartitionMetadata p = ps.get(i);
        String preferred = p.replicas().get(0);
        if (!preferred.equals(p.leader()) && live.contains(preferred) && p.isr().contains(preferred)
            && live.contains(p.leader())) {
          ctx.getLog().info("Partition {}-{}: leadership back to its preferred replica {}", t.name(), p.partition(),
              preferred);
          ps.set(i, p.withLeader(preferred));
          any = true;
        }
      }
      if (any) {
        changed.add(versioned(t.withPartitions(ps)));
      }
    }
    if (!changed.isEmpty()) {
      write(changed, List.of(), null);
    }
  }

  private void onAlterIsr(AlterIsr m) {
    TopicMetadata t = topics.get(m.topic());
    PartitionMetadata p = t == null ? null : t.partition(m.partition());
    if (p == null) {
      m.replyTo().tell(new AlterIsrResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No partition " + m.topic() + "-"
          + m.partition()));
      return;
    }
    if (!p.leader().equals(m.leader()) || p.leaderEpoch() != m.leaderEpoch()) {
      m.replyTo().tell(new AlterIsrResult(ErrorCode.FENCED_LEADER_EPOCH, "Leader is " + p.leader() + " in epoch "
          + p.leaderEpoch()));
      return;
    }
    Set<String> live = new HashSet<>(liveBrokers(true));
    List<String> isr = new ArrayList<>();
    for (String r : m.isr()) {
      if (!p.replicas().contains(r)) {
        m.replyTo().tell(new AlterIsrResult(ErrorCode.INVALID_REQUEST, r + " is not a replica"));
        return;
      }
      if (p.isr().contains(r) || live.contains(r)) { // a node may only join while alive
        isr.add(r);
      }
    }
    if (!isr.contains(m.leader())) {
      m.replyTo().tell(new AlterIsrResult(ErrorCode.INVALID_REQUEST, "The ISR must hold the leader"));
      return;
    }
    PartitionMetadata n = p.withIsr(isr);
    if (n.isr().equals(p.isr())) {
      m.replyTo().tell(new AlterIsrResult(ErrorCode.NONE, null));
      push(List.of(t), List.of());
      return;
    }
    ctx.getLog().info("Partition {}-{}: ISR {} -> {}", m.topic(), m.partition(), p.isr(), n.isr());
    write(List.of(versioned(t.withPartition(n))), List.of(),
        () -> m.replyTo().tell(new AlterIsrResult(ErrorCode.NONE, null)));
  }

  private void onControlledShutdown(ControlledShutdown m) {
    shuttingDown.add(m.address());
    Set<String> live = new HashSet<>(liveBrokers(true));
    List<TopicMetadata> changed = new ArrayList<>();
    for (TopicMetadata t : topics.values()) {
      if (t.state() == TopicMetadata.State.DELETING) {
        continue;
      }
      List<PartitionMetadata> ps = new ArrayList<>(t.partitions());
      boolean any = false;
      for (int i = 0; i < ps.size(); i++) {
        PartitionMetadata p = ps.get(i);
        if (!p.replicas().contains(m.address())) {
          continue;
        }
        PartitionMetadata n = p;
        if (p.leader().equals(m.address())) {
          for (String r : p.replicas()) {
            if (!r.equals(m.address()) && p.isr().contains(r) && live.contains(r)) {
              n = p.withLeader(r);
              break;
            }
          }
        }
        if (!n.leader().equals(m.address()) && n.isr().contains(m.address())) {
          List<String> isr = new ArrayList<>(n.isr());
          isr.remove(m.address());
          n = n.withIsr(isr);
        }
        if (n != p) {
          ps.set(i, n);
          any = true;
        }
      }
      if (any) {
        changed.add(versioned(t.withPartitions(ps)));
      }
    }
    Map<String, TopicMetadata> after = new HashMap<>(topics);
    changed.forEach(t -> after.put(t.name(), t));
    int remaining = 0;
    for (TopicMetadata t : after.values()) {
      for (PartitionMetadata p : t.partitions()) {
        if (p.leader().equals(m.address())) {
          remaining++;
        }
      }
    }
    int left = remaining;
    ctx.getLog().info("Controlled shutdown of {}: {} topics changed, {} leaderships could not move", m.address(),
        changed.size(), left);
    if (changed.isEmpty()) {
      m.replyTo().tell(new ControlledShutdownResult(left));
    } else {
      write(changed, List.of(), () -> m.replyTo().tell(new ControlledShutdownResult(left)));
    }
  }

  // ------------------------------------------------------------------ admin

  private void onAdmin(AdminRequest req) {
    if (req instanceof AdminRequest.CreateTopic c) {
      onCreate(c);
    } else if (req instanceof AdminRequest.DeleteTopic d) {
      onDelete(d);
    } else if (req instanceof AdminRequest.ListTopics l) {
      List<String> names = new ArrayList<>();
      for (TopicMetadata t : topics.values()) {
        if (t.state() == TopicMetadata.State.READY && (l.includeInternal() || !TopicNames.isInternal(t.name()))) {
          names.add(t.name());
        }
      }
      l.replyTo().tell(new AdminResponse(ErrorCode.NONE, null, names, List.of()));
    } else if (req instanceof AdminRequest.DescribeTopics d) {
      List<TopicDescription> out = new ArrayList<>();
      if (d.names() == null || d.names().isEmpty()) {
        topics.values().stream().filter(t -> t.state() == TopicMetadata.State.READY)
            .forEach(t -> out.add(describe(t)));
      } else {
        for (String name : d.names()) {
          String invalid = TopicNames.invalidReason(name);
          if (invalid != null) { // as Kafka's metadata answer for a name no topic can have
            d.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
            return;
          }
          TopicMetadata t = topics.get(name);
          if (t == null || t.state() != TopicMetadata.State.READY) {
            d.replyTo().tell(AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "Topic " + name + " does not exist"));
            return;
          }
          out.add(describe(t));
        }
      }
      d.replyTo().tell(new AdminResponse(ErrorCode.NONE, null, List.of(), out));
    }
  }

  /**
   * An existing topic whose name differs from {@code name} only in '.' against '_', or {@code null}: Kafka refuses
   * such a topic (its metric names replace '.' by '_', so the two would share them), and so does Tributary, so that
   * a topic layout moves between the two unchanged.
   */
  private String collidingTopic(String name) {
    String unified = name.replace('.', '_');
    for (String other : topics.keySet()) {
      if (!other.equals(name) && other.replace('.', '_').equals(unified)) {
        return other;
      }
    }
    return null;
  }

  private void onCreate(AdminRequest.CreateTopic c) {
    String invalid = TopicNames.invalidReason(c.name());
    if (invalid != null) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
      return;
    }
    int partitionCount = c.partitions() == -1 ? settings.numPartitions() : c.partitions();
    if (partitionCount <= 0) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_PARTITIONS,
          "Number of partitions must be at least 1, was " + c.partitions()));
      return;
    }
    if (partitionCount > settings.maxPartitionsPerTopic()) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_PARTITIONS, "Number of partitions " + partitionCount
          + " is above the broker's max.partitions.per.topic " + settings.maxPartitionsPerTopic()));
      return;
    }
    Map<String, String> configs = c.configs() == null ? Map.of() : Map.copyOf(c.configs());
    TopicMetadata existing = topics.get(c.name());
    if (existing != null) {
      boolean sameRequest = existing.state() == TopicMetadata.State.CREATING
          && existing.partitions().size() == partitionCount && existing.configs().equals(configs);
      if (sameRequest) { // a retry of a creation that did not complete: wait for it again
        waiting.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(c.replyTo());
        awaitCreation(existing);
        return;
      }
      c.replyTo().tell(AdminResponse.failed(ErrorCode.TOPIC_ALREADY_EXISTS,
          existing.state() == TopicMetadata.State.DELETING ? "Topic " + c.name() + " is marked for deletion"
              : "Topic '" + c.name() + "' already exists."));
      return;
    }
    String collides = collidingTopic(c.name());
    if (collides != null) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION,
          "Topic '" + c.name() + "' collides with existing topic: " + collides));
      return;
    }
    List<String> brokers = liveBrokers(true);
    short rf = c.replicationFactor() == -1 ? settings.defaultReplicationFactor() : c.replicationFactor();
    if (rf <= 0) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REPLICATION_FACTOR,
          "Replication factor must be at least 1, was " + rf));
      return;
    }
    short placed = rf;
    if (TopicNames.isInternal(c.name()) && rf > brokers.size() && !brokers.isEmpty()) {
      placed = (short) brokers.size(); // internal topics: as many replicas as brokers now, more as they join
    }
    if (placed > brokers.size()) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REPLICATION_FACTOR,
          "Replication factor " + rf + " is larger than the number of live brokers " + brokers.size()));
      return;
    }
    try {
      TopicConfig.create(c.configs(), settings);
    } catch (TopicConfig.InvalidConfigException e) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_CONFIG, e.getMessage()));
      return;
    }
    int n = brokers.size();
    int start = Math.floorMod(c.name().hashCode(), n);
    List<PartitionMetadata> ps = new ArrayList<>(partitionCount);
    for (int p = 0; p < partitionCount; p++) {
      List<String> replicas = new ArrayList<>(placed);
      // leaders round-robin; followers shifted by a per-topic offset so that they spread too (as Kafka's assignment)
      int shift = 1 + Math.floorMod(c.name().hashCode() / 7, Math.max(1, n - 1));
      replicas.add(brokers.get((start + p) % n));
      for (int i = 1; i < placed; i++) {
        String r = brokers.get((start + p + shift + i - 1) % n);
        int k = 0;
        while (replicas.contains(r)) {
          r = brokers.get((start + p + shift + i - 1 + ++k) % n);
        }
        replicas.add(r);
      }
      ps.add(new PartitionMetadata(p, replicas, replicas.get(0), 0, replicas));
    }
    TopicMetadata t = versioned(new TopicMetadata(c.name(), UUID.randomUUID().toString(), rf, configs,
        TopicMetadata.State.CREATING, ps, 0));
    waiting.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(c.replyTo());
    write(List.of(t), List.of(), () -> awaitCreation(t));
  }

  /** Waits until every partition's leader reports its log (GetStatus through the router, retried). */
  private void awaitCreation(TopicMetadata t) {
    List<CompletableFuture<ErrorCode>> all = new ArrayList<>();
    long deadline = System.nanoTime() + settings.askTimeout().toNanos();
    for (int p = 0; p < t.partitions().size(); p++) {
      all.add(awaitLeader(t.name(), p, deadline).toCompletableFuture());
    }
    CompletableFuture<ErrorCode> done = CompletableFuture.allOf(all.toArray(new CompletableFuture[0]))
        .thenApply(v -> {
          for (CompletableFuture<ErrorCode> f : all) {
            if (f.join() != ErrorCode.NONE) {
              return f.join();
            }
          }
          return ErrorCode.NONE;
        });
    ctx.pipeToSelf(done, (error, ex) -> ex != null || error != ErrorCode.NONE
        ? new PartitionsDone(t.name(), t.topicId(), true, ErrorCode.REQUEST_TIMED_OUT,
            "Creating the partitions of " + t.name() + " did not complete in " + settings.askTimeout().toMillis()
                + " ms (" + (ex != null ? ex.getMessage() : error) + "); retry the same request to resume")
        : new PartitionsDone(t.name(), t.topicId(), true, ErrorCode.NONE, null));
  }

  /**
   * How long one status ask of {@link #awaitLeader} waits: short, so that a partition whose first leader's node died
   * right after the creation is found at its next leader within a second of the election, not after a whole ask
   * timeout (a create right after a node's SIGKILL took 11.8 s).
   */
  private static final Duration LEADER_STATUS_ATTEMPT = Duration.ofSeconds(1);

  private CompletionStage<ErrorCode> awaitLeader(String topic, int p, long deadlineNanos) {
    Duration attempt = settings.askTimeout().compareTo(LEADER_STATUS_ATTEMPT) < 0
        ? settings.askTimeout() : LEADER_STATUS_ATTEMPT;
    return AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionStatus>ask(partitions,
            replyTo -> new PartitionLeader.GetStatus(topic, p, replyTo), attempt, system.scheduler())
        .handle((status, ex) -> ex == null && status.error() == ErrorCode.NONE)
        .thenCompose(ok -> {
          // runs on a future's thread: only immutable values are used, never the actor context
          if (ok) {
            return CompletableFuture.completedFuture(ErrorCode.NONE);
          }
          if (System.nanoTime() > deadlineNanos) {
            return CompletableFuture.completedFuture(ErrorCode.REQUEST_TIMED_OUT);
          }
          return akka.pattern.Patterns.after(Duration.ofMillis(100), system.classicSystem().scheduler(),
              system.executionContext(), () -> awaitLeader(topic, p, deadlineNanos));
        });
  }

  private void onDelete(AdminRequest.DeleteTopic d) {
    String invalid = TopicNames.invalidReason(d.name());
    if (invalid != null) {
      d.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
      return;
    }
    if (TopicNames.CONSUMER_OFFSETS.equals(d.name())) {
      // every group's committed offsets live there (as Kafka, which refuses to delete its internal topics)
      d.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REQUEST,
          "Topic " + d.name() + " is an internal topic and cannot be deleted"));
      return;
    }
    TopicMetadata t = topics.get(d.name());
    if (t == null) {
      d.replyTo().tell(AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Topic " + d.name() + " does not exist"));
      return;
    }
    if (t.state() == TopicMetadata.State.CREATING) {
      replyWaiting(d.name(), AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Topic " + d.name() + " was deleted while it was being created"));
    }
    waiting.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(d.replyTo());
    if (t.state() == TopicMetadata.State.DELETING) {
      deleteReplicas(t);
      return;
    }
    TopicMetadata deleting = versioned(t.withState(TopicMetadata.State.DELETING));
    write(List.of(deleting), List.of(), () -> deleteReplicas(deleting));
  }

  /** Every replica on a live node deletes its log; replicas on nodes that are down keep theirs (noted in README). */
  private void deleteReplicas(TopicMetadata t) {
    Set<String> live = new HashSet<>(liveBrokers(false));
    List<CompletableFuture<PartitionLeader.PartitionAck>> acks = new ArrayList<>();
    for (PartitionMetadata p : t.partitions()) {
      for (String r : p.replicas()) {
        if (live.contains(r)) {
          acks.add(AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionAck>ask(partitions,
              replyTo -> new ReplicaManager.ToReplica(r,
                  new PartitionLeader.DeletePartition(t.name(), p.partition(), replyTo)),
              settings.askTimeout(), system.scheduler()).toCompletableFuture());
        }
      }
    }
    ctx.pipeToSelf(CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])), (v, ex) -> ex != null
        ? new PartitionsDone(t.name(), t.topicId(), false, ErrorCode.REQUEST_TIMED_OUT,
            "Deleting the partitions of " + t.name() + " did not complete: " + ex.getMessage()
                + " (retry the same request to resume)")
        : new PartitionsDone(t.name(), t.topicId(), false, ErrorCode.NONE, null));
  }

  private void onPartitionsDone(PartitionsDone done) {
    TopicMetadata t = topics.get(done.topic());
    if (t == null || !t.topicId().equals(done.topicId())) {
      return;
    }
    if (done.error() != ErrorCode.NONE) {
      replyWaiting(done.topic(), AdminResponse.failed(done.error(), done.message()));
      return;
    }
    if (done.creation() && t.state() == TopicMetadata.State.CREATING) {
      TopicMetadata ready = versioned(t.withState(TopicMetadata.State.READY));
      write(List.of(ready), List.of(), () -> replyWaiting(done.topic(),
          new AdminResponse(ErrorCode.NONE, null, List.of(), List.of(describe(ready)))));
    } else if (!done.creation() && t.state() == TopicMetadata.State.DELETING) {
      write(List.of(), List.of(done.topic()), () -> replyWaiting(done.topic(), AdminResponse.ok()));
    }
  }

  private void replyWaiting(String topic, AdminResponse response) {
    List<ActorRef<AdminResponse>> list = waiting.remove(topic);
    if (list != null) {
      list.forEach(r -> r.tell(response));
    }
  }

  private static TopicDescription describe(TopicMetadata t) {
    List<PartitionDescription> parts = new ArrayList<>(t.partitions().size());
    for (PartitionMetadata p : t.partitions()) {
      parts.add(new PartitionDescription(p.partition(), p.leader(), p.replicas(), p.isr(), p.leaderEpoch()));
    }
    return new TopicDescription(t.name(), t.topicId(), parts, new TreeMap<>(t.configs()));
  }
}
