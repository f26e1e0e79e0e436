package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.sharding.external.ExternalShardAllocationStrategy;
import akka.cluster.sharding.typed.ShardingMessageExtractor;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.Entity;
import akka.cluster.sharding.typed.javadsl.EntityTypeKey;
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
import io.tributary.broker.TopicConfig;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
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
 * The leader of one partition ({@code topic-N}): a Cluster Sharding entity and an {@link EventSourcedBehavior} that
 * journals record batches into its node's LevelDB journal.
 *
 * <h2>Log</h2>
 * Each journal event is one record batch ({@link RecordsAppended}, the batch's own v2 bytes), not one record. Offsets
 * are dense from 0 across batches and restarts: the leader writes each batch's base offset and leader epoch into the
 * batch header before persisting (these fields are outside the CRC). Appends that arrive while a persist is in flight
 * are coalesced into a single persist of several events (one LevelDB write batch): group commit. The sparse
 * {@link OffsetIndex} maps offsets to journal sequence numbers; a bounded in-memory tail serves consumers at the head;
 * older reads are replayed from the journal by a {@link LogReader} child. Snapshots every
 * {@code tributary.log.snapshot-every-batches} events bound recovery time.
 *
 * <h2>Protocol</h2>
 * <ul>
 *   <li>{@link Produce} → {@link ProduceResponse} after the batch is persisted ({@code acks=1}; {@code acks=all} is the
 *       same with one replica; {@code acks=0} gets no reply). Errors: UNKNOWN_TOPIC_OR_PARTITION, MESSAGE_TOO_LARGE
 *       (above the topic's {@code max.message.bytes}; nothing written), CORRUPT_MESSAGE / INVALID_RECORD /
 *       UNSUPPORTED_COMPRESSION_TYPE (layout or CRC check failed; nothing written), INVALID_REQUIRED_ACKS.
 *   <li>{@link Fetch} → {@link FetchResponse}, at once or, at the log end, when new batches arrive or
 *       {@code maxWaitMs} passes (long poll). Errors: OFFSET_OUT_OF_RANGE (below the log start offset or above the
 *       high watermark), INVALID_FETCH_SIZE, UNKNOWN_TOPIC_OR_PARTITION.
 *   <li>{@link ListOffsets} → {@link ListOffsetsResponse}: earliest, latest, or by timestamp.
 *   <li>{@link CreatePartition}, {@link DeletePartition} (from the controller) → {@link PartitionAck}.
 *   <li>{@link GetStatus} → {@link PartitionStatus}.
 * </ul>
 *
 * <h2>Retention</h2>
 * Every {@code log.retention.check.interval.ms} the leader drops whole index chunks from the front while the rest
 * still holds at least {@code retention.bytes} (as Kafka drops segments) and while a chunk's newest record is older
 * than {@code retention.ms}: it persists {@link LogStartOffsetAdvanced}, snapshots, then deletes the journal events
 * below (LevelDB then compacts that range and the disk space comes back).
 *
 * <p>Confinement: all state is touched only on this actor's thread. Every client request is answered exactly once.
 */
public final class PartitionLeader
    extends EventSourcedBehavior<PartitionLeader.Command, PartitionLeader.Event, PartitionLog> {

  /** The sharding entity type; entity ids are {@code topic-N}. */
  public static final EntityTypeKey<Command> ENTITY_TYPE_KEY = EntityTypeKey.create(Command.class, "partition");

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
   * Creates the partition with its topic's id and config (idempotent for the same topic id) on the node
   * {@code placement} (an Akka address). Sharding may briefly run the entity on another node while the placement
   * spreads; there the leader refuses with NOT_LEADER_OR_FOLLOWER and writes nothing, and the controller retries.
   */
  public record CreatePartition(
      String topic,
      int partition,
      String topicId,
      TopicConfig config,
      String placement,
      ActorRef<PartitionAck> replyTo)
      implements Command, HotPath {
    @Override
    public String entityId() {
      return PartitionLeader.entityId(topic, partition);
    }
  }

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
      long journalWrites)
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

  private record FetchWaitExpired(long waiterId) implements InternalCommand {}

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

  /** The partition's topic was deleted. */
  public enum PartitionDeleted implements Event {
    INSTANCE
  }

  // ------------------------------------------------------------------ wiring

  /** {@code topic-N}. */
  public static String entityId(String topic, int partition) {
    return topic + "-" + partition;
  }

  /**
   * Starts the sharded entity type on this node (only nodes with the broker role host partitions).
   *
   * @return the shard region; send it {@link Command}s directly (their {@link Command#entityId()} routes them)
   */
  public static ActorRef<Command> init(ActorSystem<?> system, BrokerSettings settings, JournalAccess journal) {
    Entity<Command, Command> entity =
        Entity.of(ENTITY_TYPE_KEY, ctx -> create(ctx.getEntityId(), settings, journal, Clock.systemUTC()))
            .withMessageExtractor(new Extractor())
            // partitions follow their data: a shard lives where the controller placed it, never rebalanced elsewhere
            .withAllocationStrategy(new ExternalShardAllocationStrategy(
                system, ENTITY_TYPE_KEY.name(), akka.util.Timeout.create(java.time.Duration.ofSeconds(5))));
    if (!settings.role().isEmpty()) {
      entity = entity.withRole(settings.role());
    }
    return ClusterSharding.get(system).init(entity);
  }

  /** Shard id = entity id: one shard per partition, so that every partition can be placed on its own. */
  static final class Extractor extends ShardingMessageExtractor<Command, Command> {
    @Override
    public String entityId(Command message) {
      return message.entityId();
    }

    @Override
    public String shardId(String entityId) {
      return entityId;
    }

    @Override
    public Command unwrapMessage(Command message) {
      return message;
    }
  }

  /** The behavior of partition {@code entityId}; {@code clock} gives the time retention compares with. */
  public static Behavior<Command> create(
      String entityId, BrokerSettings settings, JournalAccess journal, Clock clock) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(
        timers -> new PartitionLeader(ctx, timers, entityId, settings, journal, clock)));
  }

  // ------------------------------------------------------------------ behavior

  private record PendingAppend(RecordBatch batch, ProduceRequest request) {}

  private record Waiter(FetchRequest request) {}

  private final ActorContext<Command> ctx;
  private final TimerScheduler<Command> timers;
  private final String entityId;
  private final String topic;
  private final int partition;
  private final BrokerSettings settings;
  private final JournalAccess journal;
  private final Clock clock;
  private final String journalPluginId;
  private final List<PendingAppend> pending = new ArrayList<>();
  private boolean flushScheduled;
  private final Map<Long, Waiter> waiters = new HashMap<>();
  private long nextWaiterId;
  private long deletedToSeqNr;
  private long journalWrites;

  private PartitionLeader(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String entityId,
      BrokerSettings settings,
      JournalAccess journal,
      Clock clock) {
    super(PersistenceId.of(ENTITY_TYPE_KEY.name(), entityId));
    this.ctx = ctx;
    this.timers = timers;
    this.entityId = entityId;
    int dash = entityId.lastIndexOf('-');
    this.topic = dash > 0 ? entityId.substring(0, dash) : entityId;
    this.partition = dash > 0 ? parsePartition(entityId.substring(dash + 1)) : -1;
    this.settings = settings;
    this.journal = journal;
    this.clock = clock;
    this.journalPluginId = journalPluginIdFor(entityId, settings.journalInstances());
  }

  private static int parsePartition(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      return -1;
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
    return new PartitionLog(settings.indexIntervalBytes(), settings.tailMaxBytes());
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
        })
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
        .onCommand(ApplyRetention.class, (state, cmd) -> onRetentionCheck(state, RetentionCheck.INSTANCE))
        .onCommand(CreatePartition.class, this::onCreate)
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
    } else if (req.acks() != -1 && req.acks() != 0 && req.acks() != 1) {
      error = ErrorCode.INVALID_REQUIRED_ACKS;
      message = "acks=" + req.acks() + " (must be -1/all, 0 or 1)";
    } else if (req.batch() == null || req.batch().length > state.config().maxMessageBytes()) {
      error = ErrorCode.MESSAGE_TOO_LARGE;
      message = "The record batch is " + (req.batch() == null ? 0 : req.batch().length)
          + " bytes, larger than max.message.bytes " + state.config().maxMessageBytes() + " of " + topic;
    } else {
      try {
        batch = RecordBatch.validate(req.batch());
      } catch (CorruptRecordException e) {
        error = e.errorCode();
        message = e.getMessage();
      } catch (InvalidRecordException e) {
        error = e.errorCode();
        message = e.getMessage();
      }
    }
    if (error != ErrorCode.NONE) {
      if (req.replyTo() != null) {
        req.replyTo().tell(ProduceResponse.failed(req.topic(), req.partition(), error, message));
      }
      return Effect().none();
    }
    pending.add(new PendingAppend(batch, req));
    if (!flushScheduled) {
      flushScheduled = true;
      ctx.getSelf().tell(Flush.INSTANCE);
    }
    return Effect().none();
  }

  /** Group commit: every append that arrived since the last persist goes into one persist. */
  private Effect<Event, PartitionLog> onFlush(PartitionLog state, Flush cmd) {
    flushScheduled = false;
    if (pending.isEmpty()) {
      return Effect().none();
    }
    List<PendingAppend> appends = new ArrayList<>(pending);
    pending.clear();
    if (!state.isActive()) { // deleted between the append and the flush
      for (PendingAppend p : appends) {
        reply(p.request(), ProduceResponse.failed(topic, partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "Partition " + entityId + " was deleted"));
      }
      return Effect().none();
    }
    List<Event> events = new ArrayList<>(appends.size());
    long[] baseOffsets = new long[appends.size()];
    long next = state.logEndOffset();
    for (int i = 0; i < appends.size(); i++) {
      RecordBatch b = appends.get(i).batch();
      b.setBaseOffset(next);
      b.setPartitionLeaderEpoch(state.leaderEpoch());
      baseOffsets[i] = next;
      next = b.nextOffset();
      events.add(new RecordsAppended(b.bytes()));
    }
    journalWrites++;
    return Effect().persist(events).thenRun(s -> {
      for (int i = 0; i < appends.size(); i++) {
        reply(appends.get(i).request(),
            new ProduceResponse(topic, partition, ErrorCode.NONE, null, baseOffsets[i], -1L, s.logStartOffset()));
      }
      wakeWaiters(s);
    });
  }

  private static void reply(ProduceRequest req, ProduceResponse response) {
    if (req.replyTo() != null && req.acks() != 0) {
      req.replyTo().tell(response);
    }
  }

  // --- fetch

  private Effect<Event, PartitionLog> onFetch(PartitionLog state, Fetch cmd) {
    FetchRequest req = cmd.request();
    if (!state.isActive()) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          "Partition " + entityId + " does not exist", -1, -1));
    } else if (req.maxBytes() <= 0) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.INVALID_FETCH_SIZE,
          "maxBytes must be positive, was " + req.maxBytes(), state.highWatermark(), state.logStartOffset()));
    } else if (req.fetchOffset() < state.logStartOffset() || req.fetchOffset() > state.highWatermark()) {
      req.replyTo().tell(FetchResponse.failed(req.topic(), req.partition(), ErrorCode.OFFSET_OUT_OF_RANGE,
          "Offset " + req.fetchOffset() + " is out of range for " + entityId + ": log start offset "
              + state.logStartOffset() + ", high watermark " + state.highWatermark(),
          state.highWatermark(), state.logStartOffset()));
    } else if (req.fetchOffset() == state.highWatermark()) {
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
    OffsetIndex index = state.index();
    int chunk = Math.max(0, index.floorChunk(req.fetchOffset()));
    long fromSeqNr = index.chunkSeqNr(chunk);
    // read whole chunks until they cover maxBytes (plus the chunk the offset sits in)
    long bytes = 0;
    int last = chunk;
    while (last + 1 < index.chunkCount() && bytes < maxBytes + index.chunkBytes(chunk)) {
      bytes += index.chunkBytes(last);
      last++;
    }
    long toSeqNr = last + 1 < index.chunkCount() ? index.chunkSeqNr(last + 1) - 1 : state.lastSeqNr();
    ctx.spawnAnonymous(LogReader.fetch(journal, journalPluginId, persistenceId().id(), fromSeqNr, toSeqNr,
        req.topic(), req.partition(), req.fetchOffset(), maxBytes, state.highWatermark(), state.logStartOffset(),
        req.replyTo(), settings.askTimeout()));
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
            state.logStartOffset(), state.highWatermark(), replyTo, settings.askTimeout()));
      }
    }
    return Effect().none();
  }

  private static ListOffsetsResponse ok(ListOffsetsRequest req, long offset) {
    return new ListOffsetsResponse(req.topic(), req.partition(), ErrorCode.NONE, null, offset, -1L);
  }

  // --- retention

  private Effect<Event, PartitionLog> onRetentionCheck(PartitionLog state, RetentionCheck cmd) {
    if (!state.isActive()) {
      return Effect().none();
    }
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

  private Effect<Event, PartitionLog> onCreate(PartitionLog state, CreatePartition cmd) {
    String self = ctx.getSystem().address().toString();
    if (cmd.placement() != null && !cmd.placement().isEmpty() && !cmd.placement().equals(self)) {
      // started on the wrong node while the shard placement spreads: never create a log here
      cmd.replyTo().tell(new PartitionAck(topic, partition, ErrorCode.NOT_LEADER_OR_FOLLOWER));
      return Effect().none();
    }
    if (state.isActive()) {
      ErrorCode e = state.topicId().equals(cmd.topicId()) ? ErrorCode.NONE : ErrorCode.TOPIC_ALREADY_EXISTS;
      cmd.replyTo().tell(new PartitionAck(topic, partition, e));
      return Effect().none();
    }
    return Effect().persist(new PartitionCreated(cmd.topicId(), cmd.config(), lastSequenceNumber(ctx) + 1))
        .thenRun(s -> cmd.replyTo().tell(new PartitionAck(topic, partition, ErrorCode.NONE)));
  }

  private Effect<Event, PartitionLog> onDelete(PartitionLog state, DeletePartition cmd) {
    if (!state.isActive()) {
      cmd.replyTo().tell(new PartitionAck(topic, partition, ErrorCode.NONE));
      return Effect().none();
    }
    return Effect().persist(PartitionDeleted.INSTANCE).thenRun(s -> {
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
    if (cmd.beforeOffset() < 0 || cmd.beforeOffset() > state.highWatermark()) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.OFFSET_OUT_OF_RANGE, state.logStartOffset()));
      return Effect().none();
    }
    if (cmd.beforeOffset() <= state.logStartOffset()) {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.NONE, state.logStartOffset()));
      return Effect().none();
    }
    OffsetIndex index = state.index();
    long deleteTo;
    if (cmd.beforeOffset() >= state.logEndOffset()) {
      deleteTo = state.lastSeqNr();
    } else {
      int chunk = index.floorChunk(cmd.beforeOffset());
      deleteTo = chunk <= 0 ? 0 : index.chunkSeqNr(chunk) - 1;
    }
    return Effect().persist(new LogStartOffsetAdvanced(cmd.beforeOffset(), deleteTo)).thenRun(s -> {
      cmd.replyTo().tell(new RecordsDeleted(topic, partition, ErrorCode.NONE, s.logStartOffset()));
      wakeWaiters(s);
    });
  }

  private Effect<Event, PartitionLog> onGetStatus(PartitionLog state, GetStatus cmd) {
    cmd.replyTo().tell(new PartitionStatus(topic, partition,
        state.isActive() ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, state.logStartOffset(),
        state.logEndOffset(), state.highWatermark(), state.leaderEpoch(), state.sizeInBytes(), journalWrites));
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
