package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.CommandHandlerBuilderByState;
import akka.persistence.typed.javadsl.Effect;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.cluster.Controller;
import io.tributary.cluster.PartitionMetadata;
import io.tributary.cluster.TopicMetadata;
import io.tributary.broker.TopicConfig;
import io.tributary.protocol.CborSerializable;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.record.ByteUtils;
import io.tributary.record.Compression;
import io.tributary.record.CompressionType;
import io.tributary.record.CorruptRecordException;
import io.tributary.record.InvalidRecordException;
import io.tributary.record.RecordBatch;
import io.tributary.serialization.HotPath;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The leader of one partition ({@code topic-N}) in one leader epoch: a Cluster Sharding entity ({@link
 * LeaderSharding}: entity id {@code topic-N@epoch@topicId}, placed on the node the controller elected) and an event
 * sourced behavior that journals record batches into its node's LevelDB journal ({@link PartitionReplica}: the log it
 * shares, one writer at a time, with the node's {@link PartitionFollower} of the partition). It starts by claiming its
 * leadership from its node's {@link ReplicaManager} ({@link #create}); its followers are actors of their own on the
 * other replicas' nodes.
 *
 * <h2>Log</h2>
 * Each journal event is one record batch ({@link RecordsAppended}, the batch's own v2 bytes), not one record. Offsets
 * are dense from 0 across batches and restarts: the leader writes each batch's base offset and leader epoch into the
 * batch header before persisting (these fields are outside the CRC). Appends that arrive while a persist is in flight
 * are coalesced into a single persist of several events (one LevelDB write batch): group commit. The sparse
 * {@link OffsetIndex} maps offsets to journal sequence numbers; a bounded in-memory tail serves consumers and
 * followers at the head; older reads are replayed from the journal by a {@link LogReader} child. Snapshots every
 * {@code tributary.log.snapshot-every-batches} events bound recovery time. The log keeps Kafka's leader epoch cache
 * (epoch → first offset) and the idempotent producers' state ({@link ProducerStateTable}), both rebuilt from the
 * batches on every replica.
 *
 * <h2>Replication (as Kafka's)</h2>
 * <ul>
 *   <li>Followers fetch ({@link ReplicaFetch}) at their log end offset through the shard region; the leader holds a
 *       fetch at its log end and answers it as soon as a batch is appended (push in steady state). Each fetch carries
 *       the epoch of the follower's last batch: if the logs diverged, the answer says where the leader's log for that
 *       epoch ends and the follower truncates there (Kafka's KIP-595).
 *   <li>The high watermark is the smallest log end offset over the ISR; consumers see only records below it. The
 *       leader proposes ISR changes to the controller ({@link Controller.AlterIsr}): a follower that has not caught up
 *       for {@code replica.lag.time.max.ms} leaves, one that reached the high watermark (and the start of the current
 *       epoch) joins.
 *   <li>Requests carry the leader epoch the sender knows; an older one is fenced (FENCED_LEADER_EPOCH), a newer one
 *       is answered UNKNOWN_LEADER_EPOCH.
 *   <li>When its node's metadata shows a newer epoch or another leader, the leadership is over: what waits is answered
 *       NOT_LEADER_OR_FOLLOWER and the entity stops; so does it at sharding's {@link HandOff}.
 * </ul>
 *
 * <h2>Protocol</h2>
 * <ul>
 *   <li>{@link Produce} → {@link ProduceResponse}: {@code acks=1} after the leader persisted the batch,
 *       {@code acks=all} once the high watermark passed it (the ISR then held at least {@code min.insync.replicas},
 *       else NOT_ENOUGH_REPLICAS_AFTER_APPEND; fewer in-sync replicas before the append → NOT_ENOUGH_REPLICAS, nothing
 *       written; not replicated within the request's timeout → REQUEST_TIMED_OUT), {@code acks=0} as {@code acks=1}
 *       if it has a reply-to (the producer does not wait for it, it only frees the request's in-flight slot: the
 *       flow control that TCP gives Kafka's {@code acks=0}), else no reply.
 *       Other errors: NOT_LEADER_OR_FOLLOWER (not the leader: retry after a metadata refresh),
 *       UNKNOWN_TOPIC_OR_PARTITION, MESSAGE_TOO_LARGE (above the topic's {@code max.message.bytes}; nothing written),
 *       CORRUPT_MESSAGE / INVALID_RECORD / UNSUPPORTED_COMPRESSION_TYPE (layout or CRC check failed; nothing written),
 *       INVALID_REQUIRED_ACKS, OUT_OF_ORDER_SEQUENCE_NUMBER / INVALID_PRODUCER_EPOCH / UNKNOWN_PRODUCER_ID
 *       (idempotence; a retried duplicate is answered NONE with its original offset).
 *   <li>{@link Fetch} → {@link FetchResponse}, at once or, at the high watermark, when it moves or {@code maxWaitMs}
 *       passes (long poll). Errors: OFFSET_OUT_OF_RANGE (below the log start offset or above the log end offset),
 *       INVALID_FETCH_SIZE, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION.
 *   <li>{@link ListOffsets} → {@link ListOffsetsResponse}: earliest, latest (the high watermark), or by timestamp.
 *   <li>{@link UpdateRole} (from the replica manager); {@link DeletePartition} (from the controller, to every replica)
 *       → {@link PartitionAck}; {@link DeleteRecords} → {@link RecordsDeleted} (followers follow the leader's log
 *       start offset); {@link GetStatus} → {@link PartitionStatus} (any replica).
 * </ul>
 *
 * <p>Confinement: all state is touched only on this actor's thread. Every client request is answered exactly once.
 */
public final class PartitionLeader extends PartitionReplica {


  // ------------------------------------------------------------------ protocol

  /** Every message the leader accepts. Each names its partition through {@link #entityId()}. */
  public interface Command {
    /** {@code topic-N}. */
    String entityId();
  }

  /** Appends the request's batch. */
  public record Produce(ProduceRequest request) implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(request.topic(), request.partition());
    }
  }

  /** Reads from the request's offset. */
  public record Fetch(FetchRequest request) implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(request.topic(), request.partition());
    }
  }

  /** Looks up an offset. */
  public record ListOffsets(ListOffsetsRequest request) implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(request.topic(), request.partition());
    }
  }

  /**
   * From the node's {@link ReplicaManager}: the partition's replicated metadata, first or changed. Creates the local
   * log for topic id {@code topicId} if it does not exist yet (a log of an older topic of the same name is deleted
   * first), then takes the role the metadata gives this node: leader (in {@code meta.leaderEpoch()}), follower of
   * {@code meta.leader()}, or none. An update with an older leader epoch than the one known is ignored. Local only.
   */
  public record UpdateRole(
      String topic,
      int partition,
      String topicId,
      TopicConfig config,
      TopicMetadata.State topicState,
      PartitionMetadata meta)
      implements Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /**
   * A follower's fetch from the leader, as Kafka's Fetch request with a replica id: {@code fetchOffset} is the
   * follower's log end offset (it doubles as its acknowledgement of everything below), {@code lastFetchedEpoch} the
   * epoch of its last batch (-1 if none) for the divergence check of Kafka's KIP-595. Answered with
   * {@link ReplicaFetchResponse}: NONE (batches from {@code fetchOffset} up to the leader's log end offset, at most
   * {@code maxBytes} but at least one batch; held up to {@code replica.fetch.wait.max.ms} at the log end and answered
   * as soon as a batch is appended), NONE with a diverging epoch (the follower truncates), OFFSET_OUT_OF_RANGE (below
   * the log start offset), NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
   * UNKNOWN_TOPIC_OR_PARTITION.
   */
  public record ReplicaFetch(
      String topic,
      int partition,
      String replica,
      int leaderEpoch,
      long fetchOffset,
      int lastFetchedEpoch,
      int maxBytes,
      ActorRef<ReplicaFetchResponse> replyTo)
      implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /**
   * The answer to {@link ReplicaFetch}; echoes its leader epoch and fetch offset so that a follower can drop stale
   * answers.
   *
   * @param divergingEpoch with {@code divergingEndOffset}: when ≥ 0, the follower's log diverged from the leader's,
   *     and the leader's log in that epoch ends at {@code divergingEndOffset} (as Kafka's FetchResponse
   *     DivergingEpoch); the follower truncates to there
   */
  public record ReplicaFetchResponse(
      String topic,
      int partition,
      ErrorCode error,
      int leaderEpoch,
      long fetchOffset,
      long highWatermark,
      long logStartOffset,
      int divergingEpoch,
      long divergingEndOffset,
      List<byte[]> batches)
      implements HotPath {}

  /** Deletes the partition and its records (idempotent). */
  public record DeletePartition(String topic, int partition, ActorRef<PartitionAck> replyTo)
      implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /**
   * Applies retention now (sent by the controller every {@code log.retention.check.interval.ms}, so that idle
   * partitions, which are not running their own timer, still delete what expired). Not answered.
   */
  public record ApplyRetention(String topic, int partition) implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /** Asks for the partition's offsets and size. */
  public record GetStatus(String topic, int partition, ActorRef<PartitionStatus> replyTo)
      implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /**
   * Deletes the records below {@code beforeOffset}: the log start offset moves there (as Kafka's DeleteRecords), and
   * whole chunks below it leave the journal. Answered with {@link RecordsDeleted}: NONE, OFFSET_OUT_OF_RANGE
   * ({@code beforeOffset} negative or above the high watermark), UNKNOWN_TOPIC_OR_PARTITION.
   */
  public record DeleteRecords(String topic, int partition, long beforeOffset, ActorRef<RecordsDeleted> replyTo)
      implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /** Answer to {@link DeleteRecords}, with the log start offset after it. */
  public record RecordsDeleted(String topic, int partition, ErrorCode error, long logStartOffset) implements HotPath {}

  /** Answer to {@link CreatePartition} and {@link DeletePartition}. */
  public record PartitionAck(String topic, int partition, ErrorCode error) implements HotPath {}

  /**
   * Answer to {@link GetStatus}.
   *
   * @param error NONE or UNKNOWN_TOPIC_OR_PARTITION
   * @param sizeInBytes bytes of record batches retained
   * @param journalWrites journal writes (persists) this leader incarnation made for appends; with group commit it is
   *     at most the number of produce requests
   * @param tailBytes bytes of record batches in the in-memory tail (0 after {@code tail-idle-ms} without appends)
   */
  public record PartitionStatus(
      String topic,
      int partition,
      ErrorCode error,
      long logStartOffset,
      long logEndOffset,
      long highWatermark,
      int leaderEpoch,
      long sizeInBytes,
      long journalWrites,
      long tailBytes)
      implements HotPath {}

  interface InternalCommand extends Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    default String entityId() {
      return "";
    }
  }

  private enum Flush implements InternalCommand {
    INSTANCE
  }


  private record FetchWaitExpired(long waiterId) implements InternalCommand {}

  private record ReplicaFetchWaitExpired(String replica, long waiterId) implements InternalCommand {}


  private enum IsrCheck implements InternalCommand {
    INSTANCE
  }

  /** Only for tests: answered with whether the {@link IsrCheck} timer is active. Local only (sent to the replica). */
  record IsrCheckScheduled(ActorRef<Boolean> replyTo) implements InternalCommand {}

  private enum AckTimeoutCheck implements InternalCommand {
    INSTANCE
  }

  private record IsrChangeDone(Controller.AlterIsrResult result) implements InternalCommand {}

  // ------------------------------------------------------------------ events

  /** Journal events of a partition. */
  public interface Event extends HotPath {}

  /**
   * The partition was created for topic id {@code topicId}; {@code seqNr} is this event's own journal sequence number
   * (the journal keeps counting after a deleted topic's events are gone, so the state learns it here).
   */
  public record PartitionCreated(String topicId, TopicConfig config, long seqNr) implements Event {}

  /** One record batch was appended; {@code batch} holds its v2 bytes with base offset and leader epoch set. */
  public record RecordsAppended(byte[] batch) implements Event {}

  /** Retention moved the log start offset; journal events up to {@code deleteToSeqNr} may be deleted. */
  public record LogStartOffsetAdvanced(long logStartOffset, long deleteToSeqNr) implements Event {}

  /**
   * A follower discarded its log from {@code offset} on (the part that diverged from its new leader's log: written in
   * an epoch the leader does not have, never committed).
   */
  public record LogTruncated(long offset) implements Event {}

  /** The partition's topic was deleted. */
  public enum PartitionDeleted implements Event {
    INSTANCE
  }

  // ------------------------------------------------------------------ wiring

  /** {@code topic-N}. */
  public static String entityId(String topic, int partition) {
    return topic + "-" + partition;
  }


  /** The dispatcher whose threads read record batches from the journal for fetches behind the tail. */
  static final String READ_DISPATCHER = "tributary.log.read-dispatcher";

  /**
   * Sharding's stop message for leader entities (the hand-off of a shard whose leadership is over, or of every shard of
   * a node that leaves): everything waiting is answered NOT_LEADER_OR_FOLLOWER and the leader stops. Local only.
   */
  public enum HandOff implements InternalCommand {
    INSTANCE
  }

  /**
   * From the node's {@link ReplicaManager}: stop once the persist in flight (if any) is done, so that the next writer
   * of the log on this node starts after the last write of this one. Local only.
   */
  public enum StopReplica implements InternalCommand {
    INSTANCE
  }

  /**
   * Starts the leader entity it is sent to (the replica manager of the elected node sends it through the shard region,
   * so that a leader runs, advances its high watermark and serves its followers before any client request reaches
   * it). Not answered.
   */
  public record Wake(@JsonProperty("topic") String topic, @JsonProperty("partition") int partition)
      implements Command, CborSerializable {
    @JsonCreator
    public Wake {}

    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

  /** The replica manager's answer to the entity's claim of the leadership. */
  private record Claimed(ReplicaManager.ClaimResult result) implements InternalCommand {}

  /** Commands a leader entity holds while it claims its leadership. */
  private static final int CLAIM_STASH_CAPACITY = 10_000;

  /**
   * The behavior of the leader entity of partition {@code id.partitionId()} in leader epoch {@code id.leaderEpoch()},
   * started by Cluster Sharding ({@link LeaderSharding}) on the node its coordinator allocated the shard to. It first
   * claims the leadership from its node's {@link ReplicaManager} ({@link ReplicaManager.ClaimLeadership}), holding
   * every command meanwhile: the manager grants it only if its metadata names this node as the leader in this epoch,
   * and only after this node's follower of the partition (or a leader entity of an older epoch) has stopped, so that
   * the log never has two writers on one node. Refused, the entity answers what it holds NOT_LEADER_OR_FOLLOWER
   * without touching the journal and stops (as {@code ../shared/DESIGN.md}: a leader started where the controller did
   * not elect it refuses to serve). Granted, it recovers the log from the journal and leads.
   *
   * @param manager the node's replica manager
   * @param controller the controller singleton's proxy (for ISR changes)
   * @param clock the time retention and replica lag compare with
   */
  static Behavior<Command> create(
      LeaderSharding.LeaderId id,
      ActorRef<Command> manager,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<Controller.Command> controller,
      Clock clock) {
    return Behaviors.setup(ctx -> Behaviors.withStash(CLAIM_STASH_CAPACITY, stash -> {
      ctx.ask(ReplicaManager.ClaimResult.class, manager, settings.askTimeout(),
          replyTo -> new ReplicaManager.ClaimLeadership(id, ctx.getSelf(), replyTo),
          (r, ex) -> new Claimed(r != null ? r
              : new ReplicaManager.ClaimResult(null, "this node's replica manager did not answer: " + ex)));
      return Behaviors.receive(Command.class)
          .onMessage(Claimed.class, c -> {
            UpdateRole role = c.result().role();
            if (role == null) {
              String why = "Node " + ctx.getSystem().address() + " does not lead " + id.partitionId() + " in epoch "
                  + id.leaderEpoch() + ": " + c.result().reason();
              ctx.getLog().debug("Leader entity {} refused: {}", ctx.getSelf().path().name(), why);
              stash.forEach(cmd -> ReplicaManager.reject(cmd, ErrorCode.NOT_LEADER_OR_FOLLOWER, why));
              return Behaviors.stopped();
            }
            return stash.unstashAll(Behaviors.withTimers(timers -> new PartitionLeader(
                ctx, timers, id, role, settings, replication, journal, controller, clock)));
          })
          .onMessage(HandOff.class, m -> Behaviors.stopped())
          .onMessage(Command.class, m -> {
            if (stash.isFull()) {
              ReplicaManager.reject(m, ErrorCode.NOT_LEADER_OR_FOLLOWER, "The leader of " + id.partitionId()
                  + " is starting");
            } else {
              stash.stash(m);
            }
            return Behaviors.same();
          })
          .build();
    }));
  }

  /** An entity whose id is not a leader's ({@link LeaderSharding#entityId}): refuses and stops. */
  static Behavior<Command> refusing(String entityId) {
    return Behaviors.receive(Command.class)
        .onAnyMessage(cmd -> {
          ReplicaManager.reject(cmd, ErrorCode.NOT_LEADER_OR_FOLLOWER, entityId + " is not a partition leader's id");
          return Behaviors.stopped();
        })
        .build();
  }

  // ------------------------------------------------------------------ behavior

  private record PendingAppend(RecordBatch batch, ProduceRequest request) {}

  private record Waiter(FetchRequest request) {}

  /** An acks=all answer waiting for the high watermark to reach {@code requiredOffset}. */
  private record ParkedAck(ProduceRequest request, long baseOffset, long requiredOffset, long deadlineMs) {}

  private record ReplicaWaiter(long id, ReplicaFetch request) {}

  /** What the leader knows of one follower (as Kafka's Replica state on the leader). */
  private static final class FollowerProgress {
    long logEndOffset = -1;
    long lastCaughtUpMs;
    long leoAtLastResponse = -1;
    long lastResponseMs;
  }

  private enum Role {
    /** Before the initial role is applied, and after the leadership is over (the entity is stopping). */
    NONE,
    LEADER
  }

  private java.util.concurrent.Executor readExecutor; // looked up on first use
  /**
   * Whether uncompressed batches are appended as LZ4 record batches (the journal's {@code event-compression = lz4});
   * see {@link #storedForm}.
   */
  private final boolean compressUncompressedBatches;
  private final List<PendingAppend> pending = new ArrayList<>();
  private boolean flushScheduled;
  private final Map<Long, Waiter> waiters = new HashMap<>();
  private long nextWaiterId;
  private final ActorRef<Controller.Command> controller;
  /** The epoch of this entity's leadership (from its entity id). */
  private final int leaderEpoch;
  /** The metadata the manager granted the leadership with; null once applied. */
  private UpdateRole initialRole;
  private Role role = Role.NONE;
  private final Map<String, FollowerProgress> followers = new HashMap<>();
  private final java.util.ArrayDeque<ParkedAck> parkedAcks = new java.util.ArrayDeque<>();
  private final Map<String, ReplicaWaiter> replicaWaiters = new HashMap<>();
  private boolean isrChangeInFlight;
  private long nextIsrProposalMs;

  private PartitionLeader(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      LeaderSharding.LeaderId id,
      UpdateRole initialRole,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<Controller.Command> controller,
      Clock clock) {
    super(ctx, timers, id.topic(), id.partition(), settings, replication, journal, clock);
    this.controller = controller;
    this.leaderEpoch = id.leaderEpoch();
    this.initialRole = initialRole;
    com.typesafe.config.Config config = ctx.getSystem().settings().config();
    this.compressUncompressedBatches =
        config.hasPath(journalPluginId) && TunedLeveldbJournal.lz4Events(config.getConfig(journalPluginId));
  }

  /**
   * Checks that journal instance {@code index} (its directory {@code journalDir}) holds only partitions that
   * {@link #journalPluginIdFor} places there with {@code instances} instances, by the partitions its persistence id
   * file maps: a file moved from another journal, or a changed {@code tributary.journal.instances}, would start
   * those partitions empty and leave their logs unread. Reads the file only (no store); nothing to check if it does
   * not exist. Call it before the journals start.
   *
   * @throws IllegalStateException naming the file, a partition that belongs elsewhere and where, or the file's
   *     error if it cannot be read
   */
  public static void checkPlacement(java.nio.file.Path journalDir, int index, int instances) {
    Map<String, Integer> ids;
    try {
      ids = PersistenceIdLog.read(journalDir);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    String prefix = PartitionReplica.PERSISTENCE_TYPE + "|"; // PersistenceId.of's separator
    String here = BrokerSettings.journalPluginId(index);
    for (String pid : ids.keySet()) {
      if (!pid.startsWith(prefix)) {
        continue;
      }
      String entityId = pid.substring(prefix.length());
      String home = journalPluginIdFor(entityId, instances);
      if (!home.equals(here)) {
        throw new IllegalStateException(journalDir.resolve(PersistenceIdLog.FILE_NAME) + " maps partition " + entityId
            + (index < instances ? ", which belongs in " + home.substring(home.lastIndexOf('.') + 1) : "")
            + " with tributary.journal.instances = " + instances + ": the file was moved from another journal, or"
            + " journal.instances changed since the data was written (it must stay as it was); refusing to start");
      }
    }
  }

  /** The journal plugin instance that holds partition {@code entityId}: stable for a given instance count. */
  public static String journalPluginIdFor(String entityId, int instances) {
    return BrokerSettings.journalPluginId(Math.floorMod(entityId.hashCode(), instances));
  }

  @Override
  void onRecovered(PartitionLog state) {
    ctx.getSelf().tell(initialRole); // commands before it wait in the stash (see commandHandler)
  }

  @Override
  void onStopped(PartitionLog state) {
    if (role == Role.LEADER) {
      ctx.getLog().info("Partition {}: leader of epoch {} stopped", entityId, leaderEpoch);
    }
    stepDown();
  }

  @Override
  void onDeleted(PartitionLog state) {
    failParkedAcks(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    for (PendingAppend p : pending) {
      reply(p.request(), ProduceResponse.failed(topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Partition " + entityId + " was deleted"));
    }
    pending.clear();
    wakeWaitersOnDelete();
    stepDown();
    role = Role.NONE;
    syncIsrCheck();
  }

  @Override
  void afterLogStartAdvanced(PartitionLog state) {
    wakeWaiters(state);
  }

  @Override
  public CommandHandler<Command, Event, PartitionLog> commandHandler() {
    CommandHandlerBuilderByState<Command, Event, PartitionLog, PartitionLog> b =
        newCommandHandlerBuilder().forAnyState();
    // until the granted metadata is applied (the first UpdateRole, told to itself after recovery), commands wait
    b.onCommand(cmd -> initialRole != null && !(cmd instanceof UpdateRole), (state, cmd) -> Effect().stash())
        .onCommand(UpdateRole.class, this::onUpdateRole)
        .onCommand(Produce.class, this::onProduce)
        .onCommand(Flush.class, this::onFlush)
        .onCommand(Fetch.class, this::onFetch)
        .onCommand(FetchWaitExpired.class, this::onFetchWaitExpired)
        .onCommand(ListOffsets.class, this::onListOffsets)
        .onCommand(ReplicaFetch.class, this::onReplicaFetch)
        .onCommand(ReplicaFetchWaitExpired.class, this::onReplicaFetchWaitExpired)
        .onCommand(IsrCheck.class, this::onIsrCheck)
        .onCommand(IsrCheckScheduled.class, (state, cmd) -> {
          cmd.replyTo().tell(timers.isTimerActive(IsrCheck.INSTANCE));
          return Effect().none();
        })
        .onCommand(AckTimeoutCheck.class, this::onAckTimeoutCheck)
        .onCommand(IsrChangeDone.class, this::onIsrChangeDone)
        .onCommand(DeleteRecords.class, this::onDeleteRecords)
        .onCommand(HandOff.class, (state, cmd) -> Effect().stop())
        .onCommand(Wake.class, (state, cmd) -> Effect().none());
    commonCommands(b);
    return b.build();
  }

  // --- produce

  private Effect<Event, PartitionLog> onProduce(PartitionLog state, Produce cmd) {
    ProduceRequest req = cmd.request();
    ErrorCode error = ErrorCode.NONE;
    String message = null;
    RecordBatch batch = null;
    if (!state.isActive()) {
      error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      message = "Partition " + entityId + " does not exist";
    } else if (role != Role.LEADER) {
      error = ErrorCode.NOT_LEADER_OR_FOLLOWER;
      message = notLeaderMessage();
    } else if (req.acks() == -1 && meta.isr().size() < minInsyncReplicas(state)) {
      error = ErrorCode.NOT_ENOUGH_REPLICAS;
      message = "The ISR of " + entityId + " has " + meta.isr().size() + " replicas, fewer than min.insync.replicas "
          + minInsyncReplicas(state);
    } else if (req.acks() != -1 && req.acks() != 0 && req.acks() != 1) {
      error = ErrorCode.INVALID_REQUIRED_ACKS;
      message = "acks=" + req.acks() + " (must be -1/all, 0 or 1)";
    } else if (req.batchBuffer() == null || req.batchLength() > state.config().maxMessageBytes()) {
      error = ErrorCode.MESSAGE_TOO_LARGE;
      message = "The record batch is " + req.batchLength()
          + " bytes, larger than max.message.bytes " + state.config().maxMessageBytes() + " of " + topic;
    } else {
      try {
        RecordBatch.validate(req.batchBuffer(), req.batchOffset(), req.batchLength(), Integer.MAX_VALUE);
        batch = RecordBatch.wrap(storedForm(req));
      } catch (CorruptRecordException e) {
        error = e.errorCode();
        message = e.getMessage();
      } catch (InvalidRecordException e) {
        error = e.errorCode();
        message = e.getMessage();
      }
    }
    if (error != ErrorCode.NONE) {
      req.reply(ProduceResponse.failed(req.topic(), req.partition(), error, message));
      return Effect().none();
    }
    pending.add(new PendingAppend(batch, req));
    if (pending.size() >= MAX_PENDING_APPENDS) {
      return onFlush(state, Flush.INSTANCE); // ends Akka's replay chain of stashed commands (see the constant)
    }
    if (!flushScheduled) {
      flushScheduled = true;
      ctx.getSelf().tell(Flush.INSTANCE);
    }
    return Effect().none();
  }

  /**
   * Appends that are persisted at once, without waiting for the {@link Flush} message, when this many are pending.
   * Commands that arrive while the leader persists are stashed by Akka Persistence and replayed after the persist one
   * at a time, each from the stack frame of the one before, until one of them persists: a burst of produce requests
   * (many producers, or a producer with {@code acks=0}, which waits for nothing) made that chain as long as the burst
   * (up to {@code akka.persistence.typed.stash-capacity}, 4096) and overflowed the dispatcher thread's stack, which is
   * fatal (the JVM exits). Persisting here ends the chain; the appends of one persist stay many (group commit).
   */
  static final int MAX_PENDING_APPENDS = 64;

  /** Group commit: every append that arrived since the last persist goes into one persist. */
  private Effect<Event, PartitionLog> onFlush(PartitionLog state, Flush cmd) {
    flushScheduled = false;
    if (pending.isEmpty()) {
      return Effect().none();
    }
    List<PendingAppend> appends = new ArrayList<>(pending);
    pending.clear();
    if (!state.isActive() || role != Role.LEADER) { // deleted or demoted between the append and the flush
      for (PendingAppend p : appends) {
        reply(p.request(), !state.isActive()
            ? ProduceResponse.failed(topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "Partition " + entityId + " was deleted")
            : ProduceResponse.failed(topic, partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, notLeaderMessage()));
      }
      return Effect().none();
    }
    List<Echo> echoes = new ArrayList<>(0);
    appends = checkSequences(state, appends, echoes);
    if (appends.isEmpty()) {
      return Effect().none();
    }
    List<PendingAppend> accepted = appends;
    List<Event> events = new ArrayList<>(appends.size());
    long[] baseOffsets = new long[appends.size()];
    long next = state.logEndOffset();
    for (int i = 0; i < appends.size(); i++) {
      RecordBatch b = appends.get(i).batch();
      b.setBaseOffset(next);
      b.setPartitionLeaderEpoch(meta.leaderEpoch());
      baseOffsets[i] = next;
      next = b.nextOffset();
      events.add(new RecordsAppended(b.bytes()));
    }
    journalWrites++;
    int epochAtAppend = meta.leaderEpoch();
    return Effect().persist(events).thenRun(s -> {
      long nowMs = clock.millis();
      int e = 0;
      for (int i = 0; i < accepted.size(); i++) {
        answerAppended(s, accepted.get(i).request(), baseOffsets[i], accepted.get(i).batch().nextOffset(), nowMs);
        while (e < echoes.size() && echoes.get(e).originalIndex() == i) { // retries of this batch, answered alike
          answerAppended(s, echoes.get(e++).request(), baseOffsets[i], accepted.get(i).batch().nextOffset(), nowMs);
        }
      }
      if (role == Role.LEADER && meta.leaderEpoch() == epochAtAppend) {
        serveReplicaWaiters(s);
        advanceHighWatermark(s);
        if (!parkedAcks.isEmpty() && !timers.isTimerActive(AckTimeoutCheck.INSTANCE)) {
          timers.startTimerWithFixedDelay(AckTimeoutCheck.INSTANCE, java.time.Duration.ofMillis(100));
        }
      } else {
        failParkedAcks(ErrorCode.NOT_LEADER_OR_FOLLOWER);
      }
    });
  }

  /** Compressors of {@link #storedForm}, one per dispatcher thread (a compressor keeps its output buffer). */
  private static final ThreadLocal<Compression.Compressor> LZ4_COMPRESSOR = ThreadLocal.withInitial(
      () -> new Compression.Compressor(CompressionType.LZ4, CompressionType.LZ4.defaultLevel()));

  /** Batches smaller than this are stored as they came: compressing them saves next to nothing. */
  private static final int MIN_COMPRESSED_BATCH_BYTES = 256;

  /**
   * The bytes a leader appends for the (validated) batch of {@code req}, made when the request arrives; the flush sets
   * their offsets and leader epoch. With {@link #compressUncompressedBatches}, an uncompressed batch of at least
   * {@value #MIN_COMPRESSED_BATCH_BYTES} bytes becomes its LZ4 copy ({@link
   * RecordBatch#withCompressedRecords}) if that saves at least an eighth, as Kafka's broker recompresses for a topic's
   * {@code compression.type}; anything else is appended as it came (a copy when the batch is a range of its received
   * frame, see {@link ProduceRequest}; no copy is made for a batch compressed from the frame). What is appended is what the in-memory tail
   * holds, the journal stores, fetches and replica fetches serve (compressed over the network, decompressed by the
   * consumer: the broker never decompresses to serve), and what retention counts; followers append the leader's bytes
   * unchanged. The producer sees no difference: its acknowledgement carries offsets only.
   */
  private byte[] storedForm(ProduceRequest req) {
    byte[] buf = req.batchBuffer();
    int offset = req.batchOffset();
    int length = req.batchLength();
    boolean compressed = (ByteUtils.readShort(buf, offset + RecordBatch.ATTRIBUTES_OFFSET)
        & RecordBatch.COMPRESSION_CODEC_MASK) != RecordBatch.COMPRESSION_NONE;
    if (compressUncompressedBatches && !compressed && length >= MIN_COMPRESSED_BATCH_BYTES) {
      byte[] lz4 = RecordBatch.withCompressedRecords(buf, offset, length, LZ4_COMPRESSOR.get(), length / 8);
      if (lz4 != null) {
        return lz4;
      }
    }
    return req.batch(); // the request's array when the batch is all of it, else a copy of its range
  }

  /** Answers an appended batch's request: at once for acks=0/1, once the high watermark passes it for acks=all. */
  private void answerAppended(PartitionLog s, ProduceRequest req, long baseOffset, long nextOffset, long nowMs) {
    if (req.acks() == -1) {
      parkedAcks.addLast(new ParkedAck(req, baseOffset, nextOffset, nowMs + Math.max(1, req.timeoutMs())));
    } else {
      reply(req, new ProduceResponse(topic, partition, ErrorCode.NONE, null, baseOffset, -1L, s.logStartOffset()));
    }
  }

  /** A retry of the batch at {@code originalIndex} of the same flush: answered as that batch once it is appended. */
  private record Echo(ProduceRequest request, int originalIndex) {}

  /**
   * Idempotence (as Kafka's KIP-98): each batch of an idempotent producer (producer id ≥ 0) must carry the sequence
   * that follows the last one the partition has for that producer. A retry of one of the producer's last 5 batches is
   * answered with its original offset and not appended again (for acks=all once it is below the high watermark);
   * a gap gets OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH. Batches of one flush are checked
   * in order, each against the table plus the batches accepted before it in the same flush. A retry of a batch
   * accepted earlier in the same flush (a producer whose first attempt timed out on its side while the attempt still
   * waited here) is not appended but answered with the original's offset once that is appended: answering
   * OUT_OF_ORDER_SEQUENCE_NUMBER would make the producer re-seal it under a new epoch and write it twice. For the same
   * reason a batch that does not follow the producer's batch accepted before it in the same flush is first looked up
   * in the table: it may be a retry of a batch an earlier flush appended, arriving after its successor's first attempt
   * (both in flight when the producer's gateway failed over).
   *
   * @param echoes filled with those retries, in order of their originals
   * @return the batches to append
   */
  private List<PendingAppend> checkSequences(PartitionLog state, List<PendingAppend> appends, List<Echo> echoes) {
    List<PendingAppend> out = new ArrayList<>(appends.size());
    // producer id -> the indexes in out of that producer's batches accepted earlier in this flush, in order
    Map<Long, List<Integer>> inFlush = null;
    for (PendingAppend p : appends) {
      RecordBatch b = p.batch();
      long pid = b.producerId();
      if (pid < 0) {
        out.add(p);
        continue;
      }
      List<Integer> earlier = inFlush == null ? null : inFlush.get(pid);
      if (earlier != null) {
        RecordBatch prev = out.get(earlier.get(earlier.size() - 1)).batch();
        boolean next = b.producerEpoch() == prev.producerEpoch()
            && b.baseSequence() == ProducerStateTable.incrementSequence(prev.lastSequence(), 1);
        int original = next ? -1 : retryOf(b, out, earlier);
        if (original >= 0) {
          echoes.add(new Echo(p.request(), original));
          continue;
        }
        if (!next) {
          // a retry of a batch appended by an earlier flush may arrive after its successor's first attempt (both
          // sent again after a gateway failover): it is a duplicate, not a gap
          ProducerStateTable.Check check = state.producers().check(pid, b.producerEpoch(), b.baseSequence(),
              b.lastSequence());
          if (check.result() == ProducerStateTable.Result.DUPLICATE) {
            answerDuplicate(state, p.request(), check);
          } else {
            rejectSequence(p.request(), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                "Batch with sequence " + b.baseSequence() + " does not follow " + prev.lastSequence()
                    + " for producer " + pid);
          }
          continue;
        }
      } else {
        ProducerStateTable.Check check = state.producers().check(pid, b.producerEpoch(), b.baseSequence(),
            b.lastSequence());
        if (check.result() == ProducerStateTable.Result.DUPLICATE) {
          answerDuplicate(state, p.request(), check);
          continue;
        }
        if (check.result() != ProducerStateTable.Result.APPEND) {
          rejectSequence(p.request(), check.errorCode(), check.message());
          continue;
        }
      }
      if (inFlush == null) {
        inFlush = new HashMap<>();
      }
      inFlush.computeIfAbsent(pid, k -> new ArrayList<>(2)).add(out.size());
      out.add(p);
    }
    echoes.sort(java.util.Comparator.comparingInt(Echo::originalIndex)); // stable: retries keep their order
    return out;
  }

  /**
   * Answers a retry of a batch the producer state table holds with the original's offsets: at once, or for acks=all
   * once the high watermark passes the original (parked as an appended batch's answer is).
   */
  private void answerDuplicate(PartitionLog state, ProduceRequest req, ProducerStateTable.Check check) {
    if (req.acks() == -1 && check.lastOffset() >= state.highWatermark()) {
      parkedAcks.addLast(new ParkedAck(req, check.baseOffset(), check.lastOffset() + 1,
          clock.millis() + Math.max(1, req.timeoutMs())));
      if (!timers.isTimerActive(AckTimeoutCheck.INSTANCE)) {
        timers.startTimerWithFixedDelay(AckTimeoutCheck.INSTANCE, java.time.Duration.ofMillis(100));
      }
    } else {
      reply(req, new ProduceResponse(topic, partition, ErrorCode.NONE, null, check.baseOffset(), -1L,
          state.logStartOffset()));
    }
  }

  /**
   * Refuses a batch for its producer state (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
   * INVALID_PRODUCER_EPOCH), logged at INFO: such an answer makes an idempotent producer bump its epoch and resend, so
   * it is rare and worth seeing when a batch ends up stored twice.
   */
  private void rejectSequence(ProduceRequest req, ErrorCode error, String message) {
    ctx.getLog().info("Partition {} (leader epoch {}): {} for a produce request: {}", entityId, meta.leaderEpoch(),
        error, message);
    reply(req, ProduceResponse.failed(topic, partition, error, message));
  }

  /** The index in {@code out} of the batch (among {@code indexes}) that {@code b} repeats (epoch, sequences), or -1. */
  private static int retryOf(RecordBatch b, List<PendingAppend> out, List<Integer> indexes) {
    for (int i : indexes) {
      RecordBatch a = out.get(i).batch();
      if (a.producerEpoch() == b.producerEpoch() && a.baseSequence() == b.baseSequence()
          && a.lastSequence() == b.lastSequence()) {
        return i;
      }
    }
    return -1;
  }

  private static void reply(ProduceRequest req, ProduceResponse response) {
    req.reply(response);
  }

  // --- fetch

  private Effect<Event, PartitionLog> onFetch(PartitionLog state, Fetch cmd) {
    FetchRequest req = cmd.request();
    if (!state.isActive()) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Partition " + entityId + " does not exist", -1, -1));
    } else if (role != Role.LEADER) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.NOT_LEADER_OR_FOLLOWER,
          notLeaderMessage(), -1, -1));
    } else if (req.maxBytes() <= 0) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.INVALID_FETCH_SIZE,
          "maxBytes must be positive, was " + req.maxBytes(), state.highWatermark(), state.logStartOffset()));
    } else if (req.fetchOffset() < state.logStartOffset()
        || req.fetchOffset() > Math.max(state.highWatermark(), state.logEndOffset())) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.OFFSET_OUT_OF_RANGE,
          "Offset " + req.fetchOffset() + " is out of range for " + entityId + ": log start offset "
              + state.logStartOffset() + ", log end offset " + state.logEndOffset(),
          state.highWatermark(), state.logStartOffset()));
    } else if (req.fetchOffset() >= state.highWatermark()) {
      // at the high watermark, or between it and the log end offset (not yet replicated): wait, as Kafka does
      if (req.maxWaitMs() > 0) {
        long id = nextWaiterId++;
        waiters.put(id, new Waiter(req));
        timers.startSingleTimer(id, new FetchWaitExpired(id), java.time.Duration.ofMillis(req.maxWaitMs()));
      } else {
        req.replyTo().tell(emptyFetch(req, state));
      }
    } else {
      serveFetch(state, req);
    }
    return Effect().none();
  }

  private void serveFetch(PartitionLog state, FetchRequest req) {
    int maxBytes = Math.min(req.maxBytes(), settings.fetchMaxBytesCap());
    if (req.fetchOffset() >= state.tailStartOffset()) {
      List<byte[]> batches = state.readTail(req.fetchOffset(), maxBytes);
      req.replyTo().tell(new FetchResponse(req.topic(), req.partition(), ErrorCode.NONE, null,
          state.highWatermark(), state.logStartOffset(), batches));
      return;
    }
    ActorRef<FetchResponse> replyTo = req.replyTo();
    readFromJournal(state, req.fetchOffset(), maxBytes, state.highWatermark(), replyTo::tell);
  }

  /**
   * Reads batches from {@code fetchOffset} below {@code limitOffset} (the high watermark for consumers, the log end
   * offset for followers) back from the journal, off the leader's thread, and answers through {@code reply}: whole
   * index chunks from the one holding the offset until they cover {@code maxBytes}. Straight from the store on the
   * read dispatcher when the journal is a registered {@link TunedLeveldbJournal} ({@link LogReader#readDirect}),
   * else through Akka's replay in a {@link LogReader} child.
   */
  private void readFromJournal(PartitionLog state, long fetchOffset, int maxBytes, long limitOffset,
      java.util.function.Consumer<FetchResponse> reply) {
    OffsetIndex index = state.index();
    int chunk = Math.max(0, index.floorChunk(fetchOffset));
    long fromSeqNr = index.chunkSeqNr(chunk);
    long bytes = 0;
    int last = chunk;
    while (last + 1 < index.chunkCount() && bytes < maxBytes + index.chunkBytes(chunk)) {
      bytes += index.chunkBytes(last);
      last++;
    }
    long toSeqNr = last + 1 < index.chunkCount() ? index.chunkSeqNr(last + 1) - 1 : state.lastSeqNr();
    LogReader.FetchCollector collector = new LogReader.FetchCollector(topic, partition, fetchOffset, maxBytes,
        limitOffset, state.highWatermark(), state.logStartOffset(), state.truncations());
    String persistenceId = persistenceId().id();
    TunedLeveldbJournal store = JournalStores.get(Adapter.toClassic(ctx.getSystem())).store(journalPluginId);
    if (store != null) {
      try {
        readExecutor().execute(
            () -> reply.accept(LogReader.readDirect(store, persistenceId, fromSeqNr, toSeqNr, collector)));
      } catch (java.util.concurrent.RejectedExecutionException e) { // the node is shutting down
        reply.accept(collector.failed(ErrorCode.KAFKA_STORAGE_ERROR, "journal read refused: node stopping"));
      }
    } else {
      ctx.spawnAnonymous(LogReader.fetch(journal, journalPluginId, persistenceId, fromSeqNr, toSeqNr, collector,
          reply, settings.askTimeout()));
    }
  }

  private java.util.concurrent.Executor readExecutor() {
    if (readExecutor == null) {
      readExecutor = ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig(READ_DISPATCHER));
    }
    return readExecutor;
  }

  private static FetchResponse emptyFetch(FetchRequest req, PartitionLog state) {
    return new FetchResponse(req.topic(), req.partition(), ErrorCode.NONE, null, state.highWatermark(),
        state.logStartOffset(), List.of());
  }

  private void wakeWaiters(PartitionLog state) {
    if (waiters.isEmpty()) {
      return;
    }
    List<Long> served = new ArrayList<>();
    for (Map.Entry<Long, Waiter> e : waiters.entrySet()) {
      FetchRequest req = e.getValue().request();
      if (req.fetchOffset() < state.highWatermark()) {
        served.add(e.getKey());
        if (req.fetchOffset() < state.logStartOffset()) {
          req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.OFFSET_OUT_OF_RANGE,
              "Offset " + req.fetchOffset() + " fell below the log start offset " + state.logStartOffset(),
              state.highWatermark(), state.logStartOffset()));
        } else {
          serveFetch(state, req);
        }
      }
    }
    for (Long id : served) {
      waiters.remove(id);
      timers.cancel(id);
    }
  }

  private Effect<Event, PartitionLog> onFetchWaitExpired(PartitionLog state, FetchWaitExpired cmd) {
    Waiter w = waiters.remove(cmd.waiterId());
    if (w != null) {
      FetchRequest req = w.request();
      if (!state.isActive()) {
        req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "Partition " + entityId + " was deleted", -1, -1));
      } else if (req.fetchOffset() < state.highWatermark()) {
        serveFetch(state, req);
      } else {
        req.replyTo().tell(emptyFetch(req, state));
      }
    }
    return Effect().none();
  }

  // --- list offsets

  private Effect<Event, PartitionLog> onListOffsets(PartitionLog state, ListOffsets cmd) {
    ListOffsetsRequest req = cmd.request();
    ActorRef<ListOffsetsResponse> replyTo = req.replyTo();
    if (!state.isActive()) {
      replyTo.tell(new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Partition " + entityId + " does not exist", -1, -1));
    } else if (role != Role.LEADER) {
      replyTo.tell(new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.NOT_LEADER_OR_FOLLOWER,
          notLeaderMessage(), -1, -1));
    } else if (req.timestamp() != ListOffsetsRequest.EARLIEST_TIMESTAMP
        && state.highWatermark() < currentEpochStartOffset(state)) {
      // KIP-207: right after an election the high watermark may still be below what the old leader had committed
      replyTo.tell(new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.OFFSET_NOT_AVAILABLE,
          "The leader of " + entityId + " was elected in epoch " + meta.leaderEpoch()
              + " and its high watermark has not caught up yet", -1, -1));
    } else if (req.timestamp() == ListOffsetsRequest.EARLIEST_TIMESTAMP) {
      replyTo.tell(ok(req, state.logStartOffset()));
    } else if (req.timestamp() == ListOffsetsRequest.LATEST_TIMESTAMP) {
      replyTo.tell(ok(req, state.highWatermark()));
    } else if (req.timestamp() < 0) {
      replyTo.tell(new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.INVALID_REQUEST,
          "timestamp must be -2 (earliest), -1 (latest) or >= 0, was " + req.timestamp(), -1, -1));
    } else {
      OffsetIndex index = state.index();
      int chunk = index.firstChunkWithTimestampAtLeast(req.timestamp());
      if (chunk < 0) {
        replyTo.tell(ok(req, state.highWatermark()));
      } else if (index.chunkBaseOffset(chunk) >= state.tailStartOffset()) {
        long[] hit = null;
        for (PartitionLog.TailEntry e : state.tailEntries()) {
          if (e.lastOffset() >= index.chunkBaseOffset(chunk)) {
            hit = LogReader.searchBatch(RecordBatch.wrap(e.bytes()), req.timestamp(), state.logStartOffset(),
                state.highWatermark());
            if (hit != null) {
              break;
            }
          }
        }
        replyTo.tell(hit == null ? ok(req, state.highWatermark())
            : new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.NONE, null, hit[0], hit[1]));
      } else {
        ctx.spawnAnonymous(LogReader.offsetForTimestamp(journal, journalPluginId, persistenceId().id(),
            index.chunkSeqNr(chunk), state.lastSeqNr(), req.topic(), req.partition(), req.timestamp(),
            state.logStartOffset(), state.highWatermark(), state.truncations(), replyTo, settings.askTimeout()));
      }
    }
    return Effect().none();
  }

  private static ListOffsetsResponse ok(ListOffsetsRequest req, long offset) {
    return new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.NONE, null, offset, -1L);
  }


  /**
   * The partition's metadata from the node's replica manager (first the one the leadership was granted with). The same
   * epoch with this node as leader: lead, with the ISR and config it gives. A newer epoch, or another leader: the
   * leadership is over; everything waiting is answered NOT_LEADER_OR_FOLLOWER and the entity stops (the manager then
   * starts this node's follower if it is still a replica). An older epoch is ignored.
   */
  private Effect<Event, PartitionLog> onUpdateRole(PartitionLog state, UpdateRole cmd) {
    boolean first = initialRole != null;
    initialRole = null;
    PartitionMetadata next = cmd.meta();
    boolean over = deleting(cmd) || next.leaderEpoch() > leaderEpoch
        || (next.leaderEpoch() == leaderEpoch && !self.equals(next.leader()));
    if (over) {
      ctx.getLog().info("Partition {}: the leadership of epoch {} is over (epoch {}, leader {})", entityId,
          leaderEpoch, next.leaderEpoch(), next.hasLeader() ? next.leader() : "none");
      stepDown();
      role = Role.NONE;
      meta = next;
      syncIsrCheck();
      ctx.getSelf().tell(StopReplica.INSTANCE); // after what waits in the stash, which is answered as not leader
      return Effect().none().thenUnstashAll();
    }
    if (next.leaderEpoch() < leaderEpoch) {
      return first ? Effect().none().thenUnstashAll() : Effect().none(); // stale
    }
    return ensureLog(state, cmd, this::lead).thenUnstashAll();
  }

  private void lead(PartitionLog state, UpdateRole cmd) {
    PartitionMetadata prev = meta;
    meta = cmd.meta();
    metaConfig = cmd.config();
    if (role != Role.LEADER) {
      becomeLeader(state);
    } else {
      if (prev != null && !prev.isr().equals(meta.isr())) {
        isrChangeInFlight = false;
      }
      advanceHighWatermark(state);
    }
    syncIsrCheck();
  }

  /**
   * Runs the {@link IsrCheck} (every {@code replica.lag.time.max.ms} / 2) only while this node leads with other
   * replicas in the ISR: with an ISR of the leader alone (every partition of replication factor 1, so all of a single
   * node's) no follower can lag, and each check that fires wakes the node's timer thread and actors' thread for
   * nothing (measured on one node with 86 partitions, `__consumer_offsets` included: 17 of its 43 timer wake-ups a
   * second at idle).
   */
  private void syncIsrCheck() {
    boolean needed = role == Role.LEADER && meta != null && meta.isr().size() > 1;
    if (needed && !timers.isTimerActive(IsrCheck.INSTANCE)) {
      timers.startTimerWithFixedDelay(IsrCheck.INSTANCE,
          java.time.Duration.ofMillis(Math.max(50, replication.replicaLagTimeMax().toMillis() / 2)));
    } else if (!needed && timers.isTimerActive(IsrCheck.INSTANCE)) {
      timers.cancel(IsrCheck.INSTANCE);
    }
  }

  private void becomeLeader(PartitionLog state) {
    role = Role.LEADER;
    long handedOver = LeaderSharding.get(ctx.getSystem()).takeHighWatermark(
        LeaderSharding.handOverKey(state.topicId(), entityId));
    if (handedOver > state.highWatermark()) {
      state.setHighWatermark(handedOver); // what the follower (or the leader before) knew was committed
    }
    isrChangeInFlight = false;
    long now = clock.millis();
    for (String r : meta.replicas()) {
      if (!r.equals(self)) {
        FollowerProgress p = new FollowerProgress();
        p.lastCaughtUpMs = now; // a follower gets replica.lag.time.max.ms to show up
        followers.put(r, p);
      }
    }
    ctx.getLog().info("Partition {}: leader in epoch {} (log end offset {}, high watermark {}, ISR {})", entityId,
        meta.leaderEpoch(), state.logEndOffset(), state.highWatermark(), meta.isr());
    advanceHighWatermark(state);
  }

  /** Leaves the leadership: everything waiting on it is answered NOT_LEADER_OR_FOLLOWER (clients retry). */
  private void stepDown() {
    failParkedAcks(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    for (PendingAppend p : pending) {
      reply(p.request(), ProduceResponse.failed(topic, partition, ErrorCode.NOT_LEADER_OR_FOLLOWER,
          notLeaderMessage()));
    }
    pending.clear();
    for (Map.Entry<Long, Waiter> e : waiters.entrySet()) {
      FetchRequest req = e.getValue().request();
      timers.cancel(e.getKey());
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.NOT_LEADER_OR_FOLLOWER,
          notLeaderMessage(), -1, -1));
    }
    waiters.clear();
    for (ReplicaWaiter w : replicaWaiters.values()) {
      timers.cancel(w);
      w.request().replyTo().tell(replicaError(w.request(), ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1));
    }
    replicaWaiters.clear();
    followers.clear();
  }

  private String notLeaderMessage() {
    return meta == null ? "This node has no metadata for " + entityId + " yet"
        : meta.hasLeader() ? "The leader of " + entityId + " is " + meta.leader() + " (epoch " + meta.leaderEpoch() + ")"
        : entityId + " has no leader right now (no in-sync replica is alive)";
  }

  private int minInsyncReplicas(PartitionLog state) {
    TopicConfig c = metaConfig != null ? metaConfig : state.config();
    return c == null ? replication.minInsyncReplicas() : c.minInsyncReplicas(replication.minInsyncReplicas());
  }
  // --- leader: high watermark and acks=all

  /** HW = the smallest log end offset over the ISR (as Kafka); never moves back. Completes acks=all answers. */
  private void advanceHighWatermark(PartitionLog state) {
    if (role != Role.LEADER || !state.isActive()) {
      return;
    }
    long min = state.logEndOffset();
    for (String r : meta.isr()) {
      if (!r.equals(self)) {
        FollowerProgress p = followers.get(r);
        long leo = p == null ? -1 : p.logEndOffset;
        if (leo < 0) {
          min = Math.min(min, state.highWatermark()); // not heard from yet: hold
        } else {
          min = Math.min(min, leo);
        }
      }
    }
    if (min > state.highWatermark()) {
      state.setHighWatermark(min);
      wakeWaiters(state);
    }
    completeParkedAcks(state);
  }

  private void completeParkedAcks(PartitionLog state) {
    // mostly in offset order; answers to retried duplicates may sit behind higher ones, so scan them all
    java.util.Iterator<ParkedAck> it = parkedAcks.iterator();
    while (it.hasNext()) {
      ParkedAck a = it.next();
      if (a.requiredOffset() > state.highWatermark()) {
        continue;
      }
      it.remove();
      if (meta.isr().size() < minInsyncReplicas(state)) {
        reply(a.request(), ProduceResponse.failed(topic, partition, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            "The ISR of " + entityId + " shrank to " + meta.isr() + " before the batch was replicated"));
      } else {
        reply(a.request(), new ProduceResponse(topic, partition, ErrorCode.NONE, null, a.baseOffset(), -1L,
            state.logStartOffset()));
      }
    }
    // the timeout check is left running when this empties the queue: it stops itself at its next tick if the queue
    // is still empty, so that under load (acks=all with followers) a request does not cost a timer start and cancel
  }

  private void failParkedAcks(ErrorCode error) {
    for (ParkedAck a : parkedAcks) {
      reply(a.request(), ProduceResponse.failed(topic, partition, error,
          error == ErrorCode.NOT_LEADER_OR_FOLLOWER ? notLeaderMessage() : null));
    }
    parkedAcks.clear();
    timers.cancel(AckTimeoutCheck.INSTANCE);
  }

  private Effect<Event, PartitionLog> onAckTimeoutCheck(PartitionLog state, AckTimeoutCheck cmd) {
    long now = clock.millis();
    // answers complete in offset order; expired ones may sit behind unexpired ones, so scan all
    java.util.Iterator<ParkedAck> it = parkedAcks.iterator();
    while (it.hasNext()) {
      ParkedAck a = it.next();
      if (a.deadlineMs() <= now) {
        it.remove();
        reply(a.request(), ProduceResponse.failed(topic, partition, ErrorCode.REQUEST_TIMED_OUT,
            "The batch at offset " + a.baseOffset() + " of " + entityId + " was not replicated to the ISR "
                + meta.isr() + " within " + a.request().timeoutMs() + " ms"));
      }
    }
    if (parkedAcks.isEmpty()) {
      timers.cancel(AckTimeoutCheck.INSTANCE);
    }
    return Effect().none();
  }

  // --- leader: follower fetches, ISR

  private Effect<Event, PartitionLog> onReplicaFetch(PartitionLog state, ReplicaFetch req) {
    if (!state.isActive()) {
      req.replyTo().tell(replicaError(req, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1));
      return Effect().none();
    }
    if (role != Role.LEADER || !meta.replicas().contains(req.replica())) {
      req.replyTo().tell(replicaError(req, ErrorCode.NOT_LEADER_OR_FOLLOWER, state.highWatermark(),
          state.logStartOffset()));
      return Effect().none();
    }
    if (req.leaderEpoch() != meta.leaderEpoch()) {
      req.replyTo().tell(replicaError(req, req.leaderEpoch() < meta.leaderEpoch() ? ErrorCode.FENCED_LEADER_EPOCH
          : ErrorCode.UNKNOWN_LEADER_EPOCH, state.highWatermark(), state.logStartOffset()));
      return Effect().none();
    }
    // KIP-595 divergence check: does the follower's log agree with ours up to its fetch offset?
    if (req.lastFetchedEpoch() >= 0 || req.fetchOffset() > state.logEndOffset()) {
      long[] end = req.lastFetchedEpoch() >= 0 ? state.endOffsetForEpoch(req.lastFetchedEpoch())
          : new long[] {state.latestEpoch(), state.logEndOffset()};
      if (end[0] < 0 && req.lastFetchedEpoch() >= 0) {
        end = new long[] {req.lastFetchedEpoch(), state.logStartOffset()}; // we have nothing of that epoch or before
      }
      if (end[0] != req.lastFetchedEpoch() || end[1] < req.fetchOffset()) {
        req.replyTo().tell(new ReplicaFetchResponse(topic, partition, ErrorCode.NONE, req.leaderEpoch(),
            req.fetchOffset(), state.highWatermark(), state.logStartOffset(), (int) end[0],
            Math.min(end[1], req.fetchOffset()), List.of()));
        return Effect().none();
      }
    }
    if (req.fetchOffset() < state.logStartOffset()) {
      req.replyTo().tell(replicaError(req, ErrorCode.OFFSET_OUT_OF_RANGE, state.highWatermark(),
          state.logStartOffset()));
      return Effect().none();
    }
    FollowerProgress p = followers.computeIfAbsent(req.replica(), r -> new FollowerProgress());
    long now = clock.millis();
    if (req.fetchOffset() >= state.logEndOffset()) {
      p.lastCaughtUpMs = now;
    } else if (p.leoAtLastResponse >= 0 && req.fetchOffset() >= p.leoAtLastResponse) {
      p.lastCaughtUpMs = Math.max(p.lastCaughtUpMs, p.lastResponseMs);
    }
    p.logEndOffset = req.fetchOffset();
    if (!meta.isr().contains(req.replica()) && req.fetchOffset() >= state.highWatermark()
        && req.fetchOffset() >= currentEpochStartOffset(state) && !isrChangeInFlight) {
      List<String> grown = new ArrayList<>(meta.isr());
      grown.add(req.replica());
      proposeIsr(grown, "caught up at " + req.fetchOffset());
    }
    advanceHighWatermark(state);
    ReplicaWaiter old = replicaWaiters.remove(req.replica());
    if (old != null) {
      timers.cancel(old);
    }
    if (req.fetchOffset() >= state.logEndOffset()) {
      long id = nextWaiterId++;
      ReplicaWaiter w = new ReplicaWaiter(id, req);
      replicaWaiters.put(req.replica(), w);
      timers.startSingleTimer(w, new ReplicaFetchWaitExpired(req.replica(), id), replication.replicaFetchWaitMax());
    } else {
      serveReplicaFetch(state, req, p);
    }
    return Effect().none();
  }

  private long currentEpochStartOffset(PartitionLog state) {
    for (PartitionLog.EpochEntry e : state.epochs()) {
      if (e.epoch() == meta.leaderEpoch()) {
        return e.startOffset();
      }
    }
    return state.logEndOffset(); // nothing written in this epoch yet
  }

  private void serveReplicaFetch(PartitionLog state, ReplicaFetch req, FollowerProgress p) {
    p.leoAtLastResponse = state.logEndOffset();
    p.lastResponseMs = clock.millis();
    int maxBytes = Math.min(Math.max(1, req.maxBytes()), settings.fetchMaxBytesCap());
    long hw = state.highWatermark();
    long logStart = state.logStartOffset();
    if (req.fetchOffset() >= state.tailStartOffset()) {
      List<byte[]> batches = state.readTail(req.fetchOffset(), maxBytes, state.logEndOffset());
      req.replyTo().tell(new ReplicaFetchResponse(topic, partition, ErrorCode.NONE, req.leaderEpoch(),
          req.fetchOffset(), hw, logStart, -1, -1, batches));
      return;
    }
    ActorRef<ReplicaFetchResponse> replyTo = req.replyTo();
    readFromJournal(state, req.fetchOffset(), maxBytes, state.logEndOffset(),
        r -> replyTo.tell(new ReplicaFetchResponse(topic, partition, r.error(), req.leaderEpoch(), req.fetchOffset(),
            hw, logStart, -1, -1, r.batches())));
  }

  /** After an append: the followers waiting at the old log end get the new batches at once (push). */
  private void serveReplicaWaiters(PartitionLog state) {
    if (replicaWaiters.isEmpty()) {
      return;
    }
    List<ReplicaWaiter> ready = new ArrayList<>();
    for (ReplicaWaiter w : replicaWaiters.values()) {
      if (w.request().fetchOffset() < state.logEndOffset()) {
        ready.add(w);
      }
    }
    for (ReplicaWaiter w : ready) {
      replicaWaiters.remove(w.request().replica());
      timers.cancel(w);
      serveReplicaFetch(state, w.request(), followers.computeIfAbsent(w.request().replica(),
          r -> new FollowerProgress()));
    }
  }

  private Effect<Event, PartitionLog> onReplicaFetchWaitExpired(PartitionLog state, ReplicaFetchWaitExpired cmd) {
    ReplicaWaiter w = replicaWaiters.get(cmd.replica());
    if (w != null && w.id() == cmd.waiterId()) {
      replicaWaiters.remove(cmd.replica());
      FollowerProgress p = followers.computeIfAbsent(cmd.replica(), r -> new FollowerProgress());
      if (role == Role.LEADER && state.isActive()) {
        serveReplicaFetch(state, w.request(), p);
      } else {
        w.request().replyTo().tell(replicaError(w.request(), ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1));
      }
    }
    return Effect().none();
  }

  private ReplicaFetchResponse replicaError(ReplicaFetch req, ErrorCode error, long hw, long logStart) {
    return new ReplicaFetchResponse(topic, partition, error, req.leaderEpoch(), req.fetchOffset(), hw, logStart, -1,
        -1, List.of());
  }

  /** Every replica.lag.time.max.ms / 2: followers in the ISR that have not caught up for too long leave it. */
  private Effect<Event, PartitionLog> onIsrCheck(PartitionLog state, IsrCheck cmd) {
    if (role != Role.LEADER || isrChangeInFlight || !state.isActive()) {
      return Effect().none();
    }
    long now = clock.millis();
    List<String> shrunk = new ArrayList<>();
    List<String> out = new ArrayList<>();
    for (String r : meta.isr()) {
      FollowerProgress p = followers.get(r);
      boolean lagging = !r.equals(self) && p != null
          && now - p.lastCaughtUpMs > replication.replicaLagTimeMax().toMillis()
          && (p.logEndOffset < state.logEndOffset());
      if (lagging) {
        out.add(r);
      } else {
        shrunk.add(r);
      }
    }
    if (!out.isEmpty()) {
      proposeIsr(shrunk, "lagging for more than replica.lag.time.max.ms: " + out);
    }
    return Effect().none();
  }

  private void proposeIsr(List<String> isr, String why) {
    long now = clock.millis();
    if (now < nextIsrProposalMs) {
      return; // the last proposal was answered moments ago: let the metadata arrive first
    }
    isrChangeInFlight = true;
    ctx.getLog().info("Partition {}: proposing ISR {} in epoch {} ({})", entityId, isr, meta.leaderEpoch(), why);
    int epoch = meta.leaderEpoch();
    ctx.ask(Controller.AlterIsrResult.class, controller, settings.askTimeout(),
        replyTo -> new Controller.AlterIsr(topic, partition, self, epoch, isr, replyTo),
        (result, ex) -> new IsrChangeDone(result != null ? result
            : new Controller.AlterIsrResult(ErrorCode.REQUEST_TIMED_OUT, "the controller did not answer: " + ex)));
  }

  private Effect<Event, PartitionLog> onIsrChangeDone(PartitionLog state, IsrChangeDone done) {
    if (done.result().error() != ErrorCode.NONE) {
      ctx.getLog().info("Partition {}: ISR change refused: {} {}", entityId, done.result().error(),
          done.result().message());
    }
    // on success the new ISR arrives with the metadata (UpdateRole); the next proposal waits a little for it
    isrChangeInFlight = false;
    nextIsrProposalMs = clock.millis() + 500;
    return Effect().none();
  }

  private void wakeWaitersOnDelete() {
    for (Map.Entry<Long, Waiter> e : waiters.entrySet()) {
      FetchRequest req = e.getValue().request();
      timers.cancel(e.getKey());
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Partition " + entityId + " was deleted", -1, -1));
    }
    waiters.clear();
  }

  private Effect<Event, PartitionLog> onDeleteRecords(PartitionLog state, DeleteRecords cmd) {
    if (!state.isActive()) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1));
      return Effect().none();
    }
    if (role != Role.LEADER) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1));
      return Effect().none();
    }
    if (cmd.beforeOffset() < 0 || cmd.beforeOffset() > state.highWatermark()) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.OFFSET_OUT_OF_RANGE, state.logStartOffset()));
      return Effect().none();
    }
    if (cmd.beforeOffset() <= state.logStartOffset()) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.NONE, state.logStartOffset()));
      return Effect().none();
    }
    return advanceLogStart(state, cmd.beforeOffset()).thenRun(s -> {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.NONE, s.logStartOffset()));
      wakeWaiters(s);
    });
  }

  /** Only for tests: the classic ref of a typed actor, so that it can receive journal protocol replies. */
  static akka.actor.ActorRef classic(ActorRef<?> ref) {
    return Adapter.toClassic(ref);
  }
}
