package io.tributary.client;

import akka.actor.NoSerializationVerificationNeeded;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AbstractBehavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Receive;
import akka.actor.typed.javadsl.TimerScheduler;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol.AssignmentAck;
import io.tributary.protocol.GroupProtocol.AssignmentChanged;
import io.tributary.protocol.GroupProtocol.GroupResponse;
import io.tributary.protocol.GroupProtocol.Heartbeat;
import io.tributary.protocol.GroupProtocol.JoinGroup;
import io.tributary.protocol.GroupProtocol.JoinGroupResponse;
import io.tributary.protocol.GroupProtocol.LeaveGroup;
import io.tributary.protocol.GroupProtocol.MemberEvent;
import io.tributary.protocol.GroupProtocol.MemberRemoved;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.ProtocolVersions;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The member actor of a subscribed consumer: the consumer's presence in its group, in the client's ActorSystem (a
 * system actor, so that the group coordinator on a broker can push to it and death-watch it over Artery).
 *
 * <p>It joins the group ({@link JoinGroup} through the gateway, retrying retriable errors every {@code
 * retry.backoff.ms}), heartbeats every {@code heartbeat.interval.ms} with the generation the consumer last
 * acknowledged, and watches the application's {@code poll()} calls ({@link PollTimer}): when none came within {@code
 * max.poll.interval.ms} it leaves the group ({@link LeaveGroup}; a static member only stops) as Kafka's heartbeat
 * thread does. It never touches partitions itself: what the coordinator pushes ({@link AssignmentChanged}, {@link
 * MemberRemoved}) and what the member detects (heartbeat errors, session or poll timeout, fatal join errors) goes to
 * the consumer as an {@link Event}, which the application thread applies inside {@code poll()}; the consumer answers
 * with {@link Command}s ({@link Acked}, {@link Rejoin}, ...).
 *
 * <h2>Membership</h2>
 * A member id is used until the member is out of the group (removed, fenced, session or poll timeout, unknown to the
 * coordinator): the actor then retires the id, reports {@link Lost} and stays out until the consumer sends {@link
 * Rejoin} (after it called {@code onPartitionsLost}), which joins as a new member (member id ""). Pushes for a retired
 * id, pushes older than the last one forwarded, and pushes while out are dropped.
 *
 * <p>Heartbeat answers: NONE keeps the member alive; REBALANCE_IN_PROGRESS and ILLEGAL_GENERATION too, and when no
 * pushed assignment is waiting for the application's acknowledgement, they make the member rejoin with its member id
 * and owned partitions (the coordinator pushes the assignment again), at most once until a push or a good heartbeat
 * arrives (or {@code session.timeout.ms} passed); UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID put it out of the group.
 * When no heartbeat was answered for {@code session.timeout.ms}, it is out as well.
 *
 * <p>Accepts: {@link MemberEvent}s from the coordinator; {@link Command}s from its consumer (local only). Replies to
 * nothing; {@link Leave} completes its future and stops the actor.
 */
final class GroupMember extends AbstractBehavior<Object> {

  /** Messages from the consumer (local only, never serialized). */
  interface Command extends NoSerializationVerificationNeeded {}

  /**
   * The consumer applied the push of {@code generation} and now owns exactly {@code owned}: sends {@link
   * AssignmentAck} (if {@code memberId} is still the member's) and heartbeats with {@code generation} from now on.
   */
  record Acked(String memberId, int generation, List<PartitionRef> owned) implements Command {}

  /** After a {@link Lost} or {@link JoinFailed}: join again (as a new member after a loss), owning {@code owned}. */
  record Rejoin(List<PartitionRef> owned) implements Command {}

  /** The subscription changed: rejoin with it (at once, or when the member joins again). */
  record Resubscribe(List<String> topics, String topicPattern) implements Command {}

  /** A commit of {@code memberId} was rejected with {@code error}: out of the group, or rejoin, as for a heartbeat. */
  record CommitRejected(String memberId, ErrorCode error) implements Command {}

  /**
   * Leaves (with a {@link LeaveGroup} when {@code sendLeaveGroup} and the member is in the group), completes {@code
   * done} when the coordinator answered (or the request failed, after at most {@code request.timeout.ms}), and stops.
   */
  record Leave(boolean sendLeaveGroup, CompletableFuture<Void> done) implements Command {}

  /** What the member tells its consumer, in order. */
  sealed interface Event permits Assigned, Lost, JoinFailed {}

