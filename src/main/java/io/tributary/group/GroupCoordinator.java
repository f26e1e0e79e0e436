package io.tributary.group;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.typed.ClusterSingleton;
import akka.cluster.typed.ClusterSingletonSettings;
import akka.cluster.typed.SingletonActor;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.broker.BrokerSettings;
import io.tributary.cluster.Controller;
import io.tributary.group.assignor.Assignors;
import io.tributary.group.assignor.MemberSubscription;
import io.tributary.group.assignor.PartitionAssignor;
import io.tributary.group.assignor.TopicPartition;
import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.CborSerializable;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.GroupProtocol.AssignmentAck;
import io.tributary.protocol.GroupProtocol.AssignmentChanged;
import io.tributary.protocol.GroupProtocol.DeleteGroup;
import io.tributary.protocol.GroupProtocol.DescribeGroup;
import io.tributary.protocol.GroupProtocol.DescribeGroupResponse;
import io.tributary.protocol.GroupProtocol.GroupListing;
import io.tributary.protocol.GroupProtocol.GroupRequest;
import io.tributary.protocol.GroupProtocol.GroupResponse;
import io.tributary.protocol.GroupProtocol.Heartbeat;
import io.tributary.protocol.GroupProtocol.JoinGroup;
import io.tributary.protocol.GroupProtocol.JoinGroupResponse;
import io.tributary.protocol.GroupProtocol.LeaveGroup;
import io.tributary.protocol.GroupProtocol.ListGroups;
import io.tributary.protocol.GroupProtocol.ListGroupsResponse;
import io.tributary.protocol.GroupProtocol.MemberDescription;
import io.tributary.protocol.GroupProtocol.MemberEvent;
import io.tributary.protocol.GroupProtocol.MemberRemoved;
import io.tributary.protocol.GroupProtocol.OffsetCommit;
import io.tributary.protocol.GroupProtocol.OffsetFetch;
import io.tributary.protocol.GroupProtocol.OffsetFetchResponse;
import io.tributary.protocol.GroupProtocol.PartitionLag;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.GroupProtocol.ResetOffsets;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import io.tributary.record.Murmur2;
import io.tributary.record.RecordBatchBuilder;
import io.tributary.util.Completions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The group coordinator: a Cluster Singleton that runs every consumer group of the cluster.
 *
 * <h2>Membership and rebalancing</h2>
 * Members join with their subscription and member actor ({@link JoinGroup}); the coordinator watches the actor
 * (death watch) and expects heartbeats within {@code session.timeout.ms}. A join, leave, failure, subscription change
 * or a new partition/topic matching a subscription triggers a rebalance: after {@code group.initial.rebalance.delay.ms}
 * for a group that was empty (to let the others arrive), at once otherwise. A rebalance computes the target
 * assignment with the group's assignor, then runs up to two rounds, each a new generation pushed to every member as
 * {@link AssignmentChanged} and acknowledged with {@link AssignmentAck}:
 * <ol>
 *   <li>revocation: each member keeps only the partitions it owns that stay with it (cooperative-sticky), or nothing
 *       (eager assignors: range, roundrobin) — skipped when nothing has to be revoked;
 *   <li>assignment: once every revocation is acknowledged (or the member is gone), each member gets its target.
 * </ol>
 * A partition is pushed to a member only when no other member's acknowledged ownership holds it, so no partition is
 * ever owned by two live members. A static member ({@code group.instance.id}) that disappears keeps its partitions
 * reserved for {@code session.timeout.ms}; if it returns in time it gets them back with no rebalance.
 *
 * <h2>Offsets</h2>
 * Committed offsets live in the internal topic {@value GroupSettings#OFFSETS_TOPIC} (partition = murmur2(group) mod
 * {@code offsets.topic.num.partitions}), written with {@code acks=all} through the partition leaders, so they survive
 * the coordinator moving and a full restart; the coordinator loads them when it starts (answering
 * COORDINATOR_LOAD_IN_PROGRESS meanwhile) and keeps them in memory. One write at a time per offsets partition,
 * coalescing the commits that wait. Every {@code tributary.group.offsets-checkpoint-records} commits the live offsets
 * of a partition are written again and the records before them deleted (compaction).
 *
 * <p>Confinement: all state is on this actor's thread; futures only pipe results back to it.
 */
public final class GroupCoordinator extends AbstractBehavior<GroupCoordinator.Command> {

  /** Messages the coordinator accepts. */
  public interface Command {}

  /** A client's group request, forwarded by a gateway. */
  public record Request(@JsonProperty("request") GroupRequest request) implements Command, CborSerializable {
    @JsonCreator
    public Request {}
  }

  private interface Internal extends Command, akka.actor.NoSerializationVerificationNeeded {}

  private record Loaded(Map<String, Map<PartitionRef, PartitionOffset>> offsets) implements Internal {}

  private record LoadFailed(Throwable cause) implements Internal {}

  private enum StartLoad implements Internal {
    INSTANCE
  }

  /** How often member sessions are checked for expiry while any group has members. */
  private static final Duration TICK = Duration.ofMillis(250);

  private enum Tick implements Internal {
    INSTANCE
  }

  private enum RefreshMetadata implements Internal {
    INSTANCE
  }

  private record MetadataRefreshed(Map<String, Integer> partitionsPerTopic, String forGroup) implements Internal {}

  private record MemberTerminated(String groupId, String memberId) implements Internal {}

  private record RebalanceDue(String groupId) implements Internal {}

  private record RevocationTimeout(String groupId, int generation) implements Internal {}

  private record WriteDone(int partition, long writeId, ErrorCode error, long baseOffset) implements Internal {}

  // ------------------------------------------------------------------ state

