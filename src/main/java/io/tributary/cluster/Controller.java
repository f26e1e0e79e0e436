package io.tributary.cluster;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.SupervisorStrategy;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.MemberStatus;
import akka.cluster.sharding.external.ExternalShardAllocation;
import akka.cluster.sharding.external.javadsl.ExternalShardAllocationClient;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.ClusterSingleton;
import akka.cluster.typed.ClusterSingletonSettings;
import akka.cluster.typed.SingletonActor;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.SignalHandler;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.TopicConfig;
import io.tributary.log.PartitionLeader;
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
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The cluster's metadata owner: topics, their partitions, configs and replica placement. A Cluster Singleton
 * (role {@code tributary.role}) and an {@link EventSourcedBehavior} whose events ({@link TopicCreated},
 * {@link TopicReady}, {@link TopicDeletionStarted}, {@link TopicDeleted}) are journaled on the node that runs it.
 *
 * <p>Creating a topic: validate (Kafka's name rules, partitions ≥ 1, replication factor, configs), persist
 * {@link TopicCreated} with the placement of every partition, pin each partition's shard to its node (external shard
 * allocation: partitions follow their data, they are never moved by sharding's own rebalancing), send each partition
 * leader {@link PartitionLeader.CreatePartition}, and once all have answered persist {@link TopicReady} and reply.
 * A creation or deletion interrupted by a crash is resumed when the controller recovers. Deleting works the same way
 * with {@link PartitionLeader.DeletePartition}.
 *
 * <p>Accepts {@link Admin} (wrapping the client's {@link AdminRequest}); every request gets exactly one
 * {@link AdminResponse}. Limits of this version: replication factor 1 (replication is the next step), metadata lives in
 * the singleton's journal on its node (a multi-node cluster will keep it in Distributed Data).
 */
public final class Controller
    extends EventSourcedBehavior<Controller.Command, Controller.Event, Controller.State> {

  /** Messages the controller accepts. */
  public interface Command {}

  /** A client's admin request, forwarded by a gateway. */
  public record Admin(@JsonProperty("request") AdminRequest request) implements Command, CborSerializable {
    @JsonCreator
    public Admin {}
  }

  private record PartitionsDone(String topic, String topicId, boolean creation, ErrorCode error, String message)
      implements Command, akka.actor.NoSerializationVerificationNeeded {}

  private enum RetentionTick implements Command, akka.actor.NoSerializationVerificationNeeded {
    INSTANCE
  }

  /** Journal events. */
  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
  @JsonSubTypes({
    @JsonSubTypes.Type(value = TopicCreated.class, name = "created"),
    @JsonSubTypes.Type(value = TopicReady.class, name = "ready"),
    @JsonSubTypes.Type(value = TopicDeletionStarted.class, name = "deleting"),
    @JsonSubTypes.Type(value = TopicDeleted.class, name = "deleted")
  })
  public interface Event extends CborSerializable {}

  /** A topic was created; {@code placement} holds each partition's node address, in partition order. */
  public record TopicCreated(
      @JsonProperty("name") String name,
      @JsonProperty("topicId") String topicId,
      @JsonProperty("partitions") int partitions,
      @JsonProperty("replicationFactor") short replicationFactor,
      @JsonProperty("configs") Map<String, String> configs,
      @JsonProperty("placement") List<String> placement)
      implements Event {
    @JsonCreator
    public TopicCreated {}
  }

  /** Every partition of the topic exists. */
  public record TopicReady(@JsonProperty("name") String name) implements Event {
    @JsonCreator
    public TopicReady {}
  }

  /** Deletion of the topic began. */
  public record TopicDeletionStarted(@JsonProperty("name") String name) implements Event {
    @JsonCreator
    public TopicDeletionStarted {}
  }

  /** Every partition of the topic was deleted. */
  public record TopicDeleted(@JsonProperty("name") String name) implements Event {
    @JsonCreator
    public TopicDeleted {}
  }

  /** Lifecycle of a topic in the metadata. */
  public enum TopicState {
    CREATING,
    READY,
    DELETING
  }

  /** One topic's metadata. */
  public record TopicMeta(TopicCreated created, TopicState state) {}

  /** All topics by name. Mutated only by the event handler, on the controller's thread. */
  public static final class State {
    final Map<String, TopicMeta> topics = new TreeMap<>();
  }

  // ------------------------------------------------------------------ wiring

  /**
   * Starts the singleton (on the oldest node with the broker role) and returns its proxy.
   *
   * @param partitions the partition shard region
   */
  public static ActorRef<Command> init(
      ActorSystem<?> system, BrokerSettings settings, ActorRef<PartitionLeader.Command> partitions) {
    Behavior<Command> behavior = Behaviors.<Command>supervise(Behaviors.setup(ctx -> Behaviors.withTimers(
            timers -> new Controller(ctx, timers, settings, partitions))))
        .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
    return ClusterSingleton.get(system).init(
        SingletonActor.of(behavior, "tributary-controller")
            .withSettings(ClusterSingletonSettings.create(system).withRole(settings.role())));
  }

  private final ActorContext<Command> ctx;
  private final ActorSystem<?> system;
  private final akka.actor.typed.javadsl.TimerScheduler<Command> timers;
  private final BrokerSettings settings;
  private final ActorRef<PartitionLeader.Command> partitions;
  private final ExternalShardAllocationClient allocation;
  private final Map<String, List<ActorRef<AdminResponse>>> waiting = new HashMap<>();

  private Controller(
      ActorContext<Command> ctx,
      akka.actor.typed.javadsl.TimerScheduler<Command> timers,
      BrokerSettings settings,
      ActorRef<PartitionLeader.Command> partitions) {
    super(PersistenceId.ofUniqueId("tributary-controller"));
    this.ctx = ctx;
    this.system = ctx.getSystem();
    this.timers = timers;
    this.settings = settings;
    this.partitions = partitions;
    this.allocation = ExternalShardAllocation.get(ctx.getSystem()).getClient(PartitionLeader.ENTITY_TYPE_KEY.name());
  }

  @Override
  public String journalPluginId() {
    return BrokerSettings.journalPluginId(0);
  }

  @Override
  public String snapshotPluginId() {
    return BrokerSettings.SNAPSHOT_PLUGIN_ID;
  }

  @Override
  public State emptyState() {
    return new State();
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          timers.startTimerWithFixedDelay(RetentionTick.INSTANCE, settings.retentionCheckInterval());
          for (TopicMeta meta : state.topics.values()) {
            switch (meta.state()) {
              case READY -> placePartitions(meta.created());
              case CREATING -> createPartitions(meta.created());
              case DELETING -> deletePartitions(meta.created());
            }
          }
        })
        .build();
  }

  @Override
  public CommandHandler<Command, Event, State> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Admin.class, this::onAdmin)
        .onCommand(PartitionsDone.class, this::onPartitionsDone)
        .onCommand(RetentionTick.class, this::onRetentionTick)
        .build();
  }

  private Effect<Event, State> onAdmin(State state, Admin cmd) {
    AdminRequest req = cmd.request();
    if (req instanceof AdminRequest.CreateTopic c) {
      return onCreate(state, c);
    } else if (req instanceof AdminRequest.DeleteTopic d) {
      return onDelete(state, d);
    } else if (req instanceof AdminRequest.ListTopics l) {
      List<String> names = new ArrayList<>();
      for (TopicMeta m : state.topics.values()) {
        if (m.state() == TopicState.READY && (l.includeInternal() || !m.created().name().startsWith("__"))) {
          names.add(m.created().name());
        }
      }
      l.replyTo().tell(new AdminResponse(ErrorCode.NONE, null, names, List.of()));
    } else if (req instanceof AdminRequest.DescribeTopics d) {
      List<TopicDescription> out = new ArrayList<>();
      if (d.names() == null || d.names().isEmpty()) {
        state.topics.values().stream().filter(m -> m.state() == TopicState.READY)
            .forEach(m -> out.add(describe(m.created())));
      } else {
        for (String name : d.names()) {
          TopicMeta m = state.topics.get(name);
          if (m == null || m.state() != TopicState.READY) {
            d.replyTo().tell(AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "Topic " + name + " does not exist"));
            return Effect().none();
          }
          out.add(describe(m.created()));
        }
      }
      d.replyTo().tell(new AdminResponse(ErrorCode.NONE, null, List.of(), out));
    }
    return Effect().none();
  }

  private Effect<Event, State> onCreate(State state, AdminRequest.CreateTopic c) {
    String invalid = TopicNames.invalidReason(c.name());
    if (invalid != null) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
      return Effect().none();
    }
    int partitionCount = c.partitions() == -1 ? settings.numPartitions() : c.partitions();
    if (partitionCount <= 0) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_PARTITIONS,
          "Number of partitions must be at least 1, was " + c.partitions()));
      return Effect().none();
    }
    if (partitionCount > settings.maxPartitionsPerTopic()) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_PARTITIONS, "Number of partitions " + partitionCount
          + " is above the broker's max.partitions.per.topic " + settings.maxPartitionsPerTopic()));
      return Effect().none();
    }
    short rf = c.replicationFactor() == -1 ? settings.defaultReplicationFactor() : c.replicationFactor();
    List<Address> brokers = liveBrokers();
    if (rf <= 0) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REPLICATION_FACTOR,
          "Replication factor must be at least 1, was " + rf));
      return Effect().none();
    }
    if (rf > brokers.size()) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REPLICATION_FACTOR,
          "Replication factor " + rf + " is larger than the number of live brokers " + brokers.size()));
      return Effect().none();
    }
    if (rf > 1) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_REPLICATION_FACTOR,
          "Replication factor " + rf + " is not supported yet: this version keeps one replica per partition"));
      return Effect().none();
    }
    try {
      TopicConfig.create(c.configs(), settings);
    } catch (TopicConfig.InvalidConfigException e) {
      c.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_CONFIG, e.getMessage()));
      return Effect().none();
    }
    TopicMeta existing = state.topics.get(c.name());
    if (existing != null) {
      TopicCreated prev = existing.created();
      boolean sameRequest = existing.state() == TopicState.CREATING && prev.partitions() == partitionCount
          && prev.configs().equals(c.configs() == null ? Map.of() : c.configs());
      if (sameRequest) { // a retry of an interrupted creation: resume it
        waiting.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(c.replyTo());
        createPartitions(prev);
        return Effect().none();
      }
      c.replyTo().tell(AdminResponse.failed(ErrorCode.TOPIC_ALREADY_EXISTS,
          existing.state() == TopicState.DELETING ? "Topic " + c.name() + " is marked for deletion"
              : "Topic '" + c.name() + "' already exists."));
      return Effect().none();
    }
    List<String> placement = new ArrayList<>(partitionCount);
    int start = Math.floorMod(c.name().hashCode(), brokers.size());
    for (int p = 0; p < partitionCount; p++) {
      placement.add(brokers.get((start + p) % brokers.size()).toString());
    }
    TopicCreated event = new TopicCreated(c.name(), UUID.randomUUID().toString(), partitionCount, rf,
        c.configs() == null ? Map.of() : Map.copyOf(c.configs()), placement);
    waiting.computeIfAbsent(c.name(), k -> new ArrayList<>()).add(c.replyTo());
    return Effect().persist(event).thenRun(s -> createPartitions(event));
  }

  private Effect<Event, State> onDelete(State state, AdminRequest.DeleteTopic d) {
    String invalid = TopicNames.invalidReason(d.name());
    if (invalid != null) {
      d.replyTo().tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
      return Effect().none();
    }
    TopicMeta m = state.topics.get(d.name());
    if (m == null) {
      d.replyTo().tell(AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Topic " + d.name() + " does not exist"));
      return Effect().none();
    }
    if (m.state() == TopicState.CREATING) {
      // a creation that did not complete (interrupted or timed out): deleting it is how to get rid of it
      replyWaiting(d.name(), AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Topic " + d.name() + " was deleted while it was being created"));
    }
    waiting.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(d.replyTo());
    if (m.state() == TopicState.DELETING) {
      deletePartitions(m.created());
      return Effect().none();
    }
    return Effect().persist(new TopicDeletionStarted(d.name())).thenRun(s -> deletePartitions(m.created()));
  }

  private Effect<Event, State> onPartitionsDone(State state, PartitionsDone done) {
    TopicMeta m = state.topics.get(done.topic());
    if (m == null || !m.created().topicId().equals(done.topicId())) {
      return Effect().none();
    }
    if (done.error() != ErrorCode.NONE) {
      replyWaiting(done.topic(), AdminResponse.failed(done.error(), done.message()));
      return Effect().none();
    }
    if (done.creation() && m.state() == TopicState.CREATING) {
      return Effect().persist(new TopicReady(done.topic())).thenRun(s -> replyWaiting(done.topic(),
          new AdminResponse(ErrorCode.NONE, null, List.of(), List.of(describe(m.created())))));
    }
    if (!done.creation() && m.state() == TopicState.DELETING) {
      return Effect().persist(new TopicDeleted(done.topic()))
          .thenRun(s -> replyWaiting(done.topic(), AdminResponse.ok()));
    }
    return Effect().none();
  }

  /**
   * Every {@code log.retention.check.interval.ms} each partition of every topic is asked to apply retention, so that
   * a partition nobody reads or writes (and that was therefore stopped, or not started after a restart) still
   * deletes what has expired.
   */
  private Effect<Event, State> onRetentionTick(State state, RetentionTick tick) {
    for (TopicMeta m : state.topics.values()) {
      if (m.state() == TopicState.READY) {
        for (int p = 0; p < m.created().partitions(); p++) {
          partitions.tell(new PartitionLeader.ApplyRetention(m.created().name(), p));
        }
      }
    }
    return Effect().none();
  }

  private void replyWaiting(String topic, AdminResponse response) {
    List<ActorRef<AdminResponse>> list = waiting.remove(topic);
    if (list != null) {
      list.forEach(r -> r.tell(response));
    }
  }

  private List<Address> liveBrokers() {
    List<Address> out = new ArrayList<>();
    Cluster.get(ctx.getSystem()).state().getMembers().forEach(m -> {
      if (m.status() == MemberStatus.up() && (settings.role().isEmpty() || m.hasRole(settings.role()))) {
        out.add(m.address());
      }
    });
    out.sort((a, b) -> a.toString().compareTo(b.toString()));
    return out;
  }

  private static TopicDescription describe(TopicCreated t) {
    List<PartitionDescription> parts = new ArrayList<>(t.partitions());
    for (int p = 0; p < t.partitions(); p++) {
      String leader = t.placement().get(p);
      parts.add(new PartitionDescription(p, leader, List.of(leader), List.of(leader), 0));
    }
    return new TopicDescription(t.name(), t.topicId(), parts, new TreeMap<>(t.configs()));
  }

  private CompletionStage<akka.Done> placePartitions(TopicCreated t) {
    Map<String, Address> locations = new HashMap<>();
    for (int p = 0; p < t.partitions(); p++) {
      locations.put(PartitionLeader.entityId(t.name(), p), akka.actor.AddressFromURIString.parse(t.placement().get(p)));
    }
    return allocation.setShardLocations(locations);
  }

  private void createPartitions(TopicCreated t) {
    TopicConfig config = TopicConfig.create(t.configs(), settings);
    CompletionStage<ErrorCode> all = placePartitions(t).thenCompose(done -> {
      List<CompletableFuture<PartitionLeader.PartitionAck>> acks = new ArrayList<>();
      for (int p = 0; p < t.partitions(); p++) {
        acks.add(createOnItsNode(t, p, config, 0).toCompletableFuture());
      }
      return CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])).thenApply(v -> {
        for (CompletableFuture<PartitionLeader.PartitionAck> a : acks) {
          if (a.join().error() != ErrorCode.NONE) {
            return a.join().error();
          }
        }
        return ErrorCode.NONE;
      });
    });
    ctx.pipeToSelf(all, (error, ex) -> ex != null
        ? new PartitionsDone(t.name(), t.topicId(), true, ErrorCode.REQUEST_TIMED_OUT,
            "Creating the partitions of " + t.name() + " did not complete: " + ex.getMessage()
                + " (retry the same request to resume)")
        : new PartitionsDone(t.name(), t.topicId(), true, error,
            error == ErrorCode.NONE ? null : "Creating the partitions of " + t.name() + " failed: " + error));
  }

  /**
   * Asks partition {@code p} to create itself on its node; while sharding still runs it elsewhere (the placement is
   * eventually consistent) it refuses with NOT_LEADER_OR_FOLLOWER, and this retries every 500 ms (up to 60 times).
   */
  private CompletionStage<PartitionLeader.PartitionAck> createOnItsNode(
      TopicCreated t, int p, TopicConfig config, int attempt) {
    return AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionAck>ask(partitions,
            replyTo -> new PartitionLeader.CreatePartition(t.name(), p, t.topicId(), config, t.placement().get(p),
                replyTo),
            settings.askTimeout(), system.scheduler())
        .thenCompose(ack -> {
          // runs on a future's thread: only the immutable fields are used, never the actor context
          if (ack.error() == ErrorCode.NOT_LEADER_OR_FOLLOWER && attempt < 60) {
            return akka.pattern.Patterns.after(java.time.Duration.ofMillis(500),
                system.classicSystem().scheduler(), system.executionContext(),
                () -> createOnItsNode(t, p, config, attempt + 1));
          }
          return CompletableFuture.completedFuture(ack);
        });
  }

  private void deletePartitions(TopicCreated t) {
    List<CompletableFuture<PartitionLeader.PartitionAck>> acks = new ArrayList<>();
    for (int p = 0; p < t.partitions(); p++) {
      int partition = p;
      acks.add(AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionAck>ask(partitions,
          replyTo -> new PartitionLeader.DeletePartition(t.name(), partition, replyTo),
          settings.askTimeout(), ctx.getSystem().scheduler()).toCompletableFuture());
    }
    ctx.pipeToSelf(CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])), (v, ex) -> ex != null
        ? new PartitionsDone(t.name(), t.topicId(), false, ErrorCode.REQUEST_TIMED_OUT,
            "Deleting the partitions of " + t.name() + " did not complete: " + ex.getMessage()
                + " (retry the same request to resume)")
        : new PartitionsDone(t.name(), t.topicId(), false, ErrorCode.NONE, null));
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(TopicCreated.class, (s, e) -> {
          s.topics.put(e.name(), new TopicMeta(e, TopicState.CREATING));
          return s;
        })
        .onEvent(TopicReady.class, (s, e) -> {
          s.topics.computeIfPresent(e.name(), (k, m) -> new TopicMeta(m.created(), TopicState.READY));
          return s;
        })
        .onEvent(TopicDeletionStarted.class, (s, e) -> {
          s.topics.computeIfPresent(e.name(), (k, m) -> new TopicMeta(m.created(), TopicState.DELETING));
          return s;
        })
        .onEvent(TopicDeleted.class, (s, e) -> {
          s.topics.remove(e.name());
          return s;
        })
        .build();
  }
}
