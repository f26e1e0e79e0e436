package io.tributary.client;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.GroupProtocol.AssignmentChanged;
import io.tributary.protocol.GroupProtocol.GroupResponse;
import io.tributary.protocol.GroupProtocol.OffsetCommit;
import io.tributary.protocol.GroupProtocol.OffsetFetch;
import io.tributary.protocol.GroupProtocol.OffsetFetchResponse;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.CorruptRecordException;
import io.tributary.record.InvalidRecordException;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Consumer} with manual assignment or consumer-group subscription, as Kafka's {@code KafkaConsumer}.
 *
 * <h2>Fetching</h2>
 * Per assigned partition it keeps a position (the next offset {@link #poll} returns), a buffer of fetched records not
 * yet returned, and at most one request in flight. {@link #poll} sends a {@link FetchRequest} for every partition that
 * has a position, no fetch in flight, is not paused and holds the records of at most one fetch response (a long poll
 * of up to {@code fetch.max.wait.ms}, never longer than what is left of the poll's timeout). So while the application
 * works through one response the next is already being read and sent (Kafka's consumer fetches a partition again only
 * once its buffered records are drained; with one partition the broker and the consumer then take turns instead of
 * working at the same time). A partition holds at most two responses, {@code 2 × max.partition.fetch.bytes}; an error
 * of a fetch ahead is handled once the records before it are returned. It also sends an {@link OffsetFetch} (one for
 * all of them) for partitions whose start is the group's committed offset ({@code group.id} set, no explicit seek);
 * and a {@link ListOffsetsRequest} for every partition without a position otherwise ({@code auto.offset.reset}, or the
 * pending {@link #seekToBeginning} / {@link #seekToEnd}). Answers arrive on Akka threads into a queue that only {@code
 * poll} (and the blocking calls) read; an answer for a partition that was re-seeked, revoked or unassigned since is
 * discarded (every seek, reset or (re)assignment gives the partition a new epoch). Fetches still in flight when {@code
 * poll} returns keep going: their records are there for the next poll.
 *
 * <h2>Group membership</h2>
 * {@link #subscribe} spawns a {@link GroupMember} actor (a system actor of the client's ActorSystem) that joins,
 * heartbeats and receives the coordinator's pushes; it forwards them to the same queue, so assignment changes are
 * applied on the application thread inside {@code poll}, in order, with the rebalance listener (see {@link
 * #applyAssignment}). The consumer answers each applied push with an acknowledgement through the member actor.
 *
 * <h2>Commits</h2>
 * {@code OffsetCommit} carries the member id and the generation of the last applied push (member id "" and generation
 * -1 with manual assignment). Answers of asynchronous commits are queued and their callbacks run on the application
 * thread in a later {@code poll}, {@code commitSync}, {@code commitAsync} or {@code close}.
 *
 * <p>Not thread-safe: use one consumer from one thread (as Kafka's); {@link #wakeup()} is the exception. A call
 * from a second thread while another thread is inside a method of this consumer throws {@link
 * java.util.ConcurrentModificationException}, as Kafka's does. Retriable errors are retried every {@code
 * retry.backoff.ms} inside and across polls.
 */
final class TributaryConsumer<K, V> implements Consumer<K, V> {

  private static final Logger log = LoggerFactory.getLogger(TributaryConsumer.class);

  private static final String EARLIEST = "earliest";
  private static final String LATEST = "latest";
  private static final String NONE = "none";
  private static final String COOPERATIVE = "cooperative-sticky";
  private static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

  private static final ConsumerRebalanceListener NO_OP_LISTENER =
      new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
      };

  /** The state of one assigned partition. */
  private static final class PartitionState {
    final TopicPartition tp;
    /** Changes on every seek or reset; answers to requests of an older epoch are discarded. */
    long epoch;
    /** The next offset poll returns, or -1 if unknown. */
    long position = -1;
    /** A reset asked by seekToBeginning/seekToEnd ({@code earliest}/{@code latest}), or null for auto.offset.reset. */
    String pendingReset;
    /** The position is to come from the group's committed offset (looked up first). */
    boolean needsCommitted;
    boolean committedInFlight;
    /** The last offset known to be committed for the group, or -1: auto-commit commits only positions that moved. */
    long committed = -1;
    boolean paused;
    /** Being revoked: no more fetching, no more records returned. */
    boolean revoking;
    boolean fetchInFlight;
    boolean listOffsetsInFlight;
    /** No request for this partition before this time (monotonic ms): backoff after an error. */
    long retryAtMs;
    /** Fetched records at and after {@link #position}, in offset order, decoded as they are taken. */
    final FetchedRecords buffer = new FetchedRecords();
    /**
     * While {@link #buffer} has records queued: the offset after the fetched range (the last batch's next offset, or
     * the high watermark if that is lower), where the next fetch continues.
     */
    long bufferEnd = -1;
    /**
     * The end offset (after the last record) of each fetch response with records still in {@link #buffer}, oldest
     * first: one more response is fetched ahead while at most one is buffered.
     */
    final ArrayDeque<Long> bufferedResponseEnds = new ArrayDeque<>();
    long highWatermark = -1;
    boolean unknownThisPoll;
    boolean answeredThisPoll;

    PartitionState(TopicPartition tp) {
      this.tp = tp;
    }
  }

  /** Something for the application thread, put in {@link #completions} by another thread. */
  private interface Completion {}

  private record FetchDone(
      TopicPartition tp, long epoch, long fetchOffset, FetchResponse response, Throwable failure)
      implements Completion {}

  private record OffsetsDone(TopicPartition tp, long epoch, ListOffsetsResponse response, Throwable failure)
      implements Completion {}

  private record CommittedDone(Map<TopicPartition, Long> epochs, OffsetFetchResponse response, Throwable failure)
      implements Completion {}

  /** An event of the member actor of subscription number {@code incarnation}. */
  private record FromGroup(long incarnation, GroupMember.Event event) implements Completion {}

  private enum Signal implements Completion {
    /** {@link #wakeup()} was called. */
    WAKEUP,
    /** An asynchronous commit completed: its callback is due. */
    COMMITS_COMPLETED
  }

  /** A completed asynchronous commit. */
  private record CommitOutcome(
      Map<TopicPartition, OffsetAndMetadata> offsets,
      OffsetCommitCallback callback,
      String memberId,
      GroupResponse response,
      Throwable failure) {}

  private enum Mode {
    NONE,
    MANUAL,
    SUBSCRIBED
  }

  private final TributaryClient client;
  private final ConsumerSettings settings;
  private final Deserializer<K> keyDeserializer;
  private final Deserializer<V> valueDeserializer;
  private final Metadata metadata;
  private final Map<TopicPartition, PartitionState> assigned = new LinkedHashMap<>();
  private final LinkedBlockingQueue<Completion> completions = new LinkedBlockingQueue<>();
  private long epochCounter;
  private int rotation;
  private volatile boolean closed;
  /**
   * While {@link #close(Duration)} runs: its deadline (monotonic ms), which also bounds what the rebalance listener
   * does meanwhile (e.g. a {@code commitSync} in {@code onPartitionsRevoked}); else {@link Long#MAX_VALUE}.
   */
  private long closeDeadline = Long.MAX_VALUE;

  // subscription (application thread)
  private Mode mode = Mode.NONE;
  private List<String> subscribedTopics = List.of();
  private Pattern subscribedPattern;
  private ConsumerRebalanceListener listener = NO_OP_LISTENER;
  private ActorRef<Object> member;
  private long memberIncarnation;
  private final GroupMember.PollTimer pollTimer = new GroupMember.PollTimer();
  private String memberId = "";
  private int generation = -1;
  /** After a fencing or a refused join: the next poll asks the member actor to join again. */
  private boolean rejoinOnNextPoll;
  /** The last push applied was the revoke-everything half of an eager rebalance. */
  private boolean afterEagerRevocationRound;

  // commits
  private long nextAutoCommitMs;
  private final ConcurrentLinkedQueue<CommitOutcome> completedCommits = new ConcurrentLinkedQueue<>();
  /** Complete once the outcome of each pending async commit is in {@link #completedCommits}. */
  private final List<CompletableFuture<Void>> asyncCommitsInFlight = new ArrayList<>();

  // the thread inside a method of this consumer, and how deep (as Kafka's KafkaConsumer.acquire)
  private static final long NO_CURRENT_THREAD = -1L;
  private final java.util.concurrent.atomic.AtomicLong currentThread =
      new java.util.concurrent.atomic.AtomicLong(NO_CURRENT_THREAD);
  private final java.util.concurrent.atomic.AtomicInteger refCount = new java.util.concurrent.atomic.AtomicInteger();

  /**
   * Marks the calling thread as inside this consumer (re-entrant, e.g. from a rebalance listener).
   *
   * @throws java.util.ConcurrentModificationException if another thread is inside it
   */
  private void acquire() {
    long id = Thread.currentThread().getId();
    if (id != currentThread.get() && !currentThread.compareAndSet(NO_CURRENT_THREAD, id)) {
      throw new java.util.ConcurrentModificationException(
          "TributaryConsumer is not safe for multi-threaded access: thread " + Thread.currentThread().getName()
              + " called it while another thread was inside it (use one consumer per thread; wakeup() is the only"
              + " method for other threads)");
    }
    refCount.incrementAndGet();
  }

  private void release() {
    if (refCount.decrementAndGet() == 0) {
      currentThread.set(NO_CURRENT_THREAD);
    }
  }

  // wakeup (any thread)
  private final Object wakeLock = new Object();
  private boolean wakeupPending;
  /** Completed when {@link #wakeupPending} is set; replaced when the wakeup is consumed. */
  private CompletableFuture<Void> wakeSignal = new CompletableFuture<>();

  TributaryConsumer(
      TributaryClient client,
      ConsumerSettings settings,
      Deserializer<K> keyDeserializer,
      Deserializer<V> valueDeserializer) {
    this.client = client;
    this.settings = settings;
    this.keyDeserializer = keyDeserializer;
    this.valueDeserializer = valueDeserializer;
    this.metadata =
        new Metadata(client, settings.requestTimeoutMs(), settings.retryBackoffMs(), settings.metadataMaxAgeMs());
    this.nextAutoCommitMs = Metadata.nowMs() + settings.autoCommitIntervalMs();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Assignment and subscription

  /**
   * {@inheritDoc} With {@code enable.auto.commit}, positions are committed asynchronously first if {@code
   * auto.commit.interval.ms} passed (as Kafka).
   *
   * @throws IllegalArgumentException if {@code partitions} is null or holds a null or a partition with a blank topic
   *     or negative number
   * @throws IllegalStateException if the consumer is subscribed or closed
   */
  @Override
  public void assign(Collection<TopicPartition> partitions) {
    acquire();
    try {
      checkOpen();
      if (partitions == null) {
        throw new IllegalArgumentException("Topic partition collection to assign to cannot be null");
      }
      if (mode == Mode.SUBSCRIBED) {
        throw new IllegalStateException("Subscription to topics, partitions and pattern are mutually exclusive");
      }
      if (partitions.isEmpty()) {
        unsubscribe();
        return;
      }
      Set<TopicPartition> wanted = new LinkedHashSet<>();
      for (TopicPartition tp : partitions) {
        if (tp == null || tp.topic() == null || tp.topic().isBlank() || tp.partition() < 0) {
          throw new IllegalArgumentException("Invalid topic partition to assign: " + tp);
        }
        wanted.add(tp);
      }
      maybeAutoCommitAsync();
      assigned.keySet().retainAll(wanted);
      for (TopicPartition tp : wanted) {
        if (!assigned.containsKey(tp)) {
          addPartition(tp);
        }
      }
      mode = Mode.MANUAL;
    } finally {
      release();
    }
  }

  /** {@inheritDoc} An unmodifiable copy. */
  @Override
  public Set<TopicPartition> assignment() {
    acquire();
    try {
      checkOpen();
      return Collections.unmodifiableSet(new LinkedHashSet<>(assigned.keySet()));
    } finally {
      release();
    }
  }

  @Override
  public void subscribe(Collection<String> topics) {
    acquire();
    try {
      subscribe(topics, NO_OP_LISTENER);
    } finally {
      release();
    }
  }

  @Override
  public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      if (topics == null) {
        throw new IllegalArgumentException("Topic collection to subscribe to cannot be null");
      }
      if (listener == null) {
        throw new IllegalArgumentException("RebalanceListener cannot be null");
      }
      if (topics.isEmpty()) {
        unsubscribe();
        return;
      }
      Set<String> names = new LinkedHashSet<>();
      for (String topic : topics) {
        if (topic == null || topic.isBlank()) {
          throw new IllegalArgumentException("Topic collection to subscribe to cannot contain null or empty topic");
        }
        names.add(topic);
      }
      if (mode == Mode.MANUAL) {
        throw new IllegalStateException("Subscription to topics, partitions and pattern are mutually exclusive");
      }
      subscribeInternal(List.copyOf(names), null, listener);
    } finally {
      release();
    }
  }

  @Override
  public void subscribe(Pattern pattern) {
    acquire();
    try {
      subscribe(pattern, NO_OP_LISTENER);
    } finally {
      release();
    }
  }

  @Override
  public void subscribe(Pattern pattern, ConsumerRebalanceListener listener) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      if (pattern == null || pattern.pattern().isEmpty()) {
        throw new IllegalArgumentException(
            "Topic pattern to subscribe to cannot be " + (pattern == null ? "null" : "empty"));
      }
      if (listener == null) {
        throw new IllegalArgumentException("RebalanceListener cannot be null");
      }
      if (mode == Mode.MANUAL) {
        throw new IllegalStateException("Subscription to topics, partitions and pattern are mutually exclusive");
      }
      subscribeInternal(List.of(), pattern, listener);
    } finally {
      release();
    }
  }

  private void subscribeInternal(List<String> topics, Pattern pattern, ConsumerRebalanceListener newListener) {
    String patternText = pattern == null ? null : pattern.pattern();
    String oldPatternText = subscribedPattern == null ? null : subscribedPattern.pattern();
    boolean changed = !topics.equals(subscribedTopics) || !Objects.equals(patternText, oldPatternText);
    subscribedTopics = topics;
    subscribedPattern = pattern;
    listener = newListener;
    if (mode == Mode.SUBSCRIBED) {
      if (changed) {
        member.tell(new GroupMember.Resubscribe(topics, patternText));
      }
      return;
    }
    mode = Mode.SUBSCRIBED;
    memberId = "";
    generation = -1;
    rejoinOnNextPoll = false;
    pollTimer.touch();
    long incarnation = ++memberIncarnation;
    Behavior<Object> behavior =
        GroupMember.create(
            settings,
            client.gateway(),
            topics,
            patternText,
            event -> completions.add(new FromGroup(incarnation, event)),
            pollTimer);
    member = client.system().systemActorOf(behavior, "tributary-consumer-" + UUID.randomUUID(), Props.empty());
  }

  /**
   * {@inheritDoc} With manual assignment, the assignment is cleared (nothing is committed).
   *
   * @throws IllegalStateException if the consumer is closed
   */
  @Override
  public void unsubscribe() {
    acquire();
    try {
      checkOpen();
      if (mode == Mode.SUBSCRIBED) {
        RuntimeException failure =
            leaveGroup(TributaryClient.saturatedAdd(Metadata.nowMs(), settings.defaultApiTimeoutMs()));
        if (failure != null) {
          throw failure;
        }
        return;
      }
      assigned.clear();
      mode = Mode.NONE;
    } finally {
      release();
    }
  }

  @Override
  public Set<String> subscription() {
    acquire();
    try {
      checkOpen();
      if (mode != Mode.SUBSCRIBED) {
        return Set.of();
      }
      if (subscribedPattern == null) {
        return Collections.unmodifiableSet(new LinkedHashSet<>(subscribedTopics));
      }
      Set<String> topics = new TreeSet<>();
      for (TopicPartition tp : assigned.keySet()) {
        topics.add(tp.topic());
      }
      return Collections.unmodifiableSet(topics);
    } finally {
      release();
    }
  }

  @Override
  public ConsumerGroupMetadata groupMetadata() {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      return new ConsumerGroupMetadata(settings.groupId(), generation, memberId, settings.groupInstanceId());
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Positions

  /** {@inheritDoc} Records already fetched for the partition are dropped. */
  @Override
  public void seek(TopicPartition partition, long offset) {
    acquire();
    try {
      checkOpen();
      if (offset < 0) {
        throw new IllegalArgumentException("seek offset must not be negative, was " + offset);
      }
      PartitionState state = stateOf(partition);
      reset(state);
      state.position = offset;
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Lazy, as Kafka's: the log start offset is looked up on the next {@link #poll} or {@link #position}.
   * An empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  @Override
  public void seekToBeginning(Collection<TopicPartition> partitions) {
    acquire();
    try {
      seekLazily(partitions, EARLIEST);
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Lazy, as Kafka's: the high watermark is looked up on the next {@link #poll} or {@link #position}.
   * An empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  @Override
  public void seekToEnd(Collection<TopicPartition> partitions) {
    acquire();
    try {
      seekLazily(partitions, LATEST);
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Blocks up to {@code default.api.timeout.ms} for each lookup of an unknown position (committed offset,
   * then log offsets).
   *
   * @throws TributaryException also REQUEST_TIMED_OUT or UNKNOWN_TOPIC_OR_PARTITION if the lookup failed
   */
  @Override
  public long position(TopicPartition partition) {
    acquire();
    try {
      return position(partition, settings.defaultApiTimeoutMs());
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Blocks up to {@code timeout} for each lookup of an unknown position (committed, then log offsets).
   */
  @Override
  public long position(TopicPartition partition, Duration timeout) {
    acquire();
    try {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("timeout must not be negative");
      }
      return position(partition, toMillisSaturated(timeout));
    } finally {
      release();
    }
  }

  private long position(TopicPartition partition, long timeoutMs) {
    checkOpen();
    PartitionState state = stateOf(partition);
    if (state.position < 0) {
      maybeThrowWakeup();
    }
    if (state.position < 0 && state.needsCommitted) {
      OffsetAndMetadata committed =
          fetchCommitted(List.of(partition), timeoutMs).get(partition);
      if (state.position < 0 && state.needsCommitted) {
        reset(state);
        if (committed != null) {
          state.position = committed.offset();
          state.committed = committed.offset();
        }
      }
    }
    if (state.position < 0) {
      String strategy = strategyOf(state);
      long offset =
          listOffsets(List.of(partition), timestampOf(strategy), timeoutMs).get(partition);
      if (state.position < 0) {
        reset(state);
        state.position = offset;
      }
    }
    return state.position;
  }

  /**
   * {@inheritDoc} Validated first: if one partition is not assigned, none is paused.
   *
   * @throws IllegalArgumentException if {@code partitions} is null
   */
  @Override
  public void pause(Collection<TopicPartition> partitions) {
    acquire();
    try {
      setPaused(partitions, true);
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Validated first: if one partition is not assigned, none is resumed.
   *
   * @throws IllegalArgumentException if {@code partitions} is null
   */
  @Override
  public void resume(Collection<TopicPartition> partitions) {
    acquire();
    try {
      setPaused(partitions, false);
    } finally {
      release();
    }
  }

  @Override
  public Set<TopicPartition> paused() {
    acquire();
    try {
      checkOpen();
      Set<TopicPartition> out = new LinkedHashSet<>();
      for (PartitionState state : assigned.values()) {
        if (state.paused) {
          out.add(state.tp);
        }
      }
      return Collections.unmodifiableSet(out);
    } finally {
      release();
    }
  }

  private void setPaused(Collection<TopicPartition> partitions, boolean paused) {
    checkOpen();
    if (partitions == null) {
      throw new IllegalArgumentException("Topic partition collection cannot be null");
    }
    List<PartitionState> states = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      states.add(stateOf(tp));
    }
    for (PartitionState state : states) {
      state.paused = paused;
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Polling

  /**
   * {@inheritDoc}
   *
   * <p>Deserializers run here; if one throws, the records before the bad one are returned and the exception is
   * thrown by the next poll, with the position left at the bad record (seek past it to skip it).
   *
   * @throws IllegalStateException if the consumer is neither subscribed nor assigned, or is closed
   * @throws TributaryException also CORRUPT_MESSAGE for a batch that fails its CRC; another non-retriable broker error
   */
  @Override
  public List<ConsumerRecord<K, V>> poll(Duration timeout) {
    acquire();
    try {
      checkOpen();
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("timeout must not be negative");
      }
      if (mode == Mode.NONE) {
        throw new IllegalStateException("Consumer is not subscribed to any topics or assigned any partitions");
      }
      pollTimer.touch();
      maybeThrowWakeup();
      runCompletedCommitCallbacks();
      if (mode == Mode.SUBSCRIBED && rejoinOnNextPoll) {
        rejoinOnNextPoll = false;
        member.tell(new GroupMember.Rejoin(ownedRefs()));
      }
      long start = Metadata.nowMs();
      long deadline = TributaryClient.saturatedAdd(start, toMillisSaturated(timeout));
      for (PartitionState state : assigned.values()) {
        state.unknownThisPoll = false;
        state.answeredThisPoll = false;
      }
      boolean autoCommitChecked = false;
      while (true) {
        pollTimer.touch();
        Completion completion;
        while ((completion = completions.poll()) != null) {
          handle(completion);
        }
        if (!autoCommitChecked) {
          autoCommitChecked = true; // after the pending assignment changes: commit with the current generation
          maybeAutoCommitAsync();
        }
        List<ConsumerRecord<K, V>> records = collect();
        if (!records.isEmpty()) {
          try {
            sendRequests(deadline); // fetch ahead while the caller processes these
          } catch (TributaryException e) {
            // not lost: the same condition throws from the next poll
          }
          return records;
        }
        long nextRetry = sendRequests(deadline);
        long now = Metadata.nowMs();
        if (now >= deadline) {
          break;
        }
        long wait = Math.min(deadline, nextRetry) - now;
        pollTimer.waiting(true);
        try {
          completion = completions.poll(Math.max(0, wait), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted in poll()", e);
        } finally {
          pollTimer.waiting(false);
        }
        if (completion != null) {
          handle(completion);
        }
      }
      for (PartitionState state : assigned.values()) {
        if (state.unknownThisPoll && !state.answeredThisPoll) {
          throw new TributaryException(
              ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              "Topic " + state.tp.topic() + " or its partition " + state.tp.partition()
                  + " does not exist (retried for " + toMillisSaturated(timeout) + " ms)");
        }
      }
      return List.of();
    } finally {
      release();
    }
  }

  /** {@inheritDoc} Thread-safe. */
  @Override
  public void wakeup() {
    synchronized (wakeLock) {
      wakeupPending = true;
      wakeSignal.complete(null);
    }
    completions.add(Signal.WAKEUP);
  }

  /** {@inheritDoc} Blocks up to {@code default.api.timeout.ms}. */
  @Override
  public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
    acquire();
    try {
      checkOpen();
      return listOffsets(partitions, ListOffsetsRequest.EARLIEST_TIMESTAMP, settings.defaultApiTimeoutMs());
    } finally {
      release();
    }
  }

  /** {@inheritDoc} */
  @Override
  public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions, Duration timeout) {
    acquire();
    try {
      checkOpen();
      return listOffsets(partitions, ListOffsetsRequest.EARLIEST_TIMESTAMP, toMillisSaturated(timeout));
    } finally {
      release();
    }
  }

  /** {@inheritDoc} */
  @Override
  public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
    acquire();
    try {
      checkOpen();
      return listOffsets(partitions, ListOffsetsRequest.LATEST_TIMESTAMP, toMillisSaturated(timeout));
    } finally {
      release();
    }
  }

  /** {@inheritDoc} Blocks up to {@code default.api.timeout.ms}. */
  @Override
  public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
    acquire();
    try {
      checkOpen();
      return listOffsets(partitions, ListOffsetsRequest.LATEST_TIMESTAMP, settings.defaultApiTimeoutMs());
    } finally {
      release();
    }
  }

  /**
   * {@inheritDoc} Blocks up to {@code default.api.timeout.ms}.
   *
   * @throws TributaryException INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT
   */
  @Override
  public int partitionsFor(String topic) {
    acquire();
    try {
      checkOpen();
      return metadata.partitionCount(topic, settings.defaultApiTimeoutMs());
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Commits

  @Override
  public void commitSync() {
    acquire();
    try {
      commitSync(Duration.ofMillis(settings.defaultApiTimeoutMs()));
    } finally {
      release();
    }
  }

  @Override
  public void commitSync(Duration timeout) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      Objects.requireNonNull(timeout, "timeout");
      maybeThrowWakeup();
      commitSyncInternal(allConsumed(), toMillisSaturated(timeout), true);
    } finally {
      release();
    }
  }

  @Override
  public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
    acquire();
    try {
      commitSync(offsets, Duration.ofMillis(settings.defaultApiTimeoutMs()));
    } finally {
      release();
    }
  }

  @Override
  public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      Map<TopicPartition, OffsetAndMetadata> copy = copyOffsets(offsets);
      Objects.requireNonNull(timeout, "timeout");
      maybeThrowWakeup();
      commitSyncInternal(copy, toMillisSaturated(timeout), true);
    } finally {
      release();
    }
  }

  @Override
  public void commitAsync() {
    acquire();
    try {
      commitAsync(null);
    } finally {
      release();
    }
  }

  @Override
  public void commitAsync(OffsetCommitCallback callback) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      commitAsyncInternal(allConsumed(), callback);
    } finally {
      release();
    }
  }

  @Override
  public void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      commitAsyncInternal(copyOffsets(offsets), callback);
    } finally {
      release();
    }
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
    acquire();
    try {
      return committed(partitions, Duration.ofMillis(settings.defaultApiTimeoutMs()));
    } finally {
      release();
    }
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Duration timeout) {
    acquire();
    try {
      checkOpen();
      requireGroupId();
      if (partitions == null) {
        throw new IllegalArgumentException("Topic partition set cannot be null");
      }
      Objects.requireNonNull(timeout, "timeout");
      maybeThrowWakeup();
      return fetchCommitted(List.copyOf(partitions), toMillisSaturated(timeout));
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Closing

  @Override
  public void close() {
    acquire();
    try {
      close(DEFAULT_CLOSE_TIMEOUT);
    } finally {
      release();
    }
  }

  @Override
  public void close(Duration timeout) {
    acquire();
    try {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("timeout must not be negative");
      }
      if (closed) {
        return;
      }
      long deadline = TributaryClient.saturatedAdd(Metadata.nowMs(), toMillisSaturated(timeout));
      closeDeadline = deadline;
      RuntimeException failure = null;
      try {
        if (mode == Mode.SUBSCRIBED) {
          failure = leaveGroup(deadline);
        } else if (mode == Mode.MANUAL && autoCommit()) {
          commitQuietly(movedPositions(assigned.keySet()), deadline, "on close");
        }
        awaitAsyncCommits(deadline, false);
        try {
          runCompletedCommitCallbacks();
        } catch (RuntimeException e) {
          failure = failure == null ? e : failure;
        }
      } finally {
        closed = true;
        if (member != null) {
          member.tell(new GroupMember.Leave(false, new CompletableFuture<>()));
          member = null;
        }
        mode = Mode.NONE;
        assigned.clear();
        completions.clear();
        completedCommits.clear();
        client.unregister(this);
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      release();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Requests

  /**
   * Sends the OffsetFetch, ListOffsets and Fetch requests that are due.
   *
   * @return the earliest time (monotonic ms) a backed-off partition may be asked again, or {@link Long#MAX_VALUE}
   * @throws NoOffsetForPartitionException for partitions without a position when that is auto.offset.reset=none
   */
  private long sendRequests(long pollDeadline) {
    long now = Metadata.nowMs();
    long nextRetry = Long.MAX_VALUE;
    List<PartitionState> needCommitted = new ArrayList<>();
    Set<TopicPartition> noOffset = new LinkedHashSet<>();
    for (PartitionState state : assigned.values()) {
      if (state.revoking) {
        continue;
      }
      if (now < state.retryAtMs) {
        nextRetry = Math.min(nextRetry, state.retryAtMs);
        continue;
      }
      if (state.position < 0) {
        if (state.needsCommitted) {
          if (!state.committedInFlight) {
            needCommitted.add(state);
          }
        } else if (!state.listOffsetsInFlight) {
          String strategy = state.pendingReset != null ? state.pendingReset : settings.autoOffsetReset();
          if (NONE.equals(strategy)) {
            noOffset.add(state.tp);
          } else {
            sendListOffsets(state, timestampOf(strategy));
          }
        }
      } else if (!state.fetchInFlight && state.bufferedResponseEnds.size() <= 1 && !state.paused
          && isSubscribedTopic(state.tp)) {
        // an empty buffer, or the records of one response: fetch the next ones while these are consumed
        int maxWaitMs = (int) Math.max(0, Math.min(settings.fetchMaxWaitMs(), pollDeadline - now));
        sendFetch(state, maxWaitMs);
      }
    }
    if (!needCommitted.isEmpty()) {
      sendOffsetFetch(needCommitted);
    }
    if (!noOffset.isEmpty()) {
      throw new NoOffsetForPartitionException(noOffset);
    }
    return nextRetry;
  }

  private void sendFetch(PartitionState state, int maxWaitMs) {
    TopicPartition tp = state.tp;
    long epoch = state.epoch;
    long offset = fetchPosition(state);
    state.fetchInFlight = true;
    CompletionStage<FetchResponse> answer =
        client.ask(
            replyTo ->
                new FetchRequest(
                    ProtocolVersions.CURRENT,
                    tp.topic(),
                    tp.partition(),
                    offset,
                    settings.maxPartitionFetchBytes(),
                    maxWaitMs,
                    replyTo),
            TributaryClient.saturatedAdd(settings.requestTimeoutMs(), maxWaitMs));
    answer.whenComplete(
        (response, failure) -> completions.add(new FetchDone(tp, epoch, offset, response, failure)));
  }

  private void sendListOffsets(PartitionState state, long timestamp) {
    TopicPartition tp = state.tp;
    long epoch = state.epoch;
    state.listOffsetsInFlight = true;
    CompletionStage<ListOffsetsResponse> answer =
        client.ask(
            replyTo ->
                new ListOffsetsRequest(ProtocolVersions.CURRENT, tp.topic(), tp.partition(), timestamp, replyTo),
            settings.requestTimeoutMs());
    answer.whenComplete((response, failure) -> completions.add(new OffsetsDone(tp, epoch, response, failure)));
  }

  private void sendOffsetFetch(List<PartitionState> states) {
    Map<TopicPartition, Long> epochs = new LinkedHashMap<>();
    List<PartitionRef> refs = new ArrayList<>();
    for (PartitionState state : states) {
      state.committedInFlight = true;
      epochs.put(state.tp, state.epoch);
      refs.add(new PartitionRef(state.tp.topic(), state.tp.partition()));
    }
    String groupId = settings.groupId();
    CompletionStage<OffsetFetchResponse> answer =
        client.ask(
            replyTo -> new OffsetFetch(ProtocolVersions.CURRENT, groupId, List.copyOf(refs), replyTo),
            settings.requestTimeoutMs());
    answer.whenComplete((response, failure) -> completions.add(new CommittedDone(epochs, response, failure)));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Answers and events

  private void handle(Completion completion) {
    if (completion instanceof FetchDone fetch) {
      handleFetch(fetch);
    } else if (completion instanceof OffsetsDone offsets) {
      handleOffsets(offsets);
    } else if (completion instanceof CommittedDone committed) {
      handleCommitted(committed);
    } else if (completion instanceof FromGroup fromGroup) {
      handleGroupEvent(fromGroup);
    } else if (completion == Signal.WAKEUP) {
      maybeThrowWakeup();
    } else if (completion == Signal.COMMITS_COMPLETED) {
      runCompletedCommitCallbacks();
    }
  }

  private void handleOffsets(OffsetsDone done) {
    PartitionState state = assigned.get(done.tp());
    if (state == null || state.epoch != done.epoch()) {
      return;
    }
    state.listOffsetsInFlight = false;
    if (state.position >= 0) {
      return;
    }
    ErrorCode error;
    String message;
    if (done.failure() != null) {
      TributaryException e =
          TributaryClient.toException(done.failure(), "list offsets of " + done.tp(), settings.requestTimeoutMs());
      error = e.errorCode();
      message = e.getMessage();
    } else {
      error = done.response().error();
      message = done.response().errorMessage();
    }
    if (error == ErrorCode.NONE) {
      state.answeredThisPoll = true;
      state.position = done.response().offset();
      state.pendingReset = null;
      return;
    }
    onRetriableOrThrow(state, error, message);
  }

  private void handleCommitted(CommittedDone done) {
    ErrorCode error;
    String message;
    if (done.failure() != null) {
      TributaryException e =
          TributaryClient.toException(
              done.failure(), "fetch committed offsets of group " + settings.groupId(), settings.requestTimeoutMs());
      error = e.errorCode();
      message = e.getMessage();
    } else {
      error = done.response().error();
      message = done.response().errorMessage();
    }
    Map<TopicPartition, Long> offsets = new HashMap<>();
    if (error == ErrorCode.NONE && done.response().offsets() != null) {
      for (PartitionOffset po : done.response().offsets()) {
        offsets.put(new TopicPartition(po.topic(), po.partition()), po.offset());
      }
    }
    boolean current = false;
    for (Map.Entry<TopicPartition, Long> entry : done.epochs().entrySet()) {
      PartitionState state = assigned.get(entry.getKey());
      if (state == null || state.epoch != entry.getValue()) {
        continue;
      }
      state.committedInFlight = false;
      if (state.position >= 0 || !state.needsCommitted) {
        continue;
      }
      current = true;
      if (error != ErrorCode.NONE) {
        if (error.retriable()) {
          state.retryAtMs = Metadata.nowMs() + settings.retryBackoffMs();
        }
        continue;
      }
      state.needsCommitted = false;
      long offset = offsets.getOrDefault(state.tp, -1L);
      if (offset >= 0) {
        state.position = offset;
        state.committed = offset;
        state.answeredThisPoll = true;
      }
    }
    if (current && error != ErrorCode.NONE && !error.retriable()) {
      throw new TributaryException(
          error, message != null ? message : error.defaultMessage() + " (group " + settings.groupId() + ")");
    }
  }

  private void handleFetch(FetchDone done) {
    PartitionState state = assigned.get(done.tp());
    if (state == null || state.epoch != done.epoch()) {
      return;
    }
    state.fetchInFlight = false;
    if (done.fetchOffset() != fetchPosition(state)) {
      return;
    }
    if (state.buffer.hasQueued()
        && (done.failure() != null || done.response().error() != ErrorCode.NONE)) {
      // a failed fetch ahead: the buffered records come first; fetched again (and its error handled) after them
      state.retryAtMs = Metadata.nowMs() + settings.retryBackoffMs();
      return;
    }
    ErrorCode error;
    String message;
    if (done.failure() != null) {
      TributaryException e =
          TributaryClient.toException(done.failure(), "fetch from " + done.tp(), settings.requestTimeoutMs());
      error = e.errorCode();
      message = e.getMessage();
    } else {
      error = done.response().error();
      message = done.response().errorMessage();
    }
    if (error == ErrorCode.NONE) {
      state.answeredThisPoll = true;
      FetchResponse response = done.response();
      state.highWatermark = response.highWatermark();
      buffer(state, response);
      return;
    }
    if (error == ErrorCode.OFFSET_OUT_OF_RANGE) {
      long offset = state.position;
      reset(state);
      state.position = -1;
      if (NONE.equals(settings.autoOffsetReset())) {
        FetchResponse r = done.response();
        throw new TributaryException(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            "Fetch position " + offset + " is out of range for partition " + state.tp
                + (r != null ? " (log start offset " + r.logStartOffset() + ", high watermark " + r.highWatermark()
                    + ")" : "")
                + " and auto.offset.reset=none");
      }
      return;
    }
    onRetriableOrThrow(state, error, message);
  }

  private void onRetriableOrThrow(PartitionState state, ErrorCode error, String message) {
    if (error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
      state.unknownThisPoll = true;
    }
    if (error.retriable()) {
      state.retryAtMs = Metadata.nowMs() + settings.retryBackoffMs();
      return;
    }
    throw new TributaryException(error, message != null ? message : error.defaultMessage() + " (" + state.tp + ")");
  }

  private void handleGroupEvent(FromGroup fromGroup) {
    if (mode != Mode.SUBSCRIBED || fromGroup.incarnation() != memberIncarnation) {
      return; // from a member of an earlier subscription
    }
    GroupMember.Event event = fromGroup.event();
    if (event instanceof GroupMember.Assigned assignedEvent) {
      applyAssignment(assignedEvent.push());
    } else if (event instanceof GroupMember.Lost lost) {
      applyLoss(lost);
    } else if (event instanceof GroupMember.JoinFailed failed) {
      rejoinOnNextPoll = true;
      throw new TributaryException(
          failed.error(), "joining group " + settings.groupId() + " failed: " + failed.message());
    }
  }

  /**
   * Applies a pushed assignment: revoked = owned − assigned stop fetching (buffered and in-flight data dropped), their
   * moved positions are committed with the push's generation ({@code enable.auto.commit}), {@code onPartitionsRevoked}
   * runs, they leave the assignment; added = assigned − owned join it (start: committed offset, else {@code
   * auto.offset.reset}) and {@code onPartitionsAssigned} runs; then the acknowledgement goes out. Partitions that stay
   * keep their position, buffer and pause state. A push older than the current generation is ignored. A listener
   * exception is rethrown after the acknowledgement.
   *
   * <p>Listener calls follow Kafka's per protocol. Cooperative: revoked only when something is revoked, assigned at
   * every push. Eager (range, roundrobin), where the coordinator runs a rebalance as a revoke-everything push followed
   * by the assignment push: revoked once per rebalance (with everything owned, or empty when the revocation round was
   * skipped), assigned once at its end.
   */
  private void applyAssignment(AssignmentChanged push) {
    if (push.generation() < generation) {
      return;
    }
    memberId = push.memberId();
    generation = push.generation();
    boolean eager = !COOPERATIVE.equals(push.assignor());
    Set<TopicPartition> target = new LinkedHashSet<>();
    for (PartitionRef ref : push.assigned()) {
      target.add(new TopicPartition(ref.topic(), ref.partition()));
    }
    List<TopicPartition> revoked = new ArrayList<>();
    for (TopicPartition tp : assigned.keySet()) {
      if (!target.contains(tp)) {
        revoked.add(tp);
      }
    }
    List<TopicPartition> added = new ArrayList<>();
    for (TopicPartition tp : target) {
      if (!assigned.containsKey(tp)) {
        added.add(tp);
      }
    }
    // an eager rebalance is two pushes, revoke-all then assign: Kafka's listener sees revoked(all), assigned(new)
    boolean eagerRevocationRound = eager && !revoked.isEmpty() && added.isEmpty();
    boolean callRevoked = !revoked.isEmpty() || (eager && !afterEagerRevocationRound);
    afterEagerRevocationRound = eagerRevocationRound;
    RuntimeException failure = null;
    if (!revoked.isEmpty()) {
      for (TopicPartition tp : revoked) {
        stopForRevocation(assigned.get(tp));
      }
      if (autoCommit()) {
        commitQuietly(
            movedPositions(revoked),
            TributaryClient.saturatedAdd(Metadata.nowMs(), settings.defaultApiTimeoutMs()),
            "before revoking " + revoked);
      }
    }
    if (callRevoked) {
      List<TopicPartition> view = Collections.unmodifiableList(revoked);
      failure = invokeListener(() -> listener.onPartitionsRevoked(view));
    }
    for (TopicPartition tp : revoked) {
      assigned.remove(tp);
    }
    for (TopicPartition tp : added) {
      addPartition(tp);
    }
    if (!eagerRevocationRound) {
      List<TopicPartition> addedView = Collections.unmodifiableList(added);
      RuntimeException assignFailure = invokeListener(() -> listener.onPartitionsAssigned(addedView));
      failure = failure == null ? assignFailure : failure;
    }
    member.tell(new GroupMember.Acked(memberId, generation, ownedRefs()));
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * The member is out of the group: every partition is dropped at once (others may own them already), {@code
   * onPartitionsLost} runs, and the member rejoins as a new member — except after a fencing, which is thrown and
   * rejoined on the next poll.
   */
  private void applyLoss(GroupMember.Lost lost) {
    List<TopicPartition> dropped = new ArrayList<>(assigned.keySet());
    assigned.clear();
    memberId = "";
    generation = -1;
    afterEagerRevocationRound = false;
    RuntimeException failure = null;
    if (!dropped.isEmpty()) {
      List<TopicPartition> view = Collections.unmodifiableList(dropped);
      failure = invokeListener(() -> listener.onPartitionsLost(view));
    }
    if (lost.error() == ErrorCode.FENCED_INSTANCE_ID) {
      rejoinOnNextPoll = true;
      TributaryException fenced =
          new TributaryException(
              ErrorCode.FENCED_INSTANCE_ID,
              "this consumer (" + ClientConfig.GROUP_INSTANCE_ID + "=" + settings.groupInstanceId()
                  + ") was fenced: " + lost.reason());
      if (failure != null) {
        fenced.addSuppressed(failure);
      }
      throw fenced;
    }
    member.tell(new GroupMember.Rejoin(List.of()));
    if (failure != null) {
      throw failure;
    }
  }

  private static RuntimeException invokeListener(Runnable call) {
    try {
      call.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /**
   * Leaves the group (close, unsubscribe): commits moved positions ({@code enable.auto.commit}), calls {@code
   * onPartitionsRevoked} with every owned partition, sends LeaveGroup (not for a static member) and stops the member
   * actor, all bounded by {@code deadline}. Afterwards the consumer is neither subscribed nor assigned.
   *
   * @return what the listener threw, or null
   */
  private RuntimeException leaveGroup(long deadline) {
    List<TopicPartition> owned = new ArrayList<>(assigned.keySet());
    for (PartitionState state : assigned.values()) {
      stopForRevocation(state);
    }
    RuntimeException failure = null;
    if (!owned.isEmpty()) {
      if (generation >= 0) {
        if (autoCommit()) {
          commitQuietly(movedPositions(owned), deadline, "before leaving the group");
        }
        List<TopicPartition> view = Collections.unmodifiableList(owned);
        failure = invokeListener(() -> listener.onPartitionsRevoked(view));
      } else {
        List<TopicPartition> view = Collections.unmodifiableList(owned);
        failure = invokeListener(() -> listener.onPartitionsLost(view));
      }
    }
    assigned.clear();
    if (member != null) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      member.tell(new GroupMember.Leave(settings.groupInstanceId() == null, done));
      try {
        // no answer can come once the client is unusable (its ActorSystem stops): the member actor is gone
        long wait = client.unusableReason() != null ? 0 : Math.max(0, deadline - Metadata.nowMs());
        done.get(wait, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // bounded: the member actor stops by itself once its LeaveGroup is answered
      }
      member = null;
    }
    memberIncarnation++;
    memberId = "";
    generation = -1;
    afterEagerRevocationRound = false;
    mode = Mode.NONE;
    subscribedTopics = List.of();
    subscribedPattern = null;
    listener = NO_OP_LISTENER;
    rejoinOnNextPoll = false;
    return failure;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Commit internals

  private boolean autoCommit() {
    return settings.enableAutoCommit() && settings.hasGroupId();
  }

  /** Commits moved positions asynchronously if {@code auto.commit.interval.ms} passed since the last time. */
  private void maybeAutoCommitAsync() {
    if (!autoCommit()) {
      return;
    }
    long now = Metadata.nowMs();
    if (now < nextAutoCommitMs) {
      return;
    }
    nextAutoCommitMs = TributaryClient.saturatedAdd(now, settings.autoCommitIntervalMs());
    if (mode == Mode.SUBSCRIBED && generation < 0) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> moved = movedPositions(assigned.keySet());
    if (!moved.isEmpty()) {
      commitAsyncInternal(
          moved,
          (offsets, exception) -> {
            if (exception != null) {
              log.warn("Auto-commit of offsets {} for group {} failed: {}", offsets, settings.groupId(),
                  exception.toString());
            }
          });
    }
  }

  /** Positions of the given partitions that are known and differ from the last known committed offset. */
  private Map<TopicPartition, OffsetAndMetadata> movedPositions(Collection<TopicPartition> partitions) {
    Map<TopicPartition, OffsetAndMetadata> out = new LinkedHashMap<>();
    for (TopicPartition tp : partitions) {
      PartitionState state = assigned.get(tp);
      if (state != null && state.position >= 0 && state.position != state.committed) {
        out.put(tp, new OffsetAndMetadata(state.position));
      }
    }
    return out;
  }

  /** Positions of every assigned partition with a known position. */
  private Map<TopicPartition, OffsetAndMetadata> allConsumed() {
    Map<TopicPartition, OffsetAndMetadata> out = new LinkedHashMap<>();
    for (PartitionState state : assigned.values()) {
      if (state.position >= 0) {
        out.put(state.tp, new OffsetAndMetadata(state.position));
      }
    }
    return out;
  }

  private static Map<TopicPartition, OffsetAndMetadata> copyOffsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
    if (offsets == null) {
      throw new IllegalArgumentException("Offsets to commit cannot be null");
    }
    Map<TopicPartition, OffsetAndMetadata> copy = new LinkedHashMap<>();
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        throw new IllegalArgumentException("Offsets to commit cannot hold null partitions or offsets: " + offsets);
      }
      copy.put(e.getKey(), e.getValue());
    }
    return copy;
  }

  private CompletionStage<GroupResponse> sendCommit(
      Map<TopicPartition, OffsetAndMetadata> offsets, String commitMemberId, int commitGeneration, long timeoutMs) {
    List<PartitionOffset> list = new ArrayList<>();
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      list.add(
          new PartitionOffset(
              e.getKey().topic(), e.getKey().partition(), e.getValue().offset(), e.getValue().metadata()));
    }
    String groupId = settings.groupId();
    List<PartitionOffset> body = List.copyOf(list);
    return client.ask(
        replyTo ->
            new OffsetCommit(ProtocolVersions.CURRENT, groupId, commitMemberId, commitGeneration, body, replyTo),
        timeoutMs);
  }

  /**
   * Commits and waits, retrying retriable errors until {@code timeoutMs}; prior async commits are awaited and their
   * callbacks run first.
   *
   * @throws TributaryException as {@link Consumer#commitSync(Map, Duration)}
   * @throws WakeupException if {@code wakeable} and {@link #wakeup()} was called
   */
  private void commitSyncInternal(Map<TopicPartition, OffsetAndMetadata> offsets, long timeoutMs, boolean wakeable) {
    long deadline = Math.min(closeDeadline, TributaryClient.saturatedAdd(Metadata.nowMs(), timeoutMs));
    awaitAsyncCommits(deadline, wakeable);
    runCompletedCommitCallbacks();
    if (offsets.isEmpty()) {
      return;
    }
    if (mode == Mode.SUBSCRIBED && generation < 0) {
      throw new TributaryException(
          ErrorCode.REBALANCE_IN_PROGRESS,
          "the consumer has no assignment from group " + settings.groupId() + " yet: nothing can be committed");
    }
    String commitMemberId = mode == Mode.SUBSCRIBED ? memberId : "";
    int commitGeneration = mode == Mode.SUBSCRIBED ? generation : -1;
    try {
      callWithRetries(
          "commit offsets of group " + settings.groupId(),
          Math.max(0, deadline - Metadata.nowMs()),
          wakeable,
          attemptTimeout -> sendCommit(offsets, commitMemberId, commitGeneration, attemptTimeout),
          response -> response.error() == ErrorCode.NONE
              ? null
              : commitError(response.error(), response.errorMessage(), offsets));
    } catch (TributaryException e) {
      onCommitRejected(commitMemberId, e.errorCode());
      throw e;
    }
    markCommitted(offsets);
  }

  /** Commits synchronously, logging instead of throwing (auto-commit on revocation, leave, close). */
  private void commitQuietly(Map<TopicPartition, OffsetAndMetadata> offsets, long deadline, String when) {
    if (offsets.isEmpty()) {
      return;
    }
    try {
      commitSyncInternal(offsets, Math.max(0, deadline - Metadata.nowMs()), false);
    } catch (TributaryException e) {
      log.warn("Auto-commit of offsets {} for group {} {} failed: {}", offsets, settings.groupId(), when,
          e.getMessage());
    }
  }

  private void commitAsyncInternal(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
    runCompletedCommitCallbacks();
    String commitMemberId = mode == Mode.SUBSCRIBED ? memberId : "";
    int commitGeneration = mode == Mode.SUBSCRIBED ? generation : -1;
    if (offsets.isEmpty()) {
      completedCommits.add(
          new CommitOutcome(offsets, callback, commitMemberId, new GroupResponse(ErrorCode.NONE, null, -1), null));
      completions.add(Signal.COMMITS_COMPLETED);
      return;
    }
    if (mode == Mode.SUBSCRIBED && generation < 0) {
      completedCommits.add(
          new CommitOutcome(
              offsets,
              callback,
              commitMemberId,
              new GroupResponse(
                  ErrorCode.REBALANCE_IN_PROGRESS,
                  "the consumer has no assignment from group " + settings.groupId() + " yet",
                  -1),
              null));
      completions.add(Signal.COMMITS_COMPLETED);
      return;
    }
    CompletableFuture<Void> queued =
        sendCommit(offsets, commitMemberId, commitGeneration, settings.requestTimeoutMs())
            .toCompletableFuture()
            .handle(
                (response, failure) -> {
                  completedCommits.add(new CommitOutcome(offsets, callback, commitMemberId, response, failure));
                  completions.add(Signal.COMMITS_COMPLETED);
                  return null;
                });
    asyncCommitsInFlight.add(queued);
  }

  /** Runs the callbacks of completed async commits, in completion order (application thread). */
  private void runCompletedCommitCallbacks() {
    asyncCommitsInFlight.removeIf(CompletableFuture::isDone);
    CommitOutcome outcome;
    while ((outcome = completedCommits.poll()) != null) {
      TributaryException error = null;
      if (outcome.failure() != null) {
        error =
            TributaryClient.toException(
                outcome.failure(), "commit offsets of group " + settings.groupId(), settings.requestTimeoutMs());
      } else if (outcome.response().error() != ErrorCode.NONE) {
        error = commitError(outcome.response().error(), outcome.response().errorMessage(), outcome.offsets());
      }
      if (error == null) {
        markCommitted(outcome.offsets());
      } else {
        onCommitRejected(outcome.memberId(), error.errorCode());
      }
      if (outcome.callback() != null) {
        outcome.callback().onComplete(Collections.unmodifiableMap(outcome.offsets()), error);
      }
    }
  }

  /** Waits (until {@code deadline}) for the pending async commits to complete; their callbacks run afterwards. */
  private void awaitAsyncCommits(long deadline, boolean wakeable) {
    for (CompletableFuture<Void> pending : List.copyOf(asyncCommitsInFlight)) {
      long left = deadline - Metadata.nowMs();
      if (left <= 0) {
        return;
      }
      if (wakeable) {
        awaitOrWakeup(pending, left);
        maybeThrowWakeup();
      } else {
        try {
          pending.get(left, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (ExecutionException | TimeoutException e) {
          return;
        }
      }
    }
  }

  private void markCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
      PartitionState state = assigned.get(e.getKey());
      if (state != null) {
        state.committed = e.getValue().offset();
      }
    }
  }

  /** A commit was rejected: the member actor rejoins, or leaves the group for an unknown member. */
  private void onCommitRejected(String commitMemberId, ErrorCode error) {
    if (mode != Mode.SUBSCRIBED || member == null || commitMemberId.isEmpty()) {
      return;
    }
    switch (error) {
      case ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID ->
          member.tell(new GroupMember.CommitRejected(commitMemberId, error));
      default -> {}
    }
  }

  /**
   * The exception of a refused commit of {@code offsets}, with advice that fits why: an assign() consumer is not a
   * member of its group; a member committed partitions it is not assigned; or the group rebalanced (application
   * thread).
   */
  private TributaryException commitError(ErrorCode error, String serverMessage,
      Map<TopicPartition, OffsetAndMetadata> offsets) {
    String detail = serverMessage != null ? serverMessage : error.defaultMessage();
    boolean refusedMember = error == ErrorCode.ILLEGAL_GENERATION || error == ErrorCode.UNKNOWN_MEMBER_ID;
    if (refusedMember && mode != Mode.SUBSCRIBED) {
      return new TributaryException(error, "Commit refused by group " + settings.groupId() + " (" + detail
          + "): this consumer uses assign() and is not a member of the group; as in Kafka, while a group has members"
          + " only they can commit its offsets. Use a group.id of its own for this consumer");
    }
    List<TopicPartition> notAssigned = offsets.keySet().stream().filter(tp -> !assigned.containsKey(tp)).toList();
    if (refusedMember && !notAssigned.isEmpty()) {
      return new TributaryException(error, "Commit refused by group " + settings.groupId() + " (" + detail
          + "): " + notAssigned + " is not among this consumer's assigned partitions (it never was, or a rebalance"
          + " moved it away); a member commits only the partitions it is assigned");
    }
    return switch (error) {
      case ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS -> new TributaryException(
          error,
          "Commit cannot be completed since the group " + settings.groupId() + " has rebalanced and may have "
              + "assigned the partitions to another member (" + detail + "). The consumer rejoins; if this happens "
              + "often, poll() was called too rarely: lower max.poll.records or raise max.poll.interval.ms");
      default -> new TributaryException(error, detail + " (committing offsets of group " + settings.groupId() + ")");
    };
  }

  /**
   * The group's committed offsets of {@code partitions}, retrying retriable errors until {@code timeoutMs}.
   *
   * @return every partition asked, null when nothing is committed
   */
  private Map<TopicPartition, OffsetAndMetadata> fetchCommitted(List<TopicPartition> partitions, long timeoutMs) {
    Map<TopicPartition, OffsetAndMetadata> result = new HashMap<>();
    if (partitions.isEmpty()) {
      return result;
    }
    List<PartitionRef> refs = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      Objects.requireNonNull(tp, "partition");
      refs.add(new PartitionRef(tp.topic(), tp.partition()));
      result.put(tp, null);
    }
    String groupId = settings.groupId();
    List<PartitionRef> body = List.copyOf(refs);
    OffsetFetchResponse response =
        callWithRetries(
            "fetch committed offsets of group " + groupId,
            timeoutMs,
            true,
            attemptTimeout ->
                client.ask(
                    replyTo -> new OffsetFetch(ProtocolVersions.CURRENT, groupId, body, replyTo), attemptTimeout),
            r -> r.error() == ErrorCode.NONE
                ? null
                : new TributaryException(
                    r.error(),
                    (r.errorMessage() != null ? r.errorMessage() : r.error().defaultMessage()) + " (group " + groupId
                        + ")"));
    if (response.offsets() != null) {
      for (PartitionOffset po : response.offsets()) {
        TopicPartition tp = new TopicPartition(po.topic(), po.partition());
        if (result.containsKey(tp) && po.offset() >= 0) {
          result.put(tp, new OffsetAndMetadata(po.offset(), po.metadata()));
        }
      }
    }
    return result;
  }

  /**
   * Sends a request until it succeeds, fails with a non-retriable error, or {@code timeoutMs} passed (pausing {@code
   * retry.backoff.ms} between attempts). While {@link #close(Duration)} runs, its deadline bounds {@code timeoutMs};
   * once the client cannot be used any more ({@link TributaryClient#unusableReason}) the first error is final.
   *
   * @param send sends one attempt with the given answer timeout (ms)
   * @param check null for a good answer, else its error
   * @throws TributaryException the non-retriable error, or the last retriable one when the time is up
   * @throws WakeupException if {@code wakeable} and {@link #wakeup()} was called
   */
  private <R> R callWithRetries(
      String what,
      long timeoutMs,
      boolean wakeable,
      LongFunction<CompletionStage<R>> send,
      Function<R, TributaryException> check) {
    long deadline = Math.min(closeDeadline, TributaryClient.saturatedAdd(Metadata.nowMs(), timeoutMs));
    while (true) {
      long attemptTimeout = Math.max(1, Math.min(settings.requestTimeoutMs(), deadline - Metadata.nowMs()));
      TributaryException error;
      try {
        R response = await(send.apply(attemptTimeout), what, attemptTimeout, wakeable);
        error = check.apply(response);
        if (error == null) {
          return response;
        }
      } catch (TributaryException e) {
        error = e;
      }
      long left = deadline - Metadata.nowMs();
      if (!error.isRetriable() || left <= 0 || client.unusableReason() != null) {
        throw error;
      }
      long pause = Math.min(settings.retryBackoffMs(), left);
      if (wakeable) {
        awaitOrWakeup(new CompletableFuture<>(), pause);
        maybeThrowWakeup();
      } else {
        Metadata.sleep(pause);
      }
    }
  }

  /** Waits for {@code stage}; with {@code wakeable}, a {@link #wakeup()} ends the wait first. */
  private <R> R await(CompletionStage<R> stage, String what, long timeoutMs, boolean wakeable) {
    CompletableFuture<R> future = stage.toCompletableFuture();
    if (wakeable) {
      awaitOrWakeup(future, TributaryClient.saturatedAdd(timeoutMs, 1_000));
      if (!future.isDone()) {
        maybeThrowWakeup();
      }
    }
    return TributaryClient.await(future, what, timeoutMs);
  }

  /** Waits until {@code future} completes, a wakeup is pending, or {@code timeoutMs} passed. */
  private void awaitOrWakeup(CompletableFuture<?> future, long timeoutMs) {
    CompletableFuture<Void> signal;
    synchronized (wakeLock) {
      signal = wakeSignal;
    }
    try {
      CompletableFuture.anyOf(future, signal).get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      // the caller looks at the future
    }
  }

  /** Throws (once) the pending wakeup. */
  private void maybeThrowWakeup() {
    synchronized (wakeLock) {
      if (!wakeupPending) {
        return;
      }
      wakeupPending = false;
      wakeSignal = new CompletableFuture<>();
    }
    throw new WakeupException();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Records

  /** Decodes the batches of a fetch into the partition's buffer: records from the position, below the HW. */
  /** Where the next fetch of {@code state} starts: its position, or after its buffered records. */
  private static long fetchPosition(PartitionState state) {
    return state.buffer.hasQueued() ? state.bufferEnd : state.position;
  }

  private void buffer(PartitionState state, FetchResponse response) {
    long end = appendRecords(state, response, fetchPosition(state));
    if (end > fetchPosition(state)) {
      state.bufferEnd = end;
      state.bufferedResponseEnds.addLast(end);
    }
  }

  /**
   * Queues the batches of a fetch that hold offsets from {@code from} and below the high watermark, after checking
   * each one's CRC (the records are decoded as {@link #collect} takes them).
   *
   * @return the offset after the range queued: the last queued batch's next offset, or the high watermark if lower;
   *     {@code from} if nothing was queued
   * @throws TributaryException ({@link ErrorCode#CORRUPT_MESSAGE}) if a batch is damaged; nothing of this response
   *     is queued then
   */
  private long appendRecords(PartitionState state, FetchResponse response, long from) {
    long next = from;
    long hw = response.highWatermark();
    long until = hw >= 0 ? hw : Long.MAX_VALUE;
    List<RecordBatch> accepted = new ArrayList<>();
    for (byte[] bytes : response.batches()) {
      RecordBatch batch;
      try {
        batch = RecordBatch.wrap(bytes);
        if (!batch.isValid()) {
          throw new CorruptRecordException("record batch CRC32C mismatch");
        }
      } catch (CorruptRecordException e) {
        throw new TributaryException(
            ErrorCode.CORRUPT_MESSAGE, "corrupt record batch fetched from " + state.tp + " at " + next + ": " + e, e);
      }
      if (batch.baseOffset() >= until) {
        break;
      }
      if (batch.nextOffset() <= next || batch.isControlBatch()) {
        continue;
      }
      accepted.add(batch);
      next = Math.min(batch.nextOffset(), until);
    }
    long start = from;
    for (RecordBatch batch : accepted) {
      state.buffer.add(batch, start, until);
      start = batch.nextOffset();
    }
    return next;
  }

  /**
   * Takes up to max.poll.records buffered records of partitions that are not paused (nor of a topic no longer
   * subscribed), starting with the partition after the last one served.
   */
  private List<ConsumerRecord<K, V>> collect() {
    int max = settings.maxPollRecords();
    List<ConsumerRecord<K, V>> out = new ArrayList<>();
    List<PartitionState> states = new ArrayList<>(assigned.values());
    int n = states.size();
    for (int i = 0; i < n && out.size() < max; i++) {
      int index = (rotation + i) % n;
      PartitionState state = states.get(index);
      if (state.paused || state.revoking || !isSubscribedTopic(state.tp)) {
        continue;
      }
      FetchedRecords buffer = state.buffer;
      String topic = state.tp.topic();
      String source = state.tp.toString();
      while (out.size() < max) {
        Record record;
        try {
          record = buffer.peek(source);
        } catch (TributaryException e) {
          if (!out.isEmpty()) {
            rotation = index;
            return out; // the records before the batch that does not decode first; the error on the next poll
          }
          throw e;
        }
        if (record == null) {
          break;
        }
        K key;
        V value;
        try {
          key = keyDeserializer.deserialize(topic, record.key());
          value = valueDeserializer.deserialize(topic, record.value());
        } catch (RuntimeException e) {
          if (!out.isEmpty()) {
            rotation = index;
            return out;
          }
          throw e;
        }
        buffer.poll();
        state.position = record.offset() + 1;
        dropReturnedResponses(state);
        out.add(
            new ConsumerRecord<>(
                topic, state.tp.partition(), record.offset(), record.timestamp(), key, value, record.headers()));
      }
      if (!buffer.hasQueued() && state.bufferEnd >= 0) {
        if (state.bufferEnd > state.position) {
          // every fetched record was returned: the rest of the fetched range holds none (a compacted gap)
          state.position = state.bufferEnd;
          dropReturnedResponses(state);
        }
        state.bufferEnd = -1;
      }
      if (!out.isEmpty()) {
        rotation = buffer.hasQueued() ? index : index + 1;
      }
    }
    return out;
  }

  private static void dropReturnedResponses(PartitionState state) {
    while (!state.bufferedResponseEnds.isEmpty() && state.position >= state.bufferedResponseEnds.peekFirst()) {
      state.bufferedResponseEnds.pollFirst(); // every record of the oldest response returned
    }
  }

  /** Whether records of {@code tp} may be fetched and returned: always with manual assignment. */
  private boolean isSubscribedTopic(TopicPartition tp) {
    if (mode != Mode.SUBSCRIBED) {
      return true;
    }
    if (subscribedPattern != null) {
      return subscribedPattern.matcher(tp.topic()).matches();
    }
    return subscribedTopics.contains(tp.topic());
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Blocking lookups

  /**
   * Looks up offsets of several partitions at once, retrying retriable errors until {@code timeoutMs}.
   *
   * @throws TributaryException the last error of a partition that had no answer in time, or a non-retriable one
   */
  private Map<TopicPartition, Long> listOffsets(
      Collection<TopicPartition> partitions, long timestamp, long timeoutMs) {
    Objects.requireNonNull(partitions, "partitions");
    long deadline = TributaryClient.saturatedAdd(Metadata.nowMs(), timeoutMs);
    Map<TopicPartition, Long> result = new HashMap<>();
    Set<TopicPartition> todo = new LinkedHashSet<>(partitions);
    TributaryException last = null;
    while (true) {
      long attemptTimeout = Math.max(1, Math.min(settings.requestTimeoutMs(), deadline - Metadata.nowMs()));
      Map<TopicPartition, CompletionStage<ListOffsetsResponse>> asks = new LinkedHashMap<>();
      for (TopicPartition tp : todo) {
        asks.put(
            tp,
            client.ask(
                replyTo ->
                    new ListOffsetsRequest(ProtocolVersions.CURRENT, tp.topic(), tp.partition(), timestamp, replyTo),
                attemptTimeout));
      }
      for (Map.Entry<TopicPartition, CompletionStage<ListOffsetsResponse>> ask : asks.entrySet()) {
        TopicPartition tp = ask.getKey();
        TributaryException error;
        try {
          ListOffsetsResponse response =
              TributaryClient.await(ask.getValue(), "list offsets of " + tp, attemptTimeout);
          if (response.error() == ErrorCode.NONE) {
            result.put(tp, response.offset());
            todo.remove(tp);
            continue;
          }
          error =
              new TributaryException(
                  response.error(),
                  response.errorMessage() != null
                      ? response.errorMessage()
                      : response.error().defaultMessage() + " (" + tp + ")");
        } catch (TributaryException e) {
          error = e;
        }
        if (!error.isRetriable()) {
          throw error;
        }
        last = error;
      }
      if (todo.isEmpty()) {
        return result;
      }
      long pause = Math.min(settings.retryBackoffMs(), deadline - Metadata.nowMs());
      if (pause < 0 || Metadata.nowMs() >= deadline) {
        throw last;
      }
      Metadata.sleep(pause);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  private void addPartition(TopicPartition tp) {
    PartitionState state = new PartitionState(tp);
    state.epoch = ++epochCounter;
    state.needsCommitted = settings.hasGroupId();
    assigned.put(tp, state);
  }

  private List<PartitionRef> ownedRefs() {
    List<PartitionRef> out = new ArrayList<>();
    for (TopicPartition tp : assigned.keySet()) {
      out.add(new PartitionRef(tp.topic(), tp.partition()));
    }
    return List.copyOf(out);
  }

  private void seekLazily(Collection<TopicPartition> partitions, String strategy) {
    checkOpen();
    Objects.requireNonNull(partitions, "partitions");
    Collection<TopicPartition> targets = partitions.isEmpty() ? List.copyOf(assigned.keySet()) : partitions;
    List<PartitionState> states = new ArrayList<>();
    for (TopicPartition tp : targets) {
      states.add(stateOf(tp));
    }
    for (PartitionState state : states) {
      reset(state);
      state.position = -1;
      state.pendingReset = strategy;
    }
  }

  /**
   * Stops a partition that is being revoked (a rebalance, a leave): a new epoch drops its buffered records and the
   * answers in flight, and nothing more is fetched for it; but it keeps where it starts, so that {@link #position}
   * in {@code onPartitionsRevoked} answers as before: the committed offset for a partition whose committed-offset
   * lookup was not answered yet (looked up again, synchronously), or the pending seek's reset. As Kafka's, whose
   * partitions stay in the subscription state, positions and all, until {@code onPartitionsRevoked} returned. (A
   * partition revoked right after its assignment, e.g. in the rebalances after a coordinator move, would otherwise
   * answer with {@code auto.offset.reset}'s offset.)
   */
  private void stopForRevocation(PartitionState state) {
    String pending = state.pendingReset;
    boolean needsCommitted = state.needsCommitted;
    reset(state);
    state.pendingReset = pending;
    state.needsCommitted = needsCommitted;
    state.revoking = true;
  }

  /** Starts a new epoch: drops buffered records, forgets requests in flight and the pending committed lookup. */
  private void reset(PartitionState state) {
    state.epoch = ++epochCounter;
    state.buffer.clear();
    state.bufferEnd = -1;
    state.bufferedResponseEnds.clear();
    state.fetchInFlight = false;
    state.listOffsetsInFlight = false;
    state.committedInFlight = false;
    state.needsCommitted = false;
    state.retryAtMs = 0;
    state.pendingReset = null;
  }

  /**
   * How a partition without a position gets one.
   *
   * @throws NoOffsetForPartitionException if that is auto.offset.reset=none
   */
  private String strategyOf(PartitionState state) {
    String strategy = state.pendingReset != null ? state.pendingReset : settings.autoOffsetReset();
    if (NONE.equals(strategy)) {
      throw new NoOffsetForPartitionException(Set.of(state.tp));
    }
    return strategy;
  }

  private static long timestampOf(String strategy) {
    return EARLIEST.equals(strategy) ? ListOffsetsRequest.EARLIEST_TIMESTAMP : ListOffsetsRequest.LATEST_TIMESTAMP;
  }

  private PartitionState stateOf(TopicPartition tp) {
    PartitionState state = assigned.get(tp);
    if (state == null) {
      throw new IllegalStateException("No current assignment for partition " + tp);
    }
    return state;
  }

  /**
   * @throws TributaryException INVALID_GROUP_ID without a usable {@code group.id}
   */
  private void requireGroupId() {
    if (settings.groupId() == null) {
      throw new TributaryException(
          ErrorCode.INVALID_GROUP_ID,
          "To use the group management or offset commit APIs, you must provide a valid " + ClientConfig.GROUP_ID
              + " in the consumer configuration");
    }
    if (settings.groupId().isEmpty()) {
      throw new TributaryException(
          ErrorCode.INVALID_GROUP_ID,
          ClientConfig.GROUP_ID + " must not be empty to use the group management or offset commit APIs");
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("This consumer has already been closed.");
    }
  }

  private static long toMillisSaturated(Duration d) {
    try {
      return Math.max(0, d.toMillis());
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }
}