  /** Group states as Kafka names them. */
  enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable
  }

  private static final class Member {
    final String memberId;
    final String instanceId;
    final String clientId;
    List<String> topics;
    String pattern;
    List<String> assignors;
    int sessionTimeoutMs;
    int rebalanceTimeoutMs;
    ActorRef<MemberEvent> ref;
    long lastHeartbeatNanos;
    /** Partitions the member acknowledged owning. */
    Set<PartitionRef> owned = new TreeSet<>(PARTITION_ORDER);
    /** The last assignment pushed, and its generation. */
    Set<PartitionRef> assigned = new TreeSet<>(PARTITION_ORDER);
    int pushedGeneration = -1;
    int ackedGeneration = -1;
    /** For a static member whose actor is gone: when its reservation ends (nanoTime), else 0. */
    long departedDeadlineNanos;

    Member(String memberId, String instanceId, String clientId) {
      this.memberId = memberId;
      this.instanceId = instanceId;
      this.clientId = clientId;
    }

    boolean present() {
      return departedDeadlineNanos == 0;
    }
  }

  private static final java.util.Comparator<PartitionRef> PARTITION_ORDER =
      java.util.Comparator.comparing(PartitionRef::topic).thenComparingInt(PartitionRef::partition);

  private static final class Group {
    final String groupId;
    final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    int generation;
    String assignor = "";
    GroupState state = GroupState.Empty;
    boolean rebalanceScheduled;
    /** While revoking: the generation whose acks are awaited. */
    int revokingGeneration = -1;

    Group(String groupId) {
      this.groupId = groupId;
    }

    boolean hasPresentMembers() {
      return members.values().stream().anyMatch(Member::present);
    }
  }

  private record PendingWrite(List<byte[][]> records, Consumer<ErrorCode> onDone, boolean checkpoint) {}

  private static final int WRITE_MAX_BYTES = 512 * 1024;

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final BrokerSettings settings;
  private final GroupSettings groupSettings;
  private final ActorRef<PartitionLeader.Command> partitions;
  private final ActorRef<Controller.Command> controller;
  private boolean loaded;
  private final Map<String, Map<PartitionRef, PartitionOffset>> offsets = new TreeMap<>();
  private final Map<String, Group> groups = new TreeMap<>();
  private Map<String, Integer> metadata = Map.of();
  private final List<ArrayDeque<PendingWrite>> writeQueues = new ArrayList<>();
  private final Map<Long, List<PendingWrite>> inFlight = new HashMap<>();
  private final boolean[] writing;
  private final int[] commitsSinceCheckpoint;
  private final boolean[] checkpointQueued;
  /** Base offset of the first part of the checkpoint being written; -1 none yet, -2 a part failed. */
  private final long[] checkpointStart;
  private long nextWriteId;

  // ------------------------------------------------------------------ wiring

  /** Starts the singleton on the oldest broker node and returns its proxy. */
  public static ActorRef<Command> init(
      ActorSystem<?> system,
      BrokerSettings settings,
      GroupSettings groupSettings,
      ActorRef<PartitionLeader.Command> partitions,
      ActorRef<Controller.Command> controller) {
    Behavior<Command> behavior = Behaviors.<Command>supervise(Behaviors.setup(ctx -> Behaviors.withTimers(
            timers -> new GroupCoordinator(ctx, timers, settings, groupSettings, partitions, controller))))
        .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
    SingletonActor<Command> singleton = SingletonActor.of(behavior, "tributary-group-coordinator");
    if (!settings.role().isEmpty()) {
      singleton = singleton.withSettings(ClusterSingletonSettings.create(system).withRole(settings.role()));
    }
    return ClusterSingleton.get(system).init(singleton);
  }

  private GroupCoordinator(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      BrokerSettings settings,
      GroupSettings groupSettings,
      ActorRef<PartitionLeader.Command> partitions,
      ActorRef<Controller.Command> controller) {
    super(ctx);
    this.ctx = ctx;
    this.timers = timers;
    this.settings = settings;
    this.groupSettings = groupSettings;
    this.partitions = partitions;
    this.controller = controller;
    int n = groupSettings.offsetsTopicPartitions();
    for (int i = 0; i < n; i++) {
      writeQueues.add(new ArrayDeque<>());
    }
    this.writing = new boolean[n];
    this.commitsSinceCheckpoint = new int[n];
    this.checkpointQueued = new boolean[n];
    this.checkpointStart = new long[n];
    java.util.Arrays.fill(checkpointStart, -1);
    ctx.getSelf().tell(StartLoad.INSTANCE);
    timers.startTimerWithFixedDelay(RefreshMetadata.INSTANCE, groupSettings.metadataRefreshInterval());
  }

  /** The {@value GroupSettings#OFFSETS_TOPIC} partition of {@code groupId}. */
  public static int offsetsPartition(String groupId, int partitions) {
    return Murmur2.partitionForKey(groupId.getBytes(StandardCharsets.UTF_8), partitions);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Request.class, this::onRequest)
        .onMessage(StartLoad.class, m -> startLoad())
        .onMessage(Loaded.class, this::onLoaded)
        .onMessage(LoadFailed.class, this::onLoadFailed)
        .onMessage(Tick.class, m -> onTick())
        .onMessage(RefreshMetadata.class, m -> refreshMetadata(null))
        .onMessage(MetadataRefreshed.class, this::onMetadata)
        .onMessage(MemberTerminated.class, this::onMemberTerminated)
        .onMessage(RebalanceDue.class, this::onRebalanceDue)
        .onMessage(RevocationTimeout.class, this::onRevocationTimeout)
        .onMessage(WriteDone.class, this::onWriteDone)
        .build();
  }

  // ------------------------------------------------------------------ loading

  private Behavior<Command> startLoad() {
    CompletionStage<Map<String, Map<PartitionRef, PartitionOffset>>> load =
        OffsetsLoader.load(ctx.getSystem(), controller, partitions, settings, groupSettings);
    ctx.pipeToSelf(load, (result, ex) -> ex != null ? new LoadFailed(ex) : new Loaded(result));
    return this;
  }

  private Behavior<Command> onLoaded(Loaded m) {
    offsets.clear();
    offsets.putAll(m.offsets());
    for (String g : offsets.keySet()) {
      groups.computeIfAbsent(g, Group::new);
    }
    loaded = true;
    ctx.getLog().info("Group coordinator loaded committed offsets of {} groups", offsets.size());
    refreshMetadata(null);
    return this;
  }

  private Behavior<Command> onLoadFailed(LoadFailed m) {
    ctx.getLog().warn("Loading committed offsets failed ({}); retrying", m.cause().toString());
    timers.startSingleTimer(StartLoad.INSTANCE, Duration.ofSeconds(1));
    return this;
  }

  // ------------------------------------------------------------------ requests

  private Behavior<Command> onRequest(Request m) {
    GroupRequest r = m.request();
    if (!ProtocolVersions.isSupported(r.version())) {
      if (r instanceof ListGroups l) {
        l.replyTo().tell(new ListGroupsResponse(ErrorCode.UNSUPPORTED_VERSION, List.of()));
      } else {
        fail(r, ErrorCode.UNSUPPORTED_VERSION, "protocol version " + r.version() + " is not supported");
      }
      return this;
    }
    if (r instanceof ListGroups l) {
      List<GroupListing> out = new ArrayList<>();
      for (Group g : groups.values()) {
        if (g.hasPresentMembers() || offsets.containsKey(g.groupId) || !g.members.isEmpty()) {
          out.add(new GroupListing(g.groupId, g.state.name()));
        }
      }
      l.replyTo().tell(new ListGroupsResponse(loaded ? ErrorCode.NONE : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, out));
      return this;
    }
    String invalid = r.groupId() == null || r.groupId().isEmpty() ? "group.id must not be empty" : null;
    if (invalid == null && r.groupId().length() > 255) {
      invalid = "group.id is longer than 255 characters";
    }
    if (invalid != null) {
      fail(r, ErrorCode.INVALID_GROUP_ID, invalid);
      return this;
    }
    if (!loaded) {
      fail(r, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "the group coordinator is loading committed offsets");
      return this;
    }
    if (r instanceof JoinGroup j) {
      onJoin(j);
    } else if (r instanceof Heartbeat h) {
      onHeartbeat(h);
    } else if (r instanceof AssignmentAck a) {
      onAck(a);
    } else if (r instanceof LeaveGroup l) {
      onLeave(l);
    } else if (r instanceof OffsetCommit c) {
      onCommit(c);
    } else if (r instanceof OffsetFetch f) {
      onOffsetFetch(f);
    } else if (r instanceof DescribeGroup d) {
      onDescribe(d);
    } else if (r instanceof ResetOffsets reset) {
      onReset(reset);
    } else if (r instanceof DeleteGroup d) {
      onDeleteGroup(d);
    }
    return this;
  }

  /** Answers any request with an error of the right response type. */
  private static void fail(GroupRequest r, ErrorCode error, String message) {
    GroupProtocol.fail(r, error, message);
  }

  // --- join

  private void onJoin(JoinGroup j) {
    if (j.sessionTimeoutMs() < groupSettings.minSessionTimeoutMs()
        || j.sessionTimeoutMs() > groupSettings.maxSessionTimeoutMs()) {
      fail(j, ErrorCode.INVALID_SESSION_TIMEOUT, "session.timeout.ms " + j.sessionTimeoutMs() + " is outside ["
          + groupSettings.minSessionTimeoutMs() + ", " + groupSettings.maxSessionTimeoutMs() + "]");
      return;
    }
    if (j.assignors() == null || j.assignors().isEmpty()) {
      fail(j, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "no partition.assignment.strategy given");
      return;
    }
    for (String a : j.assignors()) {
      if (!Assignors.isKnown(a)) {
        fail(j, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "unknown assignor " + a + " (known: " + Assignors.names() + ")");
        return;
      }
    }
    if (j.topicPattern() != null) {
      try {
        Pattern.compile(j.topicPattern());
      } catch (RuntimeException e) {
        fail(j, ErrorCode.INVALID_REQUEST, "invalid topic pattern: " + e.getMessage());
        return;
      }
    }
    Group g = groups.computeIfAbsent(j.groupId(), Group::new);
    if (!g.members.isEmpty() && commonAssignor(g, j.assignors()) == null) {
      fail(j, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "the member's assignors " + j.assignors()
          + " share none with the group's members");
      return;
    }
    Member m;
    boolean rebalance;
    if (j.memberId() == null || j.memberId().isEmpty()) {
      Member previous = j.groupInstanceId() == null ? null : findStatic(g, j.groupInstanceId());
      String id = (j.clientId() == null || j.clientId().isEmpty() ? "consumer" : j.clientId()) + "-"
          + UUID.randomUUID();
      m = new Member(id, j.groupInstanceId(), j.clientId());
      if (previous != null) {
        // a static member comes back: it takes over the old member's partitions, no rebalance
        g.members.remove(previous.memberId);
        if (previous.present() && previous.ref != null && !previous.ref.equals(j.member())) {
          previous.ref.tell(new MemberRemoved(g.groupId, previous.memberId, ErrorCode.FENCED_INSTANCE_ID,
              "a newer member with group.instance.id " + j.groupInstanceId() + " joined"));
          ctx.unwatch(previous.ref);
        }
        m.owned = previous.owned;
        m.assigned = previous.assigned;
        rebalance = !sameSubscription(previous, j);
      } else {
        m.owned.addAll(j.owned() == null ? List.of() : j.owned());
        rebalance = true;
      }
      boolean wasEmpty = !g.hasPresentMembers();
      g.members.put(m.memberId, m);
      if (!timers.isTimerActive(Tick.INSTANCE)) { // session expiry checks, only while some group has members
        timers.startTimerWithFixedDelay(Tick.INSTANCE, TICK);
      }
      update(m, j);
      if (rebalance) {
        scheduleRebalance(g, wasEmpty);
      } else {
        push(g, m, g.generation, m.assigned);
      }
    } else {
      m = g.members.get(j.memberId());
      if (m == null) {
        fail(j, ErrorCode.UNKNOWN_MEMBER_ID, "member " + j.memberId() + " is not in group " + g.groupId
            + " (rejoin with an empty member id)");
        return;
      }
      rebalance = !sameSubscription(m, j);
      update(m, j);
      if (rebalance) {
        scheduleRebalance(g, false);
      } else if (g.revokingGeneration < 0 && !g.rebalanceScheduled) {
        push(g, m, g.generation, m.assigned); // a rejoin after a lost push: send the current assignment again
      }
    }
    j.replyTo().tell(new JoinGroupResponse(ErrorCode.NONE, null, m.memberId, g.generation));
  }

  private void update(Member m, JoinGroup j) {
    m.topics = j.topics() == null ? List.of() : List.copyOf(j.topics());
    m.pattern = j.topicPattern();
    m.assignors = List.copyOf(j.assignors());
    m.sessionTimeoutMs = j.sessionTimeoutMs();
    m.rebalanceTimeoutMs = Math.max(1000, j.rebalanceTimeoutMs());
    m.lastHeartbeatNanos = System.nanoTime();
    m.departedDeadlineNanos = 0;
    if (m.ref == null || !m.ref.equals(j.member())) {
      if (m.ref != null) {
        ctx.unwatch(m.ref);
      }
      m.ref = j.member();
      ctx.watchWith(m.ref, new MemberTerminated(j.groupId(), m.memberId));
    }
  }

  private static boolean sameSubscription(Member m, JoinGroup j) {
    List<String> topics = j.topics() == null ? List.of() : j.topics();
    return m.topics != null && new HashSet<>(m.topics).equals(new HashSet<>(topics))
        && java.util.Objects.equals(m.pattern, j.topicPattern()) && m.assignors != null
        && m.assignors.equals(j.assignors());
  }

  private static Member findStatic(Group g, String instanceId) {
    for (Member m : g.members.values()) {
      if (instanceId.equals(m.instanceId)) {
        return m;
      }
    }
    return null;
  }

  /** The assignor every member (plus {@code extra}) supports, preferring the first member's order. */
  private static String commonAssignor(Group g, List<String> extra) {
    List<List<String>> prefs = new ArrayList<>();
    for (Member m : g.members.values()) {
      prefs.add(m.assignors);
    }
    if (extra != null) {
      prefs.add(extra);
    }
    if (prefs.isEmpty()) {
      return null;
    }
    for (String candidate : prefs.get(0)) {
      if (prefs.stream().allMatch(p -> p.contains(candidate))) {
        return candidate;
      }
    }
    return null;
  }

  // --- heartbeat, ack, leave

  private void onHeartbeat(Heartbeat h) {
    Group g = groups.get(h.groupId());
    Member m = g == null ? null : g.members.get(h.memberId());
    if (m == null || !m.present()) {
      h.replyTo().tell(new GroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
          "member " + h.memberId() + " is not in group " + h.groupId(), g == null ? -1 : g.generation));
      return;
    }
    m.lastHeartbeatNanos = System.nanoTime();
    if (m.pushedGeneration > m.ackedGeneration || g.rebalanceScheduled) {
      h.replyTo().tell(new GroupResponse(ErrorCode.REBALANCE_IN_PROGRESS, "the group is rebalancing", g.generation));
    } else if (h.generation() != m.ackedGeneration) {
      h.replyTo().tell(new GroupResponse(ErrorCode.ILLEGAL_GENERATION,
          "generation " + h.generation() + " is not the member's current " + m.ackedGeneration, g.generation));
    } else {
      h.replyTo().tell(new GroupResponse(ErrorCode.NONE, null, g.generation));
    }
  }

  private void onAck(AssignmentAck a) {
    Group g = groups.get(a.groupId());
    Member m = g == null ? null : g.members.get(a.memberId());
    if (m == null || a.generation() != m.pushedGeneration) {
      return; // stale
    }
    m.ackedGeneration = a.generation();
    m.lastHeartbeatNanos = System.nanoTime();
    m.owned = new TreeSet<>(PARTITION_ORDER);
    // the member may only own what it was given
    for (PartitionRef p : a.owned()) {
      if (m.assigned.contains(p)) {
        m.owned.add(p);
      }
    }
    maybeFinishRevocation(g);
    updateState(g);
  }

  private void onLeave(LeaveGroup l) {
    Group g = groups.get(l.groupId());
    Member m = g == null ? null : g.members.get(l.memberId());
    if (m == null) {
      l.replyTo().tell(new GroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
          "member " + l.memberId() + " is not in group " + l.groupId(), -1));
      return;
    }
    removeMember(g, m, "left the group");
    l.replyTo().tell(new GroupResponse(ErrorCode.NONE, null, g.generation));
  }

  private Behavior<Command> onMemberTerminated(MemberTerminated t) {
    Group g = groups.get(t.groupId());
    Member m = g == null ? null : g.members.get(t.memberId());
    if (m != null && m.present()) {
      if (m.instanceId != null) {
        // a static member keeps its partitions reserved for its session timeout
        m.departedDeadlineNanos = System.nanoTime() + Duration.ofMillis(m.sessionTimeoutMs).toNanos();
        ctx.getLog().info("Static member {} of group {} is gone; its partitions wait {} ms for it", m.instanceId,
            g.groupId, m.sessionTimeoutMs);
        maybeFinishRevocation(g);
      } else {
        removeMember(g, m, "its actor terminated");
      }
    }
    return this;
  }

  private void removeMember(Group g, Member m, String why) {
    g.members.remove(m.memberId);
    if (m.ref != null) {
      ctx.unwatch(m.ref);
    }
    ctx.getLog().info("Member {} of group {} removed: {}", m.memberId, g.groupId, why);
    if (g.hasPresentMembers()) {
      scheduleRebalance(g, false);
    } else {
      g.revokingGeneration = -1;
      g.rebalanceScheduled = false;
      timers.cancel("rebalance-" + g.groupId);
    }
    maybeFinishRevocation(g);
    updateState(g);
  }

  private Behavior<Command> onTick() {
    long now = System.nanoTime();
    boolean anyMembers = false;
    for (Group g : new ArrayList<>(groups.values())) {
      for (Member m : new ArrayList<>(g.members.values())) {
        if (!m.present()) {
          if (now > m.departedDeadlineNanos) {
            removeMember(g, m, "static member did not return within session.timeout.ms");
          }
        } else if (now - m.lastHeartbeatNanos > Duration.ofMillis(m.sessionTimeoutMs).toNanos()) {
          if (m.ref != null) {
            m.ref.tell(new MemberRemoved(g.groupId, m.memberId, ErrorCode.UNKNOWN_MEMBER_ID,
                "no heartbeat within session.timeout.ms " + m.sessionTimeoutMs));
          }
          removeMember(g, m, "no heartbeat within session.timeout.ms");
        }
      }
      anyMembers |= !g.members.isEmpty();
    }
    if (!anyMembers) {
      timers.cancel(Tick.INSTANCE); // an idle coordinator does not wake 4 times a second; the next join restarts it
    }
    return this;
  }

  // ------------------------------------------------------------------ rebalancing

  private void scheduleRebalance(Group g, boolean groupWasEmpty) {
    if (g.rebalanceScheduled) {
      return;
    }
    g.rebalanceScheduled = true;
    g.state = GroupState.PreparingRebalance;
    Duration delay = groupWasEmpty ? groupSettings.initialRebalanceDelay() : Duration.ZERO;
    if (delay.isZero()) {
      ctx.getSelf().tell(new RebalanceDue(g.groupId));
    } else {
      timers.startSingleTimer("rebalance-" + g.groupId, new RebalanceDue(g.groupId), delay);
    }
  }

  private Behavior<Command> onRebalanceDue(RebalanceDue r) {
    Group g = groups.get(r.groupId());
    if (g == null || !g.rebalanceScheduled) {
      return this;
    }
    if (g.revokingGeneration >= 0) {
      return this; // a revocation round is running; it re-plans when it completes
    }
    refreshMetadata(g.groupId);
    return this;
  }

  private Behavior<Command> refreshMetadata(String forGroup) {
    CompletionStage<AdminResponse> answer = Completions.direct(AskPattern.ask(controller,
        replyTo -> new Controller.Admin(new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, List.of(), replyTo)),
        settings.askTimeout(), ctx.getSystem().scheduler()));
    ctx.pipeToSelf(answer, (resp, ex) -> {
      Map<String, Integer> counts = null;
      if (ex == null && resp.error() == ErrorCode.NONE) {
        counts = new HashMap<>();
        for (TopicDescription t : resp.topics()) {
          counts.put(t.name(), t.partitions().size());
        }
      }
      return new MetadataRefreshed(counts, forGroup);
    });
    return this;
  }

  private Behavior<Command> onMetadata(MetadataRefreshed m) {
    if (m.partitionsPerTopic() == null) {
      if (m.forGroup() != null) { // the controller did not answer: try again shortly
        timers.startSingleTimer("rebalance-" + m.forGroup(), new RebalanceDue(m.forGroup()), Duration.ofMillis(500));
      }
      return this;
    }
    Map<String, Integer> before = metadata;
    metadata = Map.copyOf(m.partitionsPerTopic());
    Set<String> deleted = new HashSet<>(before.keySet());
    deleted.removeAll(metadata.keySet());
    if (!deleted.isEmpty()) {
      forgetOffsetsOf(deleted);
    }
    if (!before.equals(metadata)) {
      for (Group g : groups.values()) {
        if (g.hasPresentMembers() && !subscribed(g, before).equals(subscribed(g, metadata))) {
          scheduleRebalance(g, false); // no-op for a group already waiting for this metadata
        }
      }
    }
    if (m.forGroup() != null) {
      Group g = groups.get(m.forGroup());
      if (g != null && g.rebalanceScheduled && g.revokingGeneration < 0) {
        rebalance(g);
      }
    }
    return this;
  }

  /** Subscribed topics of the group that exist in {@code meta}, with their partition counts. */
  private static Map<String, Integer> subscribed(Group g, Map<String, Integer> meta) {
    Map<String, Integer> out = new TreeMap<>();
    for (Member m : g.members.values()) {
      for (String t : topicsOf(m, meta)) {
        out.put(t, meta.get(t));
      }
    }
    return out;
  }

  private static Set<String> topicsOf(Member m, Map<String, Integer> meta) {
    Set<String> out = new TreeSet<>();
    for (String t : m.topics) {
      if (meta.containsKey(t)) {
        out.add(t);
      }
    }
    if (m.pattern != null) {
      Pattern p = Pattern.compile(m.pattern);
      for (String t : meta.keySet()) {
        if (!TopicNames.isInternal(t) && p.matcher(t).matches()) {
          out.add(t);
        }
      }
    }
    return out;
  }

  /** Plans and starts the next round: a revocation round if anything must be revoked, else the assignment round. */
  private void rebalance(Group g) {
    g.rebalanceScheduled = false;
    timers.cancel("rebalance-" + g.groupId);
    List<Member> present = new ArrayList<>();
    for (Member m : g.members.values()) {
      if (m.present()) {
        present.add(m);
      }
    }
    if (present.isEmpty()) {
      updateState(g);
      return;
    }
    String assignorName = commonAssignor(g, null);
    if (assignorName == null) {
      assignorName = Assignors.DEFAULT;
    }
    g.assignor = assignorName;
    PartitionAssignor assignor = Assignors.byName(assignorName);
    Map<String, Integer> partitionsPerTopic = subscribed(g, metadata);
    Map<String, MemberSubscription> subs = new LinkedHashMap<>();
    Set<PartitionRef> reserved = new HashSet<>();
    for (Member m : g.members.values()) {
      if (m.present()) {
        Set<TopicPartition> owned = new TreeSet<>();
        for (PartitionRef p : m.owned) {
          owned.add(new TopicPartition(p.topic(), p.partition()));
        }
        subs.put(m.memberId, new MemberSubscription(m.memberId, m.instanceId, topicsOf(m, metadata), owned));
      } else {
        reserved.addAll(m.assigned); // a departed static member's partitions wait for it
      }
    }
    Map<String, Set<TopicPartition>> raw = assignor.assign(partitionsPerTopic, subs);
    Map<String, Set<PartitionRef>> target = new HashMap<>();
    for (Member m : present) {
      Set<PartitionRef> t = new TreeSet<>(PARTITION_ORDER);
      for (TopicPartition tp : raw.getOrDefault(m.memberId, Set.of())) {
        PartitionRef p = new PartitionRef(tp.topic(), tp.partition());
        if (!reserved.contains(p)) {
          t.add(p);
        }
      }
      target.put(m.memberId, t);
    }
    boolean needRevocation = false;
    Map<String, Set<PartitionRef>> keep = new HashMap<>();
    for (Member m : present) {
      Set<PartitionRef> k = new TreeSet<>(PARTITION_ORDER);
      if (assignor.cooperative() || sameAssignment(present, target)) {
        k.addAll(m.owned);
        k.retainAll(target.get(m.memberId));
      }
      keep.put(m.memberId, k);
      // what the member owns, or was last given without acknowledging yet, beyond what it keeps
      Set<PartitionRef> holding = new TreeSet<>(PARTITION_ORDER);
      holding.addAll(m.owned);
      if (m.pushedGeneration > m.ackedGeneration) {
        holding.addAll(m.assigned);
      }
      if (!k.containsAll(holding)) {
        needRevocation = true;
      }
    }
    if (needRevocation) {
      g.generation++;
      g.revokingGeneration = g.generation;
      for (Member m : present) {
        push(g, m, g.generation, keep.get(m.memberId));
      }
      int timeout = present.stream().mapToInt(m -> m.rebalanceTimeoutMs).max().orElse(300_000);
      timers.startSingleTimer("revoke-" + g.groupId, new RevocationTimeout(g.groupId, g.generation),
          Duration.ofMillis(timeout));
      g.state = GroupState.PreparingRebalance;
      return;
    }
    // every partition of the target is free of other owners: assign
    Map<String, Set<PartitionRef>> safeTargets = new HashMap<>();
    boolean changed = false;
    for (Member m : present) {
      Set<PartitionRef> safe = new TreeSet<>(PARTITION_ORDER);
      for (PartitionRef p : target.get(m.memberId)) {
        if (!ownedByOther(g, m, p)) {
          safe.add(p);
        }
      }
      safeTargets.put(m.memberId, safe);
      if (!safe.equals(m.assigned) || m.ackedGeneration != m.pushedGeneration || m.pushedGeneration != g.generation) {
        changed = true;
      }
    }
    if (!changed) { // nothing moves: no new generation
      updateState(g);
      return;
    }
    g.generation++;
    for (Member m : present) {
      push(g, m, g.generation, safeTargets.get(m.memberId));
    }
    g.state = GroupState.CompletingRebalance;
    updateState(g);
  }

  private static boolean sameAssignment(List<Member> present, Map<String, Set<PartitionRef>> target) {
    for (Member m : present) {
      if (!m.owned.equals(target.get(m.memberId)) || m.pushedGeneration > m.ackedGeneration) {
        return false;
      }
    }
    return true;
  }

  private static boolean ownedByOther(Group g, Member self, PartitionRef p) {
    for (Member o : g.members.values()) {
      if (o != self && (o.owned.contains(p) || (o.pushedGeneration > o.ackedGeneration && o.assigned.contains(p))
          || (!o.present() && o.assigned.contains(p)))) {
        return true;
      }
    }
    return false;
  }

  private void push(Group g, Member m, int generation, Set<PartitionRef> assigned) {
    m.assigned = new TreeSet<>(PARTITION_ORDER);
    m.assigned.addAll(assigned);
    m.pushedGeneration = generation;
    if (m.ref != null) {
      m.ref.tell(new AssignmentChanged(g.groupId, m.memberId, generation, g.assignor, List.copyOf(m.assigned)));
    }
  }

  private void maybeFinishRevocation(Group g) {
    if (g.revokingGeneration < 0) {
      return;
    }
    for (Member m : g.members.values()) {
      if (inRevocationRound(g, m) && m.ackedGeneration < g.revokingGeneration) {
        return;
      }
    }
    timers.cancel("revoke-" + g.groupId);
    g.revokingGeneration = -1;
    g.rebalanceScheduled = true;
    refreshMetadata(g.groupId);
  }

  /**
   * Whether the running revocation round waits for {@code m}: a present member the round's generation was pushed to.
   * A member that joined after the round started holds nothing the round revokes; the next round includes it.
   */
  private static boolean inRevocationRound(Group g, Member m) {
    return m.present() && m.pushedGeneration >= g.revokingGeneration;
  }

  private Behavior<Command> onRevocationTimeout(RevocationTimeout t) {
    Group g = groups.get(t.groupId());
    if (g == null || g.revokingGeneration != t.generation()) {
      return this;
    }
    for (Member m : new ArrayList<>(g.members.values())) {
      if (inRevocationRound(g, m) && m.ackedGeneration < t.generation()) {
        if (m.ref != null) {
          m.ref.tell(new MemberRemoved(g.groupId, m.memberId, ErrorCode.REBALANCE_IN_PROGRESS,
              "did not give up its partitions within max.poll.interval.ms"));
        }
        g.members.remove(m.memberId);
        if (m.ref != null) {
          ctx.unwatch(m.ref);
        }
      }
    }
    maybeFinishRevocation(g);
    return this;
  }

  private void updateState(Group g) {
    if (!g.hasPresentMembers() && g.members.isEmpty()) {
      g.state = GroupState.Empty;
    } else if (g.rebalanceScheduled || g.revokingGeneration >= 0) {
      g.state = GroupState.PreparingRebalance;
    } else {
      boolean allAcked = g.members.values().stream()
          .allMatch(m -> !m.present() || m.ackedGeneration >= m.pushedGeneration);
      g.state = allAcked ? GroupState.Stable : GroupState.CompletingRebalance;
    }
  }

  // ------------------------------------------------------------------ offsets

  private void onCommit(OffsetCommit c) {
    Group g = groups.computeIfAbsent(c.groupId(), Group::new);
    for (PartitionOffset o : c.offsets()) {
      if (o.offset() < 0) {
        c.replyTo().tell(new GroupResponse(ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
            "offset " + o.offset() + " for " + o.topic() + "-" + o.partition() + " is negative", g.generation));
        return;
      }
    }
    if (c.memberId() == null || c.memberId().isEmpty()) {
      if (c.generation() != -1 || g.hasPresentMembers()) {
        c.replyTo().tell(new GroupResponse(g.hasPresentMembers() ? ErrorCode.UNKNOWN_MEMBER_ID
            : ErrorCode.ILLEGAL_GENERATION, "group " + g.groupId + " has active members: only its members can commit",
            g.generation));
        return;
      }
    } else {
      Member m = g.members.get(c.memberId());
      if (m == null) {
        c.replyTo().tell(new GroupResponse(ErrorCode.UNKNOWN_MEMBER_ID,
            "member " + c.memberId() + " is not in group " + g.groupId, g.generation));
        return;
      }
      // the current generation, or the one the member last acknowledged while a push is on its way: partitions it
      // acknowledged owning have not been given to anyone else, so their offsets are still its to commit
      boolean current = c.generation() == m.pushedGeneration;
      boolean previousStillOwned = c.generation() == m.ackedGeneration && m.ackedGeneration >= 0;
      if (!current && !previousStillOwned) {
        c.replyTo().tell(new GroupResponse(ErrorCode.ILLEGAL_GENERATION, "generation " + c.generation()
            + " is stale: the member's current generation is " + m.pushedGeneration, g.generation));
        return;
      }
      for (PartitionOffset o : c.offsets()) {
        PartitionRef p = new PartitionRef(o.topic(), o.partition());
        if (current ? !m.owned.contains(p) && !m.assigned.contains(p) : !m.owned.contains(p)) {
          c.replyTo().tell(new GroupResponse(ErrorCode.ILLEGAL_GENERATION, "partition " + p
              + " is not assigned to member " + m.memberId + " in generation " + m.pushedGeneration, g.generation));
          return;
        }
      }
    }
    if (c.offsets().isEmpty()) {
      c.replyTo().tell(new GroupResponse(ErrorCode.NONE, null, g.generation));
      return;
    }
    writeOffsets(c.groupId(), c.offsets(), error -> c.replyTo().tell(new GroupResponse(error,
        error == ErrorCode.NONE ? null : "storing the offsets failed: " + error, g.generation)));
  }

  private void writeOffsets(String groupId, List<PartitionOffset> list, Consumer<ErrorCode> onDone) {
    List<byte[][]> records = new ArrayList<>();
    for (PartitionOffset o : list) {
      records.add(new byte[][] {OffsetRecords.key(groupId, o.topic(), o.partition()),
          o.offset() < 0 ? null : OffsetRecords.value(o.offset(), o.metadata())});
    }
    int p = offsetsPartition(groupId, groupSettings.offsetsTopicPartitions());
    writeQueues.get(p).add(new PendingWrite(records, error -> {
      if (error == ErrorCode.NONE) {
        Map<PartitionRef, PartitionOffset> m = offsets.computeIfAbsent(groupId, k -> new TreeMap<>(PARTITION_ORDER));
        for (PartitionOffset o : list) {
          if (o.offset() < 0) {
            m.remove(new PartitionRef(o.topic(), o.partition()));
          } else {
            m.put(new PartitionRef(o.topic(), o.partition()), o);
          }
        }
        if (m.isEmpty()) {
          offsets.remove(groupId);
        }
      }
      onDone.accept(error);
    }, false));
    drain(p);
  }

  /** Sends the waiting writes of offsets partition {@code p} as one batch, if none is in flight. */
  private void drain(int p) {
    ArrayDeque<PendingWrite> q = writeQueues.get(p);
    if (writing[p] || q.isEmpty()) {
      return;
    }
    List<PendingWrite> taken = new ArrayList<>();
    RecordBatchBuilder b = new RecordBatchBuilder();
    long now = System.currentTimeMillis();
    int bytes = 0;
    while (!q.isEmpty()) {
      PendingWrite w = q.peekFirst();
      int size = 0;
      for (byte[][] r : w.records()) {
        size += r[0].length + (r[1] == null ? 0 : r[1].length) + 16;
      }
      if (!taken.isEmpty() && bytes + size > WRITE_MAX_BYTES) {
        break;
      }
      q.pollFirst();
      if (w.checkpoint() && w.records().isEmpty()) {
        // a checkpoint is computed now, so that it holds every offset acknowledged so far
        for (PendingWrite part : checkpointParts(p, w.onDone())) {
          q.addFirst(part);
        }
        continue;
      }
      for (byte[][] r : w.records()) {
        b.append(now, r[0], r[1], null);
      }
      bytes += size;
      taken.add(w);
      if (w.checkpoint()) {
        break; // checkpoint parts are written alone, in order
      }
    }
    if (taken.isEmpty()) {
      drain(p);
      return;
    }
    if (b.isEmpty()) {
      taken.forEach(w -> w.onDone().accept(ErrorCode.NONE));
      drain(p);
      return;
    }
    writing[p] = true;
    long id = nextWriteId++;
    inFlight.put(id, taken);
    byte[] batch = b.build();
    // a plain future: pipeToSelf on Akka's ask future would start a thread per answer on a 2-core machine
    CompletionStage<ProduceResponse> answer = Completions.direct(AskPattern.ask(partitions,
        replyTo -> new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, GroupSettings.OFFSETS_TOPIC,
            p, (short) -1, (int) settings.askTimeout().toMillis(), batch, replyTo)),
        settings.askTimeout(), ctx.getSystem().scheduler()));
    ctx.pipeToSelf(answer, (r, ex) -> ex != null ? new WriteDone(p, id, ErrorCode.REQUEST_TIMED_OUT, -1)
        : new WriteDone(p, id, r.error(), r.baseOffset()));
  }

  /** The live offsets of every group stored in partition {@code p}, as writes of at most WRITE_MAX_BYTES. */
  private List<PendingWrite> checkpointParts(int p, Consumer<ErrorCode> lastDone) {
    List<PendingWrite> parts = new ArrayList<>();
    List<byte[][]> current = new ArrayList<>();
    int bytes = 0;
    for (Map.Entry<String, Map<PartitionRef, PartitionOffset>> e : offsets.entrySet()) {
      if (offsetsPartition(e.getKey(), groupSettings.offsetsTopicPartitions()) != p) {
        continue;
      }
      for (PartitionOffset o : e.getValue().values()) {
        byte[][] r = {OffsetRecords.key(e.getKey(), o.topic(), o.partition()), OffsetRecords.value(o.offset(),
            o.metadata())};
        int size = r[0].length + r[1].length + 16;
        if (!current.isEmpty() && bytes + size > WRITE_MAX_BYTES) {
          parts.add(new PendingWrite(current, err -> { }, true));
          current = new ArrayList<>();
          bytes = 0;
        }
        current.add(r);
        bytes += size;
      }
    }
    if (current.isEmpty()) {
      current.add(new byte[][] {new byte[] {0}, null}); // an empty checkpoint: one ignorable record
    }
    parts.add(new PendingWrite(current, lastDone, true));
    // returned in reverse, because they are pushed at the front of the queue one by one
    java.util.Collections.reverse(parts);
    return parts;
  }

  private Behavior<Command> onWriteDone(WriteDone d) {
    writing[d.partition()] = false;
    List<PendingWrite> done = inFlight.remove(d.writeId());
    if (done != null) {
      int records = 0;
      for (PendingWrite w : done) {
        records += w.records().size();
        if (w.checkpoint()) {
          if (d.error() != ErrorCode.NONE) {
            checkpointStart[d.partition()] = -2;
          } else if (checkpointStart[d.partition()] == -1) {
            checkpointStart[d.partition()] = d.baseOffset();
          }
        }
        w.onDone().accept(d.error());
      }
      if (d.error() == ErrorCode.NONE && !done.get(0).checkpoint()) {
        commitsSinceCheckpoint[d.partition()] += records;
      }
    }
    maybeCheckpoint(d.partition());
    drain(d.partition());
    return this;
  }


  private void maybeCheckpoint(int p) {
    if (checkpointQueued[p] || commitsSinceCheckpoint[p] < groupSettings.checkpointRecords()) {
      return;
    }
    checkpointQueued[p] = true;
    checkpointStart[p] = -1;
    writeQueues.get(p).add(new PendingWrite(List.of(), error -> {
      checkpointQueued[p] = false;
      long start = checkpointStart[p];
      checkpointStart[p] = -1;
      if (error == ErrorCode.NONE && start > 0) {
        commitsSinceCheckpoint[p] = 0;
        // everything before the checkpoint is superseded by it
        AskPattern.<PartitionLeader.Command, PartitionLeader.RecordsDeleted>ask(partitions,
            replyTo -> new PartitionLeader.DeleteRecords(GroupSettings.OFFSETS_TOPIC, p, start, replyTo),
            settings.askTimeout(), ctx.getSystem().scheduler());
      }
    }, true));
  }

  /** A deleted topic's committed offsets go too (as Kafka removes them with the topic). */
  private void forgetOffsetsOf(Set<String> deletedTopics) {
    for (Map.Entry<String, Map<PartitionRef, PartitionOffset>> e : new ArrayList<>(offsets.entrySet())) {
      List<PartitionOffset> tombstones = new ArrayList<>();
      for (PartitionOffset o : e.getValue().values()) {
        if (deletedTopics.contains(o.topic())) {
          tombstones.add(new PartitionOffset(o.topic(), o.partition(), -1, null));
        }
      }
      if (!tombstones.isEmpty()) {
        ctx.getLog().info("Topics {} were deleted: removing their committed offsets of group {}", deletedTopics,
            e.getKey());
        writeOffsets(e.getKey(), tombstones, error -> { });
      }
    }
  }

  private void onOffsetFetch(OffsetFetch f) {
    Map<PartitionRef, PartitionOffset> m = offsets.getOrDefault(f.groupId(), Map.of());
    List<PartitionOffset> out = new ArrayList<>();
    if (f.partitions() == null || f.partitions().isEmpty()) {
      out.addAll(m.values());
    } else {
      for (PartitionRef p : f.partitions()) {
        PartitionOffset o = m.get(p);
        out.add(o != null ? o : new PartitionOffset(p.topic(), p.partition(), -1, null));
      }
    }
    f.replyTo().tell(new OffsetFetchResponse(ErrorCode.NONE, null, out));
  }

  private void onReset(ResetOffsets r) {
    Group g = groups.get(r.groupId());
    if (g != null && g.hasPresentMembers()) {
      r.replyTo().tell(new GroupResponse(ErrorCode.NON_EMPTY_GROUP, "Assignments can only be reset if the group '"
          + r.groupId() + "' is inactive, but the current state is " + g.state + " with " + g.members.size()
          + " member(s).", g.generation));
      return;
    }
    for (PartitionOffset o : r.offsets()) {
      if (o.offset() < 0) {
        r.replyTo().tell(new GroupResponse(ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
            "offset " + o.offset() + " for " + o.topic() + "-" + o.partition() + " is negative", -1));
        return;
      }
    }
    groups.computeIfAbsent(r.groupId(), Group::new);
    writeOffsets(r.groupId(), r.offsets(), error -> r.replyTo().tell(new GroupResponse(error,
        error == ErrorCode.NONE ? null : "storing the offsets failed: " + error, -1)));
  }

  private void onDeleteGroup(DeleteGroup d) {
    Group g = groups.get(d.groupId());
    if (g == null || (g.members.isEmpty() && !offsets.containsKey(d.groupId()))) {
      d.replyTo().tell(new GroupResponse(ErrorCode.GROUP_ID_NOT_FOUND,
          "Consumer group '" + d.groupId() + "' does not exist.", -1));
      return;
    }
    if (g.hasPresentMembers() || !g.members.isEmpty()) {
      d.replyTo().tell(new GroupResponse(ErrorCode.NON_EMPTY_GROUP, "Group " + d.groupId() + " has "
          + g.members.size() + " member(s): it can only be deleted when it is empty", g.generation));
      return;
    }
    List<PartitionOffset> tombstones = new ArrayList<>();
    for (PartitionOffset o : offsets.getOrDefault(d.groupId(), Map.of()).values()) {
      tombstones.add(new PartitionOffset(o.topic(), o.partition(), -1, null));
    }
    writeOffsets(d.groupId(), tombstones, error -> {
      if (error == ErrorCode.NONE) {
        groups.remove(d.groupId());
      }
      d.replyTo().tell(new GroupResponse(error, error == ErrorCode.NONE ? null : "deleting failed: " + error, -1));
    });
  }

  // ------------------------------------------------------------------ describe

  private void onDescribe(DescribeGroup d) {
    Group g = groups.get(d.groupId());
    if (g == null || (g.members.isEmpty() && !offsets.containsKey(d.groupId()))) {
      d.replyTo().tell(new DescribeGroupResponse(ErrorCode.GROUP_ID_NOT_FOUND,
          "Consumer group '" + d.groupId() + "' does not exist.", d.groupId(), "Dead", -1, "", List.of(), List.of()));
      return;
    }
    List<MemberDescription> members = new ArrayList<>();
    Map<PartitionRef, String> ownerOf = new HashMap<>();
    for (Member m : g.members.values()) {
      String host = m.ref == null ? "" : m.ref.path().address().toString();
      members.add(new MemberDescription(m.memberId, m.instanceId, m.clientId, host, List.copyOf(m.assigned)));
      for (PartitionRef p : m.assigned) {
        ownerOf.put(p, m.memberId);
      }
    }
    Map<PartitionRef, PartitionOffset> committed = new TreeMap<>(PARTITION_ORDER);
    committed.putAll(offsets.getOrDefault(d.groupId(), Map.of()));
    Set<PartitionRef> all = new TreeSet<>(PARTITION_ORDER);
    all.addAll(committed.keySet());
    all.addAll(ownerOf.keySet());
    String state = g.state.name();
    int generation = g.generation;
    String assignor = g.assignor;
    List<CompletableFuture<ListOffsetsResponse>> ends = new ArrayList<>();
    List<PartitionRef> order = new ArrayList<>(all);
    for (PartitionRef p : order) {
      ends.add(AskPattern.<PartitionLeader.Command, ListOffsetsResponse>ask(partitions,
          replyTo -> new PartitionLeader.ListOffsets(new ListOffsetsRequest(ProtocolVersions.CURRENT, p.topic(),
              p.partition(), ListOffsetsRequest.LATEST_TIMESTAMP, replyTo)),
          settings.askTimeout(), ctx.getSystem().scheduler()).toCompletableFuture());
    }
    CompletableFuture.allOf(ends.toArray(new CompletableFuture[0])).whenComplete((v, ex) -> {
      List<PartitionLag> lags = new ArrayList<>();
      for (int i = 0; i < order.size(); i++) {
        PartitionRef p = order.get(i);
        ListOffsetsResponse r = ends.get(i).isCompletedExceptionally() ? null : ends.get(i).join();
        long end = r != null && r.error() == ErrorCode.NONE ? r.offset() : -1;
        PartitionOffset c = committed.get(p);
        long off = c == null ? -1 : c.offset();
        long lag = off < 0 || end < 0 ? -1 : Math.max(0, end - off);
        lags.add(new PartitionLag(p.topic(), p.partition(), off, end, lag, ownerOf.get(p)));
      }
      d.replyTo().tell(new DescribeGroupResponse(ErrorCode.NONE, null, d.groupId(), state, generation, assignor,
          members, lags));
    });
  }
}
