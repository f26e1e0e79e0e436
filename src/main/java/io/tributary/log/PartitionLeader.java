package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.SnapshotCompleted;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import akka.persistence.typed.SnapshotAdapter;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.cluster.Controller;
import io.tributary.cluster.PartitionMetadata;
import io.tributary.cluster.TopicMetadata;
import io.tributary.broker.TopicConfig;
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
 * One node's replica of one partition ({@code topic-N}): an {@link EventSourcedBehavior} that journals record batches
 * into its node's LevelDB journal, spawned by the node's {@link ReplicaManager}. Its role — leader, follower or none —
 * comes from the controller's replicated metadata ({@link UpdateRole}); it is not journaled.
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
 *   <li>A <b>follower</b> fetches from the leader's node ({@link ReplicaFetch}) at its log end offset and journals the
 *       leader's batches unchanged. The leader holds a fetch at its log end and answers it as soon as a batch is
 *       appended, so in steady state batches are pushed to followers; a follower that was away catches up by
 *       fetching from where it is. Each fetch carries the epoch of the follower's last batch; if the logs diverged
 *       (the follower has batches of an epoch the leader never wrote, e.g. an old leader that returns), the leader
 *       says where its log for that epoch ends and the follower truncates there ({@link LogTruncated}, Kafka's
 *       KIP-595), dropping only records that were never committed.
 *   <li>The <b>leader</b>'s high watermark is the smallest log end offset over the ISR; consumers see only records
 *       below it. It proposes ISR changes to the controller ({@link Controller.AlterIsr}): a follower that has not
 *       caught up for {@code replica.lag.time.max.ms} leaves, one that reached the high watermark (and the start of
 *       the current epoch) joins.
 *   <li>Requests carry the leader epoch the sender knows; an older one is fenced (FENCED_LEADER_EPOCH), a newer one
 *       is answered UNKNOWN_LEADER_EPOCH until this replica's metadata catches up.
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
 *   <li>{@link UpdateRole} (from the replica manager); {@link DeletePartition} (from the controller) →
 *       {@link PartitionAck}; {@link DeleteRecords} (leader only; followers follow the leader's log start offset).
 *   <li>{@link GetStatus} → {@link PartitionStatus} (any replica).
 * </ul>
 *
 * <h2>Retention</h2>
 * Every {@code log.retention.check.interval.ms} each replica drops whole index chunks from the front while the rest
 * still holds at least {@code retention.bytes} (as Kafka drops segments) and while a chunk's newest record is older
 * than {@code retention.ms}: it persists {@link LogStartOffsetAdvanced}, snapshots, then deletes the journal events
 * below (LevelDB then compacts that range and the disk space comes back).
 *
 * <p>Confinement: all state is touched only on this actor's thread. Every client request is answered exactly once.
 */
public final class PartitionLeader
    extends EventSourcedBehavior<PartitionLeader.Command, PartitionLeader.Event, PartitionLog> {


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

  private interface InternalCommand extends Command, akka.actor.NoSerializationVerificationNeeded {
    @Override
    default String entityId() {
      return "";
    }
  }

  private enum Flush implements InternalCommand {
    INSTANCE
  }

  private enum RetentionCheck implements InternalCommand {
    INSTANCE
  }

  /** Every {@code tail-idle-ms}: drop the in-memory tail if nothing was appended since the last check. */
  private enum TailIdleCheck implements InternalCommand {
    INSTANCE
  }

  private record FetchWaitExpired(long waiterId) implements InternalCommand {}

  private record ReplicaFetchWaitExpired(String replica, long waiterId) implements InternalCommand {}

  private record ReplicaFetchReply(ReplicaFetchResponse response) implements InternalCommand {}

  private record ReplicaFetchTimeout(long fetchId) implements InternalCommand {}

  private enum ReplicaFetchRetry implements InternalCommand {
    INSTANCE
  }

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

  /** The persistence id name of partition logs (kept from when partitions were sharding entities). */
  static final String PERSISTENCE_TYPE = "partition";

  /** The dispatcher whose threads read record batches from the journal for fetches behind the tail. */
  static final String READ_DISPATCHER = "tributary.log.read-dispatcher";

  /**
   * The behavior of the local replica of partition {@code entityId}, spawned by the node's {@link ReplicaManager}.
   *
   * @param router the node's partition router (to reach the leader's node)
   * @param controller the controller singleton's proxy (for ISR changes)
   * @param clock the time retention and replica lag compare with
   */
  public static Behavior<Command> create(
      String entityId,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<Command> router,
      ActorRef<Controller.Command> controller,
      Clock clock) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new PartitionLeader(
        ctx, timers, entityId, settings, replication, journal, router, controller, clock)));
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
    NONE,
    LEADER,
    FOLLOWER
  }

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final String entityId;
  private final String topic;
  private final int partition;
  private final BrokerSettings settings;
  private final JournalAccess journal;
  private java.util.concurrent.Executor readExecutor; // looked up on first use
  private final Clock clock;
  private final String journalPluginId;
  /**
   * Whether uncompressed batches are appended as LZ4 record batches (the journal's {@code event-compression = lz4});
   * see {@link #storedForm}.
   */
  private final boolean compressUncompressedBatches;
  private final List<PendingAppend> pending = new ArrayList<>();
  private boolean flushScheduled;
  private final Map<Long, Waiter> waiters = new HashMap<>();
  private long nextWaiterId;
  private long deletedToSeqNr;
  /** The log end offset at the last {@link TailIdleCheck}; unchanged at the next one means idle. */
  private long logEndAtLastTailCheck = -1;
  private long journalWrites;
  private final ReplicationSettings replication;
  private final ActorRef<Command> router;
  private final ActorRef<Controller.Command> controller;
  private final String self;
  private final ActorRef<ReplicaFetchResponse> replicaFetchAdapter;
  // role, from the replicated metadata (not journaled)
  private Role role = Role.NONE;
  private PartitionMetadata meta;
  private TopicConfig metaConfig;
  // leader side
  private final Map<String, FollowerProgress> followers = new HashMap<>();
  private final java.util.ArrayDeque<ParkedAck> parkedAcks = new java.util.ArrayDeque<>();
  private final Map<String, ReplicaWaiter> replicaWaiters = new HashMap<>();
  private boolean isrChangeInFlight;
  private long nextIsrProposalMs;
  // follower side
  private boolean fetchInFlight;
  private long fetchId;
  private long fetchSentOffset = -1;

  private PartitionLeader(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String entityId,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<Command> router,
      ActorRef<Controller.Command> controller,
      Clock clock) {
    super(PersistenceId.of(PERSISTENCE_TYPE, entityId));
    this.ctx = ctx;
    this.replication = replication;
    this.router = router;
    this.controller = controller;
    this.self = ctx.getSystem().address().toString();
    this.replicaFetchAdapter = ctx.messageAdapter(ReplicaFetchResponse.class, ReplicaFetchReply::new);
    this.timers = timers;
    this.entityId = entityId;
    int dash = entityId.lastIndexOf('-');
    this.topic = dash > 0 ? entityId.substring(0, dash) : entityId;
    this.partition = dash > 0 ? parsePartition(entityId.substring(dash + 1)) : -1;
    this.settings = settings;
    this.journal = journal;
    this.clock = clock;
    this.journalPluginId = journalPluginIdFor(entityId, settings.journalInstances());
    com.typesafe.config.Config config = ctx.getSystem().settings().config();
    this.compressUncompressedBatches =
        config.hasPath(journalPluginId) && TunedLeveldbJournal.lz4Events(config.getConfig(journalPluginId));
  }

  private static int parsePartition(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      return -1;
    }
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
    String prefix = PERSISTENCE_TYPE + "|"; // PersistenceId.of's separator
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
  public String journalPluginId() {
    return journalPluginId;
  }

  @Override
  public String snapshotPluginId() {
    return BrokerSettings.SNAPSHOT_PLUGIN_ID;
  }

  @Override
  public PartitionLog emptyState() {
    return new PartitionLog(settings.indexIntervalBytes(), settings.tailMaxBytes(), TailBudget.get(ctx.getSystem()));
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEveryBatches(), 2);
  }

  @Override
  public boolean shouldSnapshot(PartitionLog state, Event event, long sequenceNr) {
    return event instanceof LogStartOffsetAdvanced || event == PartitionDeleted.INSTANCE;
  }

  @Override
  public SnapshotAdapter<PartitionLog> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(PartitionLog state) {
        return state.toSnapshot();
      }

      @Override
      public PartitionLog fromJournal(Object from) {
        PartitionLog log = emptyState();
        log.applySnapshot((PartitionSnapshot) from);
        return log;
      }
    };
  }

  @Override
  public SignalHandler<PartitionLog> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), state -> {
          if (state.isActive() && state.lastSeqNr() != lastSequenceNumber(ctx)) {
            ctx.getLog().error("Partition {}: state counted {} journal events but the journal has {}", entityId,
                state.lastSeqNr(), lastSequenceNumber(ctx));
          }
          timers.startTimerWithFixedDelay(RetentionCheck.INSTANCE, settings.retentionCheckInterval());
          timers.startTimerWithFixedDelay(TailIdleCheck.INSTANCE, settings.tailIdle());
        })
        // the tail's bytes go back to the node's budget when this actor stops or restarts (its state is dropped)
        .onSignal(akka.actor.typed.PostStop.instance(), PartitionLog::dropTail)
        .onSignal(akka.actor.typed.PreRestart.instance(), PartitionLog::dropTail)
        .onSignal(SnapshotCompleted.class, (state, done) -> {
          long deleteTo = state.pendingDeleteToSeqNr();
          if (deleteTo > deletedToSeqNr && done.metadata().sequenceNr() > deleteTo) {
            deletedToSeqNr = deleteTo;
            journal.deleteMessagesTo(journalPluginId, persistenceId().id(), deleteTo, settings.askTimeout());
          }
        })
        .build();
  }

  @Override
  public CommandHandler<Command, Event, PartitionLog> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Produce.class, this::onProduce)
        .onCommand(Flush.class, this::onFlush)
        .onCommand(Fetch.class, this::onFetch)
        .onCommand(FetchWaitExpired.class, this::onFetchWaitExpired)
        .onCommand(ListOffsets.class, this::onListOffsets)
        .onCommand(RetentionCheck.class, this::onRetentionCheck)
        .onCommand(TailIdleCheck.class, this::onTailIdleCheck)
        .onCommand(ApplyRetention.class, (state, cmd) -> onRetentionCheck(state, RetentionCheck.INSTANCE))
        .onCommand(UpdateRole.class, this::onUpdateRole)
        .onCommand(ReplicaFetch.class, this::onReplicaFetch)
        .onCommand(ReplicaFetchWaitExpired.class, this::onReplicaFetchWaitExpired)
        .onCommand(ReplicaFetchReply.class, this::onReplicaFetchReply)
        .onCommand(ReplicaFetchTimeout.class, this::onReplicaFetchTimeout)
        .onCommand(ReplicaFetchRetry.class, (state, cmd) -> {
          sendReplicaFetch(state);
          return Effect().none();
        })
        .onCommand(IsrCheck.class, this::onIsrCheck)
        .onCommand(IsrCheckScheduled.class, (state, cmd) -> {
          cmd.replyTo().tell(timers.isTimerActive(IsrCheck.INSTANCE));
          return Effect().none();
        })
        .onCommand(AckTimeoutCheck.class, this::onAckTimeoutCheck)
        .onCommand(IsrChangeDone.class, this::onIsrChangeDone)
        .onCommand(DeletePartition.class, this::onDelete)
        .onCommand(GetStatus.class, this::onGetStatus)
        .onCommand(DeleteRecords.class, this::onDeleteRecords)
        .build();
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

  // --- retention

  private Effect<Event, PartitionLog> onTailIdleCheck(PartitionLog state, TailIdleCheck cmd) {
    long end = state.logEndOffset();
    if (end == logEndAtLastTailCheck && state.tailBytes() > 0) {
      state.dropTail();
    }
    logEndAtLastTailCheck = end;
    return Effect().none();
  }

  private Effect<Event, PartitionLog> onRetentionCheck(PartitionLog state, RetentionCheck cmd) {
    if (!state.isActive()) {
      return Effect().none();
    }
    state.producers().expire(clock.millis(), ProducerStateTable.DEFAULT_PRODUCER_ID_EXPIRATION_MS);
    OffsetIndex index = state.index();
    TopicConfig config = state.config();
    int drop = 0;
    long remaining = index.totalBytes();
    if (config.retentionBytes() >= 0) {
      // as Kafka: delete the oldest chunk while what remains still holds at least retention.bytes
      while (drop < index.chunkCount() && remaining - index.chunkBytes(drop) >= config.retentionBytes()) {
        remaining -= index.chunkBytes(drop);
        drop++;
      }
    }
    if (config.retentionMs() >= 0) {
      long cutoff = clock.millis() - config.retentionMs();
      while (drop < index.chunkCount() && index.chunkMaxTimestamp(drop) < cutoff) {
        drop++;
      }
    }
    if (drop == 0) {
      return Effect().none();
    }
    long newStart = drop < index.chunkCount() ? index.chunkBaseOffset(drop) : state.logEndOffset();
    long deleteTo = drop < index.chunkCount() ? index.chunkSeqNr(drop) - 1 : state.lastSeqNr();
    ctx.getLog().debug("Partition {}: retention moves the log start offset to {}", entityId, newStart);
    return Effect().persist(new LogStartOffsetAdvanced(newStart, deleteTo)).thenRun(this::wakeWaiters);
  }

  // --- admin

  // --- roles (replication)

  private Effect<Event, PartitionLog> onUpdateRole(PartitionLog state, UpdateRole cmd) {
    if (cmd.topicState() == TopicMetadata.State.DELETING) {
      return Effect().none(); // the controller deletes the replicas with DeletePartition
    }
    if (!state.isActive()) {
      return Effect().persist(new PartitionCreated(cmd.topicId(), cmd.config(), lastSequenceNumber(ctx) + 1))
          .thenRun(s -> applyRole(s, cmd));
    }
    if (!state.topicId().equals(cmd.topicId())) {
      // a log of an older topic of the same name (deleted while this node was away): drop it, start the new one
      long deletedAt = lastSequenceNumber(ctx) + 1;
      return Effect().persist(List.of(PartitionDeleted.INSTANCE,
              new PartitionCreated(cmd.topicId(), cmd.config(), deletedAt + 1)))
          .thenRun(s -> {
            String pid = persistenceId().id();
            journal.deleteSnapshotsTo(BrokerSettings.SNAPSHOT_PLUGIN_ID, pid, deletedAt - 1, settings.askTimeout())
                .thenCompose(r -> journal.deleteMessagesTo(journalPluginId, pid, deletedAt, settings.askTimeout()));
            forgetRole(); // the new topic's leader epochs start again at 0
            applyRole(s, cmd);
          });
    }
    applyRole(state, cmd);
    return Effect().none();
  }

  private void applyRole(PartitionLog state, UpdateRole cmd) {
    PartitionMetadata next = cmd.meta();
    if (meta != null && next.leaderEpoch() < meta.leaderEpoch()) {
      return; // stale
    }
    PartitionMetadata prev = meta;
    meta = next;
    metaConfig = cmd.config();
    boolean newEpoch = prev == null || prev.leaderEpoch() != next.leaderEpoch();
    if (self.equals(next.leader())) {
      if (role != Role.LEADER || newEpoch) {
        becomeLeader(state);
      } else {
        if (!prev.isr().equals(next.isr())) {
          isrChangeInFlight = false;
        }
        advanceHighWatermark(state);
      }
    } else if (next.hasLeader() && next.replicas().contains(self)) {
      if (role != Role.FOLLOWER || newEpoch) {
        becomeFollower(state);
      }
    } else if (role != Role.NONE) {
      ctx.getLog().info("Partition {}: no role on this node in leader epoch {}", entityId, next.leaderEpoch());
      stepDown();
      role = Role.NONE;
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

  /** The partition's topic is gone: no role, no metadata (stops a follower's fetching). */
  private void forgetRole() {
    stepDown();
    role = Role.NONE;
    meta = null;
    metaConfig = null;
    syncIsrCheck();
  }

  private void becomeLeader(PartitionLog state) {
    stepDown();
    role = Role.LEADER;
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

  private void becomeFollower(PartitionLog state) {
    stepDown();
    role = Role.FOLLOWER;
    ctx.getLog().info("Partition {}: follower of {} in epoch {} (log end offset {})", entityId, meta.leader(),
        meta.leaderEpoch(), state.logEndOffset());
    sendReplicaFetch(state);
  }

  /** Leaves the current role: everything waiting on it is answered NOT_LEADER_OR_FOLLOWER (clients retry). */
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
    fetchInFlight = false;
    fetchId++;
    timers.cancel(ReplicaFetchRetry.INSTANCE);
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

  // --- follower

  private void sendReplicaFetch(PartitionLog state) {
    if (role != Role.FOLLOWER || fetchInFlight || !state.isActive()) {
      return;
    }
    fetchInFlight = true;
    long id = ++fetchId;
    fetchSentOffset = state.logEndOffset();
    ReplicaFetch req = new ReplicaFetch(topic, partition, self, meta.leaderEpoch(), state.logEndOffset(),
        state.latestEpoch(), replication.replicaFetchMaxBytes(), replicaFetchAdapter);
    router.tell(new ReplicaManager.ToReplica(meta.leader(), req));
    timers.startSingleTimer(ReplicaFetchTimeout.class, new ReplicaFetchTimeout(id),
        replication.replicaFetchWaitMax().plus(settings.askTimeout()));
  }

  private Effect<Event, PartitionLog> onReplicaFetchTimeout(PartitionLog state, ReplicaFetchTimeout cmd) {
    if (cmd.fetchId() == fetchId && fetchInFlight) {
      fetchInFlight = false;
      sendReplicaFetch(state);
    }
    return Effect().none();
  }

  private void retryFetchLater() {
    fetchInFlight = false;
    timers.startSingleTimer(ReplicaFetchRetry.INSTANCE, ReplicaFetchRetry.INSTANCE, replication.replicaFetchBackoff());
  }

  private Effect<Event, PartitionLog> onReplicaFetchReply(PartitionLog state, ReplicaFetchReply reply) {
    ReplicaFetchResponse r = reply.response();
    if (role != Role.FOLLOWER || !fetchInFlight || r.leaderEpoch() != meta.leaderEpoch()
        || r.fetchOffset() != fetchSentOffset || r.fetchOffset() != state.logEndOffset()) {
      return Effect().none(); // stale
    }
    timers.cancel(ReplicaFetchTimeout.class);
    if (r.error() == ErrorCode.OFFSET_OUT_OF_RANGE && r.logStartOffset() > state.logEndOffset()) {
      // the leader deleted what we would fetch next: start our log at its log start offset
      fetchInFlight = false;
      return advanceLogStart(state, r.logStartOffset()).thenRun(s -> sendReplicaFetch(s));
    }
    if (r.error() != ErrorCode.NONE) {
      if (r.error() != ErrorCode.NOT_LEADER_OR_FOLLOWER && r.error() != ErrorCode.FENCED_LEADER_EPOCH
          && r.error() != ErrorCode.UNKNOWN_LEADER_EPOCH && r.error() != ErrorCode.REQUEST_TIMED_OUT
          && r.error() != ErrorCode.LEADER_NOT_AVAILABLE) {
        ctx.getLog().warn("Partition {}: fetch from leader {} failed: {}", entityId, meta.leader(), r.error());
      }
      retryFetchLater();
      return Effect().none();
    }
    if (r.divergingEpoch() >= 0 || r.divergingEndOffset() >= 0) {
      long[] own = state.endOffsetForEpoch(r.divergingEpoch());
      long target = Math.min(r.divergingEndOffset(), own[1] < 0 ? state.logStartOffset() : own[1]);
      target = Math.max(target, Math.min(state.logStartOffset(), state.logEndOffset()));
      ctx.getLog().info("Partition {}: log diverged from leader {} (its epoch {} ends at {}); truncating from {} to {}",
          entityId, meta.leader(), r.divergingEpoch(), r.divergingEndOffset(), state.logEndOffset(), target);
      fetchInFlight = false;
      if (target >= state.logEndOffset()) {
        return Effect().none().thenRun(s -> sendReplicaFetch(s));
      }
      return Effect().persist(new LogTruncated(target)).thenRun(s -> sendReplicaFetch(s));
    }
    List<Event> events = new ArrayList<>(r.batches().size());
    long next = state.logEndOffset();
    for (byte[] bytes : r.batches()) {
      RecordBatch b = RecordBatch.wrap(bytes);
      if (b.lastOffset() < next) {
        continue; // already have it
      }
      if (b.baseOffset() != next) {
        break; // not contiguous (should not happen): fetch again from our log end
      }
      events.add(new RecordsAppended(bytes));
      next = b.nextOffset();
    }
    fetchInFlight = false;
    long leaderHw = r.highWatermark();
    long leaderLogStart = r.logStartOffset();
    if (events.isEmpty()) {
      followerCatchUp(state, leaderHw);
      if (leaderLogStart > state.logStartOffset() && leaderLogStart <= state.logEndOffset()) {
        return advanceLogStart(state, leaderLogStart).thenRun(s -> sendReplicaFetch(s));
      }
      sendReplicaFetch(state);
      return Effect().none();
    }
    journalWrites++;
    return Effect().persist(events).thenRun(s -> {
      followerCatchUp(s, leaderHw);
      sendReplicaFetch(s);
    });
  }

  private void followerCatchUp(PartitionLog state, long leaderHw) {
    if (leaderHw > state.highWatermark()) {
      state.setHighWatermark(leaderHw);
    }
  }

  private Effect<Event, PartitionLog> onDelete(PartitionLog state, DeletePartition cmd) {
    if (!state.isActive()) {
      cmd.replyTo().tell(new PartitionAck(topic, partition, ErrorCode.NONE));
      return Effect().none();
    }
    return Effect().persist(PartitionDeleted.INSTANCE).thenRun(s -> {
      failParkedAcks(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      forgetRole(); // a topic re-created under this name starts again at leader epoch 0
      for (PendingAppend p : pending) {
        reply(p.request(), ProduceResponse.failed(topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "Partition " + entityId + " was deleted"));
      }
      pending.clear();
      wakeWaitersOnDelete();
      long upTo = s.lastSeqNr();
      String pid = persistenceId().id();
      // snapshots first, then events: a crash in between replays to the deleted state, never to a stale snapshot
      journal.deleteSnapshotsTo(BrokerSettings.SNAPSHOT_PLUGIN_ID, pid, upTo - 1, settings.askTimeout())
          .thenCompose(r -> journal.deleteMessagesTo(journalPluginId, pid, upTo, settings.askTimeout()))
          .whenComplete((r, ex) -> cmd.replyTo().tell(new PartitionAck(topic, partition, ErrorCode.NONE)));
    });
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

  /** Persists a new log start offset; whole index chunks below it may leave the journal. */
  private akka.persistence.typed.javadsl.EffectBuilder<Event, PartitionLog> advanceLogStart(
      PartitionLog state, long newStart) {
    OffsetIndex index = state.index();
    long deleteTo;
    if (newStart >= state.logEndOffset()) {
      deleteTo = state.lastSeqNr();
    } else {
      int chunk = index.floorChunk(newStart);
      deleteTo = chunk <= 0 ? 0 : index.chunkSeqNr(chunk) - 1;
    }
    return Effect().persist(new LogStartOffsetAdvanced(newStart, deleteTo));
  }

  private Effect<Event, PartitionLog> onGetStatus(PartitionLog state, GetStatus cmd) {
    cmd.replyTo().tell(new PartitionStatus(topic, partition,
        state.isActive() ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, state.logStartOffset(),
        state.logEndOffset(), state.highWatermark(), state.leaderEpoch(), state.sizeInBytes(), journalWrites,
        state.tailBytes()));
    return Effect().none();
  }

  // ------------------------------------------------------------------ events

  @Override
  public EventHandler<PartitionLog, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(RecordsAppended.class, (state, e) -> {
          state.applyAppended(RecordBatch.wrap(e.batch()));
          return state;
        })
        .onEvent(PartitionCreated.class, (state, e) -> {
          state.applyCreated(e.topicId(), e.config(), e.seqNr());
          return state;
        })
        .onEvent(LogStartOffsetAdvanced.class, (state, e) -> {
          state.applyLogStartAdvanced(e.logStartOffset(), e.deleteToSeqNr());
          return state;
        })
        .onEvent(LogTruncated.class, (state, e) -> {
          state.applyTruncated(e.offset());
          return state;
        })
        .onEvent(PartitionDeleted.class, (state, e) -> {
          state.applyDeleted();
          return state;
        })
        .build();
  }

  /** Only for tests: the classic ref of a typed actor, so that it can receive journal protocol replies. */
  static akka.actor.ActorRef classic(ActorRef<?> ref) {
    return Adapter.toClassic(ref);
  }
}