  /** The coordinator pushed an assignment for this member. */
  record Assigned(AssignmentChanged push) implements Event {}

  /**
   * The member {@code memberId} is out of the group: its partitions are lost. {@code error} is the coordinator's
   * (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS), REQUEST_TIMED_OUT for a session timeout, or
   * {@code null} when the member left because {@code poll()} was not called in time.
   */
  record Lost(String memberId, ErrorCode error, String reason) implements Event {}

  /** Joining failed with a non-retriable error (INVALID_GROUP_ID, INCONSISTENT_GROUP_PROTOCOL, ...). */
  record JoinFailed(ErrorCode error, String message) implements Event {}

  /**
   * When the application last called {@code poll()}: written by the consumer thread, read by the member actor.
   * Thread-safe.
   */
  static final class PollTimer {
    private volatile long lastPollNanos = System.nanoTime();
    private volatile boolean waiting;

    /** The application is in {@code poll()} now. */
    void touch() {
      lastPollNanos = System.nanoTime();
    }

    /** Whether {@code poll()} is blocked waiting for records (which counts as polling). */
    void waiting(boolean value) {
      if (!value) {
        lastPollNanos = System.nanoTime();
      }
      waiting = value;
    }

    /** Nanoseconds until {@code maxNanos} without a poll have passed (≤ 0: already). */
    long remainingNanos(long maxNanos) {
      if (waiting) {
        return maxNanos;
      }
      return lastPollNanos + maxNanos - System.nanoTime();
    }
  }

  private interface Internal extends NoSerializationVerificationNeeded {}

  private record JoinAnswered(long attempt, JoinGroupResponse response, Throwable failure) implements Internal {}

  private record RetryJoin(long attempt) implements Internal {}

  private record HeartbeatAnswered(String memberId, GroupResponse response, Throwable failure) implements Internal {}

  private record LeaveAnswered(CompletableFuture<Void> done) implements Internal {}

  private enum HeartbeatTick implements Internal {
    INSTANCE
  }

  private enum PollCheck implements Internal {
    INSTANCE
  }

  private enum Ignored implements Internal {
    INSTANCE
  }

  private enum Phase {
    /** A JoinGroup is in flight or waiting for its retry. */
    JOINING,
    /** In the group: heartbeating. */
    STABLE,
    /** Out of the group, waiting for the consumer's {@link Rejoin}. */
    OUT,
    /** Leaving for good (close, unsubscribe). */
    LEAVING
  }

  private static final String RETRY_JOIN = "retry-join";
  private static final String HEARTBEAT = "heartbeat";
  private static final String POLL_CHECK = "poll-check";

  private final TimerScheduler<Object> timers;
  private final ConsumerSettings settings;
  private final ActorRef<ClientRequest> gateway;
  private final Consumer<Event> sink;
  private final PollTimer pollTimer;
  private final long sessionTimeoutNanos;
  private final long maxPollIntervalNanos;

  private List<String> topics;
  private String topicPattern;
  private Phase phase;
  private String memberId = "";
  private final Set<String> retired = new HashSet<>();
  private List<PartitionRef> owned = List.of();
  /** The generation the consumer last acknowledged: sent with heartbeats. */
  private int ackedGeneration = -1;
  /** The generation of the last push forwarded to the consumer. */
  private int forwardedGeneration = -1;
  private long joinAttempt;
  private long lastJoinSentNanos;
  private boolean resubscribeAfterJoin;
  private boolean rejoinedInStreak;
  private boolean heartbeatInFlight;
  private long lastAliveNanos;

