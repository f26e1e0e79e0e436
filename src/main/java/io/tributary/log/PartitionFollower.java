package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.CommandHandlerBuilderByState;
import akka.persistence.typed.javadsl.Effect;
import io.tributary.broker.BrokerSettings;
import io.tributary.broker.ReplicationSettings;
import io.tributary.log.PartitionLeader.Command;
import io.tributary.log.PartitionLeader.Event;
import io.tributary.log.PartitionLeader.ReplicaFetch;
import io.tributary.log.PartitionLeader.ReplicaFetchResponse;
import io.tributary.log.PartitionLeader.UpdateRole;
import io.tributary.protocol.ErrorCode;
import io.tributary.record.RecordBatch;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * A follower replica of one partition on this node, as Kafka's replica fetcher for one partition: an actor of its own,
 * spawned and stopped by the node's {@link ReplicaManager} (never while the partition's {@link PartitionLeader} entity
 * runs on this node: both journal the same log).
 *
 * <p>It fetches from the leader entity through the shard region ({@link ReplicaFetch} in a {@link ShardingEnvelope}
 * to entity {@link LeaderSharding#entityId}) at its log end offset and journals the leader's batches unchanged. The
 * leader holds a fetch at its log end and answers it as soon as a batch is appended, so in steady state batches are
 * pushed; a follower that was away catches up by fetching from where it is. Each fetch carries the epoch of the
 * follower's last batch; if the logs diverged (an old leader that returns holds batches of an epoch the leader never
 * wrote), the leader says where its log for that epoch ends and the follower truncates there ({@link
 * PartitionLeader.LogTruncated}, Kafka's KIP-595), dropping only records that were never committed. It keeps the
 * leader's high watermark and follows its log start offset.
 *
 * <p>{@link UpdateRole} (from the manager) gives it the leader and epoch to follow; an older epoch is ignored. A
 * replica the metadata gives no leader (no live in-sync replica) waits.
 *
 * <p>Confinement: all state is touched only on this actor's thread.
 */
final class PartitionFollower extends PartitionReplica {

  private record ReplicaFetchReply(ReplicaFetchResponse response) implements PartitionLeader.InternalCommand {}

  private record ReplicaFetchTimeout(long fetchId) implements PartitionLeader.InternalCommand {}

  private enum ReplicaFetchRetry implements PartitionLeader.InternalCommand {
    INSTANCE
  }

  /**
   * Only for tests: stops ({@code true}) or resumes fetching from the leader, as a follower whose fetcher is stuck (the
   * actor keeps running: the manager restarts a follower that stops). Local only.
   */
  record PauseFetching(boolean paused) implements PartitionLeader.InternalCommand {}

  private final ActorRef<ShardingEnvelope<Command>> leaders;
  private boolean paused;
  private final ActorRef<ReplicaFetchResponse> replicaFetchAdapter;
  private boolean fetchInFlight;
  private long fetchId;
  private long fetchSentOffset = -1;

  /**
   * The behavior of this node's follower of {@code topic}-{@code partition}.
   *
   * @param leaders the node's shard region of leader entities
   */
  static Behavior<Command> create(
      String topic,
      int partition,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<ShardingEnvelope<Command>> leaders,
      Clock clock) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> new PartitionFollower(
        ctx, timers, topic, partition, settings, replication, journal, leaders, clock)));
  }

  private PartitionFollower(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      String topic,
      int partition,
      BrokerSettings settings,
      ReplicationSettings replication,
      JournalAccess journal,
      ActorRef<ShardingEnvelope<Command>> leaders,
      Clock clock) {
    super(ctx, timers, topic, partition, settings, replication, journal, clock);
    this.leaders = leaders;
    this.replicaFetchAdapter = ctx.messageAdapter(ReplicaFetchResponse.class, ReplicaFetchReply::new);
  }

  @Override
  public CommandHandler<Command, Event, PartitionLog> commandHandler() {
    CommandHandlerBuilderByState<Command, Event, PartitionLog, PartitionLog> b =
        newCommandHandlerBuilder().forAnyState();
    commonCommands(b);
    b.onCommand(UpdateRole.class, this::onUpdateRole)
        .onCommand(ReplicaFetchReply.class, this::onReplicaFetchReply)
        .onCommand(ReplicaFetchTimeout.class, this::onReplicaFetchTimeout)
        .onCommand(ReplicaFetchRetry.class, (state, cmd) -> {
          sendReplicaFetch(state);
          return Effect().none();
        })
        .onCommand(PauseFetching.class, (state, cmd) -> {
          paused = cmd.paused();
          sendReplicaFetch(state);
          return Effect().none();
        })
        .onCommand(Command.class, (state, cmd) -> {
          ReplicaManager.reject(cmd, ErrorCode.NOT_LEADER_OR_FOLLOWER, "Node " + self + " follows " + entityId
              + (meta != null && meta.hasLeader() ? "; its leader is " + meta.leader() : ""));
          return Effect().none();
        });
    return b.build();
  }

  @Override
  void onRecovered(PartitionLog state) {}

  @Override
  void onStopped(PartitionLog state) {}

  @Override
  void onDeleted(PartitionLog state) {
    fetchInFlight = false;
    fetchId++;
    timers.cancel(ReplicaFetchRetry.INSTANCE);
  }

  private Effect<Event, PartitionLog> onUpdateRole(PartitionLog state, UpdateRole cmd) {
    if (deleting(cmd)) {
      return Effect().none();
    }
    return ensureLog(state, cmd, this::follow);
  }

  private void follow(PartitionLog state, UpdateRole cmd) {
    if (meta != null && cmd.meta().leaderEpoch() < meta.leaderEpoch()) {
      return; // stale
    }
    boolean newEpoch = meta == null || meta.leaderEpoch() != cmd.meta().leaderEpoch()
        || !meta.leader().equals(cmd.meta().leader());
    meta = cmd.meta();
    metaConfig = cmd.config();
    topicId = cmd.topicId();
    if (newEpoch) {
      fetchInFlight = false;
      fetchId++;
      timers.cancel(ReplicaFetchRetry.INSTANCE);
      if (following()) {
        ctx.getLog().info("Partition {}: follower of {} in epoch {} (log end offset {})", entityId, meta.leader(),
            meta.leaderEpoch(), state.logEndOffset());
      }
      sendReplicaFetch(state);
    }
  }

  private String topicId;

  /** Whether the metadata names another node as the leader, which this replica fetches from. */
  private boolean following() {
    return meta != null && meta.hasLeader() && !self.equals(meta.leader()) && meta.replicas().contains(self);
  }

  private void sendReplicaFetch(PartitionLog state) {
    if (!following() || fetchInFlight || !state.isActive() || paused) {
      return;
    }
    fetchInFlight = true;
    long id = ++fetchId;
    fetchSentOffset = state.logEndOffset();
    ReplicaFetch req = new ReplicaFetch(topic, partition, self, meta.leaderEpoch(), state.logEndOffset(),
        state.latestEpoch(), replication.replicaFetchMaxBytes(), replicaFetchAdapter);
    leaders.tell(new ShardingEnvelope<>(LeaderSharding.entityId(topic, partition, meta.leaderEpoch(), topicId), req));
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
    if (!following() || !fetchInFlight || r.leaderEpoch() != meta.leaderEpoch()
        || r.fetchOffset() != fetchSentOffset || r.fetchOffset() != state.logEndOffset()) {
      return Effect().none(); // stale
    }
    timers.cancel(ReplicaFetchTimeout.class);
    if (r.error() == ErrorCode.OFFSET_OUT_OF_RANGE && r.logStartOffset() > state.logEndOffset()) {
      // the leader deleted what we would fetch next: start our log at its log start offset
      fetchInFlight = false;
      return advanceLogStart(state, r.logStartOffset()).thenRun(this::sendReplicaFetch);
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
        return Effect().none().thenRun(this::sendReplicaFetch);
      }
      return Effect().persist(new PartitionLeader.LogTruncated(target)).thenRun(this::sendReplicaFetch);
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
      events.add(new PartitionLeader.RecordsAppended(bytes));
      next = b.nextOffset();
    }
    fetchInFlight = false;
    long leaderHw = r.highWatermark();
    long leaderLogStart = r.logStartOffset();
    if (events.isEmpty()) {
      catchUp(state, leaderHw);
      if (leaderLogStart > state.logStartOffset() && leaderLogStart <= state.logEndOffset()) {
        return advanceLogStart(state, leaderLogStart).thenRun(this::sendReplicaFetch);
      }
      sendReplicaFetch(state);
      return Effect().none();
    }
    journalWrites++;
    return Effect().persist(events).thenRun(s -> {
      catchUp(s, leaderHw);
      sendReplicaFetch(s);
    });
  }

  private static void catchUp(PartitionLog state, long leaderHw) {
    if (leaderHw > state.highWatermark()) {
      state.setHighWatermark(leaderHw);
    }
  }
}
