package io.tributary.log;

import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.SnapshotAdapter;
import akka.persistence.typed.SnapshotCompleted;
import akka.persistence.typed.javadsl.CommandHandlerBuilderByState;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EffectBuilder;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.broker.TopicConfig;
import io.tributary.cluster.PartitionMetadata;
import io.tributary.cluster.TopicMetadata;
import io.tributary.log.PartitionLeader.Command;
import io.tributary.log.PartitionLeader.Event;
import io.tributary.protocol.ErrorCode;
import io.tributary.record.RecordBatch;
import java.time.Clock;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * What a partition's leader ({@link PartitionLeader}, a Cluster Sharding entity) and its followers ({@link
 * PartitionFollower}, one per follower replica) share: the node's local log of the partition, an {@link
 * EventSourcedBehavior} over persistence id {@code partition|topic-N} in the node's LevelDB journal. On one node at
 * most one of them runs for a partition at a time (the node's {@link ReplicaManager} sees to it), so the log always has
 * one writer.
 *
 * <p>Shared here: the journal and snapshot wiring, the events and how they change the {@link PartitionLog}, the
 * creation of the log from the metadata ({@link #ensureLog}), retention (every {@code log.retention.check.interval.ms}
 * each replica drops whole index chunks from the front while the rest still holds at least {@code retention.bytes} and
 * while a chunk's newest record is older than {@code retention.ms}, as Kafka drops segments), the in-memory tail's idle
 * release, {@link PartitionLeader.GetStatus} and {@link PartitionLeader.DeletePartition} (after which the replica
 * stops), and {@link PartitionLeader.StopReplica}.
 *
 * <p>Confinement: all state is touched only on the actor's thread.
 */
abstract class PartitionReplica extends EventSourcedBehavior<Command, Event, PartitionLog> {

  /** The persistence id name of partition logs. */
  static final String PERSISTENCE_TYPE = "partition";

  /** Every {@code log.retention.check.interval.ms}: apply retention. */
  enum RetentionCheck implements PartitionLeader.InternalCommand {
    INSTANCE
  }

  /** Every {@code tail-idle-ms}: drop the in-memory tail if nothing was appended since the last check. */
  enum TailIdleCheck implements PartitionLeader.InternalCommand {
    INSTANCE
  }

  final ActorContext<Command> ctx;
  final TimerScheduler<Command> timers;
  /** {@code topic-N}. */
  final String entityId;
  final String topic;
  final int partition;
  final BrokerSettings settings;
  final ReplicationSettings replication;
  final JournalAccess journal;
  final Clock clock;
  final String journalPluginId;
  /** This node's address, as the metadata names replicas. */
  final String self;
  /** Journal writes (persists) this incarnation made for appends. */
  long journalWrites;
  /** The partition's metadata as this replica last heard it (null before the first). */
  PartitionMetadata meta;
  TopicConfig metaConfig;
  private long deletedToSeqNr;
  /** The log end offset at the last {@link TailIdleCheck}; unchanged at the next one means idle. */
  private long logEndAtLastTailCheck = -1;

  PartitionReplica(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String topic,
      int partition,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      Clock clock) {
    super(PersistenceId.of(PERSISTENCE_TYPE, PartitionLeader.entityId(topic, partition)));
    this.ctx = ctx;
    this.timers = timers;
    this.topic = topic;
    this.partition = partition;
    this.entityId = PartitionLeader.entityId(topic, partition);
    this.settings = settings;
    this.replication = replication;
    this.journal = journal;
    this.clock = clock;
    this.journalPluginId = PartitionLeader.journalPluginIdFor(entityId, settings.journalInstances());
    this.self = ctx.getSystem().address().toString();
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
    return event instanceof PartitionLeader.LogStartOffsetAdvanced || event == PartitionLeader.PartitionDeleted.INSTANCE;
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

  /** Called on the actor's thread once the log is recovered from the journal. */
  abstract void onRecovered(PartitionLog state);

  /** Called when the actor stops: everything still waiting is answered. */
  abstract void onStopped(PartitionLog state);

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
          onRecovered(state);
        })
        // the tail's bytes go back to the node's budget when this actor stops or restarts (its state is dropped)
        .onSignal(akka.actor.typed.PostStop.instance(), state -> {
          onStopped(state);
          if (state.isActive()) {
            LeaderSharding.get(ctx.getSystem()).handOverHighWatermark(
                LeaderSharding.handOverKey(state.topicId(), entityId), state.highWatermark());
          }
          state.dropTail();
        })
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

  /** Adds the commands every replica handles to {@code b}. */
  void commonCommands(CommandHandlerBuilderByState<Command, Event, PartitionLog, PartitionLog> b) {
    b.onCommand(RetentionCheck.class, (state, cmd) -> onRetentionCheck(state))
        .onCommand(TailIdleCheck.class, this::onTailIdleCheck)
        .onCommand(PartitionLeader.ApplyRetention.class, (state, cmd) -> onRetentionCheck(state))
        .onCommand(PartitionLeader.DeletePartition.class, this::onDelete)
        .onCommand(PartitionLeader.GetStatus.class, this::onGetStatus)
        .onCommand(PartitionLeader.StopReplica.class, (state, cmd) -> Effect().stop());
  }

  // --- log creation

  /**
   * Creates the local log for {@code cmd}'s topic id if it does not exist yet (a log of an older topic of the same
   * name is deleted first), then runs {@code then} with the log; without a change, at once.
   */
  EffectBuilder<Event, PartitionLog> ensureLog(PartitionLog state, PartitionLeader.UpdateRole cmd,
      BiConsumer<PartitionLog, PartitionLeader.UpdateRole> then) {
    if (!state.isActive()) {
      return Effect().persist(new PartitionLeader.PartitionCreated(cmd.topicId(), cmd.config(),
          lastSequenceNumber(ctx) + 1)).thenRun(s -> then.accept(s, cmd));
    }
    if (!state.topicId().equals(cmd.topicId())) {
      // a log of an older topic of the same name (deleted while this node was away): drop it, start the new one
      long deletedAt = lastSequenceNumber(ctx) + 1;
      return Effect().persist(List.of(PartitionLeader.PartitionDeleted.INSTANCE,
              new PartitionLeader.PartitionCreated(cmd.topicId(), cmd.config(), deletedAt + 1)))
          .thenRun(s -> {
            String pid = persistenceId().id();
            journal.deleteSnapshotsTo(BrokerSettings.SNAPSHOT_PLUGIN_ID, pid, deletedAt - 1, settings.askTimeout())
                .thenCompose(r -> journal.deleteMessagesTo(journalPluginId, pid, deletedAt, settings.askTimeout()));
            meta = null; // the new topic's leader epochs start again at 0
            then.accept(s, cmd);
          });
    }
    then.accept(state, cmd);
    return Effect().none();
  }

  /** Whether {@code cmd} must be ignored: the topic is being deleted (the controller deletes with DeletePartition). */
  static boolean deleting(PartitionLeader.UpdateRole cmd) {
    return cmd.topicState() == TopicMetadata.State.DELETING;
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

  /** Called after retention or a delete of records moved the log start offset. */
  void afterLogStartAdvanced(PartitionLog state) {}

  private Effect<Event, PartitionLog> onRetentionCheck(PartitionLog state) {
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
    return Effect().persist(new PartitionLeader.LogStartOffsetAdvanced(newStart, deleteTo))
        .thenRun(this::afterLogStartAdvanced);
  }

  /** Persists a new log start offset; whole index chunks below it may leave the journal. */
  EffectBuilder<Event, PartitionLog> advanceLogStart(PartitionLog state, long newStart) {
    OffsetIndex index = state.index();
    long deleteTo;
    if (newStart >= state.logEndOffset()) {
      deleteTo = state.lastSeqNr();
    } else {
      int chunk = index.floorChunk(newStart);
      deleteTo = chunk <= 0 ? 0 : index.chunkSeqNr(chunk) - 1;
    }
    return Effect().persist(new PartitionLeader.LogStartOffsetAdvanced(newStart, deleteTo));
  }

  // --- status and delete

  private Effect<Event, PartitionLog> onGetStatus(PartitionLog state, PartitionLeader.GetStatus cmd) {
    cmd.replyTo().tell(new PartitionLeader.PartitionStatus(topic, partition,
        state.isActive() ? ErrorCode.NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, state.logStartOffset(),
        state.logEndOffset(), state.highWatermark(), state.leaderEpoch(), state.sizeInBytes(), journalWrites,
        state.tailBytes()));
    return Effect().none();
  }

  /** Called once the partition's deletion is journaled, before its events are deleted: answer what waits. */
  abstract void onDeleted(PartitionLog state);

  /** Deletes the partition's log (idempotent), answers, and stops: a re-created topic starts a replica anew. */
  private Effect<Event, PartitionLog> onDelete(PartitionLog state, PartitionLeader.DeletePartition cmd) {
    if (!state.isActive()) {
      cmd.replyTo().tell(new PartitionLeader.PartitionAck(topic, partition, ErrorCode.NONE));
      return Effect().stop();
    }
    LeaderSharding.get(ctx.getSystem()).takeHighWatermark(LeaderSharding.handOverKey(state.topicId(), entityId));
    return Effect().persist(PartitionLeader.PartitionDeleted.INSTANCE).thenRun(s -> {
      onDeleted(s);
      meta = null;
      long upTo = s.lastSeqNr();
      String pid = persistenceId().id();
      // snapshots first, then events: a crash in between replays to the deleted state, never to a stale snapshot
      journal.deleteSnapshotsTo(BrokerSettings.SNAPSHOT_PLUGIN_ID, pid, upTo - 1, settings.askTimeout())
          .thenCompose(r -> journal.deleteMessagesTo(journalPluginId, pid, upTo, settings.askTimeout()))
          .whenComplete((r, ex) -> cmd.replyTo().tell(new PartitionLeader.PartitionAck(topic, partition,
              ErrorCode.NONE)));
    }).thenStop();
  }

  // --- events

  @Override
  public EventHandler<PartitionLog, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(PartitionLeader.RecordsAppended.class, (state, e) -> {
          state.applyAppended(RecordBatch.wrap(e.batch()));
          return state;
        })
        .onEvent(PartitionLeader.PartitionCreated.class, (state, e) -> {
          state.applyCreated(e.topicId(), e.config(), e.seqNr());
          return state;
        })
        .onEvent(PartitionLeader.LogStartOffsetAdvanced.class, (state, e) -> {
          state.applyLogStartAdvanced(e.logStartOffset(), e.deleteToSeqNr());
          return state;
        })
        .onEvent(PartitionLeader.LogTruncated.class, (state, e) -> {
          state.applyTruncated(e.offset());
          return state;
        })
        .onEvent(PartitionLeader.PartitionDeleted.class, (state, e) -> {
          state.applyDeleted();
          return state;
        })
        .build();
  }
}