  /**
   * The member behavior; it starts joining at once.
   *
   * @param settings the consumer's settings ({@code group.id} must be set)
   * @param gateway where group requests go
   * @param topics the subscribed topics (empty with a pattern)
   * @param topicPattern the subscribed pattern, or null
   * @param sink receives the {@link Event}s, on the actor's thread (must not block)
   * @param pollTimer the application's poll times
   */
  static Behavior<Object> create(
      ConsumerSettings settings,
      ActorRef<ClientRequest> gateway,
      List<String> topics,
      String topicPattern,
      Consumer<Event> sink,
      PollTimer pollTimer) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers -> new GroupMember(ctx, timers, settings, gateway, topics, topicPattern, sink, pollTimer)));
  }

  private GroupMember(
      ActorContext<Object> ctx,
      TimerScheduler<Object> timers,
      ConsumerSettings settings,
      ActorRef<ClientRequest> gateway,
      List<String> topics,
      String topicPattern,
      Consumer<Event> sink,
      PollTimer pollTimer) {
    super(ctx);
    this.timers = timers;
    this.settings = settings;
    this.gateway = gateway;
    this.topics = List.copyOf(topics);
    this.topicPattern = topicPattern;
    this.sink = sink;
    this.pollTimer = pollTimer;
    this.sessionTimeoutNanos = Duration.ofMillis(settings.sessionTimeoutMs()).toNanos();
    this.maxPollIntervalNanos = Duration.ofMillis(settings.maxPollIntervalMs()).toNanos();
    timers.startTimerWithFixedDelay(
        HEARTBEAT, HeartbeatTick.INSTANCE, Duration.ofMillis(settings.heartbeatIntervalMs()));
    schedulePollCheck();
    startJoin();
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(AssignmentChanged.class, this::onAssignmentChanged)
        .onMessage(MemberRemoved.class, this::onMemberRemoved)
        .onMessage(Acked.class, this::onAcked)
        .onMessage(Rejoin.class, this::onRejoin)
        .onMessage(Resubscribe.class, this::onResubscribe)
        .onMessage(CommitRejected.class, this::onCommitRejected)
        .onMessage(Leave.class, this::onLeave)
        .onMessage(JoinAnswered.class, this::onJoinAnswered)
        .onMessage(RetryJoin.class, this::onRetryJoin)
        .onMessage(HeartbeatTick.class, m -> onHeartbeatTick())
        .onMessage(HeartbeatAnswered.class, this::onHeartbeatAnswered)
        .onMessage(PollCheck.class, m -> onPollCheck())
        .onMessage(LeaveAnswered.class, this::onLeaveAnswered)
        .onMessage(Ignored.class, m -> this)
        .build();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pushes from the coordinator

  private Behavior<Object> onAssignmentChanged(AssignmentChanged push) {
    if (phase == Phase.OUT || phase == Phase.LEAVING || retired.contains(push.memberId())) {
      return this;
    }
    if (memberId.isEmpty()) {
      if (phase != Phase.JOINING) {
        return this;
      }
      memberId = push.memberId(); // the push overtook the JoinGroup answer
    } else if (!memberId.equals(push.memberId())) {
      return this;
    }
    if (push.generation() < forwardedGeneration) {
      return this;
    }
    if (phase == Phase.JOINING) {
      phase = Phase.STABLE;
      lastAliveNanos = System.nanoTime();
      timers.cancel(RETRY_JOIN);
      if (resubscribeAfterJoin) {
        resubscribeAfterJoin = false;
        startJoin();
      }
    }
    forwardedGeneration = push.generation();
    rejoinedInStreak = false;
    sink.accept(new Assigned(push));
    return this;
  }

  private Behavior<Object> onMemberRemoved(MemberRemoved removed) {
    if (phase == Phase.OUT || phase == Phase.LEAVING || memberId.isEmpty()
        || !memberId.equals(removed.memberId())) {
      return this;
    }
    ErrorCode error = removed.error() == null ? ErrorCode.UNKNOWN_MEMBER_ID : removed.error();
    goOut(error, "removed from group " + settings.groupId() + ": " + removed.reason());
    return this;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Commands from the consumer

  private Behavior<Object> onAcked(Acked acked) {
    if (phase == Phase.OUT || phase == Phase.LEAVING || memberId.isEmpty() || !memberId.equals(acked.memberId())) {
      return this;
    }
    gateway.tell(
        new AssignmentAck(
            ProtocolVersions.CURRENT, settings.groupId(), memberId, acked.generation(), acked.owned()));
    ackedGeneration = acked.generation();
    owned = List.copyOf(acked.owned());
    return this;
  }

  private Behavior<Object> onRejoin(Rejoin rejoin) {
    if (phase != Phase.OUT) {
      return this;
    }
    owned = List.copyOf(rejoin.owned());
    ackedGeneration = -1;
    forwardedGeneration = -1;
    rejoinedInStreak = false;
    startJoin();
    return this;
  }

  private Behavior<Object> onResubscribe(Resubscribe resubscribe) {
    topics = List.copyOf(resubscribe.topics());
    topicPattern = resubscribe.topicPattern();
    if (phase == Phase.STABLE) {
      startJoin();
    } else if (phase == Phase.JOINING) {
      if (memberId.isEmpty()) {
        resubscribeAfterJoin = true; // a second join as a new member would make a second member
      } else {
        startJoin();
      }
    }
    return this;
  }

  private Behavior<Object> onCommitRejected(CommitRejected rejected) {
    if (phase != Phase.STABLE || memberId.isEmpty() || !memberId.equals(rejected.memberId())) {
      return this;
    }
    switch (rejected.error()) {
      case UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID ->
          goOut(rejected.error(), "a commit was rejected with " + rejected.error());
      case ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS -> maybeRejoinAsSameMember();
      default -> {}
    }
    return this;
  }

  private Behavior<Object> onLeave(Leave leave) {
    timers.cancelAll();
    boolean inGroup = !memberId.isEmpty() && (phase == Phase.STABLE || phase == Phase.JOINING);
    phase = Phase.LEAVING;
    joinAttempt++;
    if (leave.sendLeaveGroup() && inGroup) {
      String id = memberId;
      getContext()
          .ask(
              GroupResponse.class,
              gateway,
              Duration.ofMillis(Math.max(1, settings.requestTimeoutMs())),
              replyTo -> new LeaveGroup(ProtocolVersions.CURRENT, settings.groupId(), id, replyTo),
              (response, failure) -> new LeaveAnswered(leave.done()));
      return this;
    }
    leave.done().complete(null);
    return Behaviors.stopped();
  }

  private Behavior<Object> onLeaveAnswered(LeaveAnswered answered) {
    answered.done().complete(null);
    return Behaviors.stopped();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Joining

  private void startJoin() {
    phase = Phase.JOINING;
    long attempt = ++joinAttempt;
    lastJoinSentNanos = System.nanoTime();
    timers.cancel(RETRY_JOIN);
    String id = memberId;
    List<String> joinTopics = topicPattern == null ? topics : List.of();
    String pattern = topicPattern;
    List<PartitionRef> joinOwned = owned;
    ActorRef<MemberEvent> self = getContext().getSelf().narrow();
    getContext()
        .ask(
            JoinGroupResponse.class,
            gateway,
            Duration.ofMillis(Math.max(1, settings.requestTimeoutMs())),
            replyTo ->
                new JoinGroup(
                    ProtocolVersions.CURRENT,
                    settings.groupId(),
                    id,
                    settings.groupInstanceId(),
                    settings.clientId(),
                    joinTopics,
                    pattern,
                    settings.assignors(),
                    settings.sessionTimeoutMs(),
                    settings.maxPollIntervalMs(),
                    joinOwned,
                    self,
                    replyTo),
            (response, failure) -> new JoinAnswered(attempt, response, failure));
  }

  private Behavior<Object> onJoinAnswered(JoinAnswered answer) {
    if (answer.attempt() != joinAttempt || phase != Phase.JOINING) {
      return this;
    }
    ErrorCode error;
    String message;
    if (answer.failure() != null) {
      error = answer.failure() instanceof TimeoutException ? ErrorCode.REQUEST_TIMED_OUT : ErrorCode.NETWORK_EXCEPTION;
      message = "JoinGroup failed: " + answer.failure();
    } else {
      error = answer.response().error();
      message = answer.response().errorMessage() != null ? answer.response().errorMessage() : error.defaultMessage();
    }
    switch (error) {
      case NONE -> {
        String id = answer.response().memberId();
        if (!memberId.isEmpty() && !memberId.equals(id)) {
          retired.add(memberId);
        }
        memberId = id;
        retired.remove(id);
        phase = Phase.STABLE;
        lastAliveNanos = System.nanoTime();
        if (resubscribeAfterJoin) {
          resubscribeAfterJoin = false;
          startJoin();
        }
      }
      case UNKNOWN_MEMBER_ID -> {
        if (owned.isEmpty()) {
          if (!memberId.isEmpty()) {
            retired.add(memberId);
          }
          memberId = "";
          ackedGeneration = -1;
          forwardedGeneration = -1;
          startJoin();
        } else {
          goOut(error, message);
        }
      }
      case FENCED_INSTANCE_ID -> goOut(error, message);
      default -> {
        if (error.retriable()) {
          getContext().getLog().debug("JoinGroup for group {} failed ({}), retrying", settings.groupId(), error);
          timers.startSingleTimer(
              RETRY_JOIN, new RetryJoin(answer.attempt()), Duration.ofMillis(settings.retryBackoffMs()));
        } else {
          phase = Phase.OUT;
          joinAttempt++;
          sink.accept(new JoinFailed(error, message));
        }
      }
    }
    return this;
  }

  private Behavior<Object> onRetryJoin(RetryJoin retry) {
    if (retry.attempt() == joinAttempt && phase == Phase.JOINING) {
      startJoin();
    }
    return this;
  }

  /** Rejoins with the same member id, unless an acknowledgement is due anyway or a rejoin was just tried. */
  private void maybeRejoinAsSameMember() {
    if (phase != Phase.STABLE || forwardedGeneration > ackedGeneration) {
      return;
    }
    if (rejoinedInStreak && System.nanoTime() - lastJoinSentNanos < sessionTimeoutNanos) {
      return;
    }
    rejoinedInStreak = true;
    startJoin();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Heartbeats and timeouts

  private Behavior<Object> onHeartbeatTick() {
    if (phase != Phase.STABLE) {
      return this;
    }
    if (System.nanoTime() - lastAliveNanos >= sessionTimeoutNanos) {
      goOut(
          ErrorCode.REQUEST_TIMED_OUT,
          "no heartbeat was answered within " + ClientConfig.SESSION_TIMEOUT_MS + "=" + settings.sessionTimeoutMs()
              + " ms");
      return this;
    }
    if (heartbeatInFlight) {
      return this;
    }
    heartbeatInFlight = true;
    String id = memberId;
    int generation = ackedGeneration;
    getContext()
        .ask(
            GroupResponse.class,
            gateway,
            Duration.ofMillis(Math.max(1, Math.min(settings.requestTimeoutMs(), settings.sessionTimeoutMs()))),
            replyTo -> new Heartbeat(ProtocolVersions.CURRENT, settings.groupId(), id, generation, replyTo),
            (response, failure) -> new HeartbeatAnswered(id, response, failure));
    return this;
  }

  private Behavior<Object> onHeartbeatAnswered(HeartbeatAnswered answer) {
    heartbeatInFlight = false;
    if (phase != Phase.STABLE || !memberId.equals(answer.memberId()) || answer.failure() != null) {
      return this;
    }
    ErrorCode error = answer.response().error();
    switch (error) {
      case NONE -> {
        lastAliveNanos = System.nanoTime();
        rejoinedInStreak = false;
      }
      case REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION -> {
        lastAliveNanos = System.nanoTime();
        maybeRejoinAsSameMember();
      }
      case UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID ->
          goOut(error, "heartbeat rejected: " + answer.response().errorMessage());
      default -> getContext().getLog().debug("Heartbeat of group {} failed: {}", settings.groupId(), error);
    }
    return this;
  }

  private Behavior<Object> onPollCheck() {
    if (phase == Phase.LEAVING) {
      return this;
    }
    if ((phase == Phase.STABLE || phase == Phase.JOINING) && pollTimer.remainingNanos(maxPollIntervalNanos) <= 0) {
      if (!memberId.isEmpty() && settings.groupInstanceId() == null) {
        String id = memberId;
        getContext()
            .ask(
                GroupResponse.class,
                gateway,
                Duration.ofMillis(Math.max(1, settings.requestTimeoutMs())),
                replyTo -> new LeaveGroup(ProtocolVersions.CURRENT, settings.groupId(), id, replyTo),
                (response, failure) -> Ignored.INSTANCE);
      }
      getContext()
          .getLog()
          .warn(
              "Consumer {} of group {} left the group: poll() was not called within {}={} ms",
              settings.clientId(),
              settings.groupId(),
              ClientConfig.MAX_POLL_INTERVAL_MS,
              settings.maxPollIntervalMs());
      goOut(
          null,
          "poll() was not called within " + ClientConfig.MAX_POLL_INTERVAL_MS + "=" + settings.maxPollIntervalMs()
              + " ms");
    }
    schedulePollCheck();
    return this;
  }

  private void schedulePollCheck() {
    long remaining = pollTimer.remainingNanos(maxPollIntervalNanos);
    long delay = remaining <= 0 ? maxPollIntervalNanos : remaining;
    timers.startSingleTimer(POLL_CHECK, PollCheck.INSTANCE, Duration.ofNanos(Math.max(1_000_000L, delay)));
  }

  /** Out of the group: retire the member id, tell the consumer, wait for its {@link Rejoin}. */
  private void goOut(ErrorCode error, String reason) {
    String old = memberId;
    if (!old.isEmpty()) {
      retired.add(old);
    }
    memberId = "";
    phase = Phase.OUT;
    joinAttempt++;
    timers.cancel(RETRY_JOIN);
    ackedGeneration = -1;
    forwardedGeneration = -1;
    owned = List.of();
    resubscribeAfterJoin = false;
    sink.accept(new Lost(old, error, reason));
  }
}
