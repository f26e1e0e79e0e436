package io.tributary.client;

import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@link Consumer} with manual assignment, as Kafka's {@code KafkaConsumer} with {@code assign()}.
 *
 * <p>Per assigned partition it keeps a position (the next offset {@link #poll} returns), a buffer of fetched records
 * not yet returned, and at most one fetch in flight. {@link #poll} sends a {@link FetchRequest} for every partition
 * that has a position, an empty buffer and no fetch in flight (a long poll of up to {@code fetch.max.wait.ms}, never
 * longer than what is left of the poll's timeout), and a {@link ListOffsetsRequest} for every partition without a
 * position ({@code auto.offset.reset}, or the pending {@link #seekToBeginning} / {@link #seekToEnd}). Answers arrive on
 * Akka threads into a queue that only {@code poll} (and the blocking calls) read; a fetch answered after the partition
 * was re-seeked or unassigned is discarded (every seek or reset gives the partition a new epoch). Fetches that are
 * still in flight when {@code poll} returns keep going: their records are there for the next poll.
 *
 * <p>Not thread-safe: use one consumer from one thread (as Kafka's). Retriable errors are retried every {@code
 * retry.backoff.ms} inside and across polls.
 */
final class TributaryConsumer<K, V> implements Consumer<K, V> {

  private static final String EARLIEST = "earliest";
  private static final String LATEST = "latest";
  private static final String NONE = "none";

  /** The state of one assigned partition. */
  private static final class PartitionState {
    final TopicPartition tp;
    /** Changes on every seek or reset; answers to requests of an older epoch are discarded. */
    long epoch;
    /** The next offset poll returns, or -1 if unknown. */
    long position = -1;
    /** A reset asked by seekToBeginning/seekToEnd ({@code earliest}/{@code latest}), or null for auto.offset.reset. */
    String pendingReset;
    boolean fetchInFlight;
    boolean listOffsetsInFlight;
    /** No request for this partition before this time (monotonic ms): backoff after an error. */
    long retryAtMs;
    /** Fetched records at and after {@link #position}, in offset order. */
    final ArrayDeque<Record> buffer = new ArrayDeque<>();
    long highWatermark = -1;
    boolean unknownThisPoll;
    boolean answeredThisPoll;

    PartitionState(TopicPartition tp) {
      this.tp = tp;
    }
  }

  /** An answer, put in {@link #completions} by an Akka thread. */
  private sealed interface Completion permits FetchDone, OffsetsDone {}

  private record FetchDone(
      TopicPartition tp, long epoch, long fetchOffset, FetchResponse response, Throwable failure)
      implements Completion {}

  private record OffsetsDone(TopicPartition tp, long epoch, ListOffsetsResponse response, Throwable failure)
      implements Completion {}

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
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if {@code partitions} is null or holds a null or a partition with a blank topic
   *     or negative number
   * @throws IllegalStateException if the consumer is closed
   */
  @Override
  public void assign(Collection<TopicPartition> partitions) {
    checkOpen();
    if (partitions == null) {
      throw new IllegalArgumentException("Topic partition collection to assign to cannot be null");
    }
    Set<TopicPartition> wanted = new LinkedHashSet<>();
    for (TopicPartition tp : partitions) {
      if (tp == null || tp.topic() == null || tp.topic().isBlank() || tp.partition() < 0) {
        throw new IllegalArgumentException("Invalid topic partition to assign: " + tp);
      }
      wanted.add(tp);
    }
    assigned.keySet().retainAll(wanted);
    for (TopicPartition tp : wanted) {
      if (!assigned.containsKey(tp)) {
        PartitionState state = new PartitionState(tp);
        state.epoch = ++epochCounter;
        assigned.put(tp, state);
      }
    }
  }

  /** {@inheritDoc} An unmodifiable copy. */
  @Override
  public Set<TopicPartition> assignment() {
    checkOpen();
    return Set.copyOf(assigned.keySet());
  }

  /** {@inheritDoc} Records already fetched for the partition are dropped. */
  @Override
  public void seek(TopicPartition partition, long offset) {
    checkOpen();
    if (offset < 0) {
      throw new IllegalArgumentException("seek offset must not be negative, was " + offset);
    }
    PartitionState state = stateOf(partition);
    reset(state);
    state.position = offset;
  }

  /**
   * {@inheritDoc} Lazy, as Kafka's: the log start offset is looked up on the next {@link #poll} or {@link #position}.
   * An empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  @Override
  public void seekToBeginning(Collection<TopicPartition> partitions) {
    seekLazily(partitions, EARLIEST);
  }

  /**
   * {@inheritDoc} Lazy, as Kafka's: the high watermark is looked up on the next {@link #poll} or {@link #position}.
   * An empty collection means every assigned partition.
   *
   * @throws IllegalStateException if a partition is not assigned
   */
  @Override
  public void seekToEnd(Collection<TopicPartition> partitions) {
    seekLazily(partitions, LATEST);
  }

  /**
   * {@inheritDoc} Blocks up to {@code default.api.timeout.ms} to look up an unknown position.
   *
   * @throws TributaryException also REQUEST_TIMED_OUT or UNKNOWN_TOPIC_OR_PARTITION if the lookup failed
   */
  @Override
  public long position(TopicPartition partition) {
    checkOpen();
    PartitionState state = stateOf(partition);
    if (state.position < 0) {
      String strategy = strategyOf(state);
      long offset =
          listOffsets(List.of(partition), timestampOf(strategy), settings.defaultApiTimeoutMs()).get(partition);
      if (state.position < 0) {
        reset(state);
        state.position = offset;
      }
    }
    return state.position;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Deserializers run here; if one throws, the records before the bad one are returned and the exception is
   * thrown by the next poll, with the position left at the bad record (seek past it to skip it).
   *
   * @throws IllegalStateException if no partition is assigned, or the consumer is closed
   * @throws TributaryException OFFSET_OUT_OF_RANGE (reset policy {@code none}); UNKNOWN_TOPIC_OR_PARTITION if every
   *     answer for an assigned partition during the whole poll said so; CORRUPT_MESSAGE for a batch that fails its
   *     CRC; another non-retriable broker error
   */
  @Override
  public List<ConsumerRecord<K, V>> poll(Duration timeout) {
    checkOpen();
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative");
    }
    if (assigned.isEmpty()) {
      throw new IllegalStateException("Consumer is not assigned any partitions");
    }
    long start = Metadata.nowMs();
    long deadline = TributaryClient.saturatedAdd(start, toMillisSaturated(timeout));
    for (PartitionState state : assigned.values()) {
      state.unknownThisPoll = false;
      state.answeredThisPoll = false;
    }
    while (true) {
      Completion completion;
      while ((completion = completions.poll()) != null) {
        handle(completion);
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
      try {
        completion = completions.poll(Math.max(0, wait), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted in poll()", e);
      }
      if (completion != null) {
        handle(completion);
      }
    }
    for (PartitionState state : assigned.values()) {
      if (state.unknownThisPoll && !state.answeredThisPoll) {
        throw new TributaryException(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "Topic " + state.tp.topic() + " or its partition " + state.tp.partition() + " does not exist (retried for "
                + toMillisSaturated(timeout) + " ms)");
      }
    }
    return List.of();
  }

  /** {@inheritDoc} Blocks up to {@code default.api.timeout.ms}. */
  @Override
  public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
    checkOpen();
    return listOffsets(partitions, ListOffsetsRequest.EARLIEST_TIMESTAMP, settings.defaultApiTimeoutMs());
  }

  /** {@inheritDoc} Blocks up to {@code default.api.timeout.ms}. */
  @Override
  public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
    checkOpen();
    return listOffsets(partitions, ListOffsetsRequest.LATEST_TIMESTAMP, settings.defaultApiTimeoutMs());
  }

  /**
   * {@inheritDoc} Blocks up to {@code default.api.timeout.ms}.
   *
   * @throws TributaryException INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION, REQUEST_TIMED_OUT
   */
  @Override
  public int partitionsFor(String topic) {
    checkOpen();
    return metadata.partitionCount(topic, settings.defaultApiTimeoutMs());
  }

  /** {@inheritDoc} Answers still in flight are dropped. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    assigned.clear();
    completions.clear();
    client.unregister(this);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Requests

  /**
   * Sends the ListOffsets and Fetch requests that are due.
   *
   * @return the earliest time (monotonic ms) a backed-off partition may be asked again, or {@link Long#MAX_VALUE}
   */
  private long sendRequests(long pollDeadline) {
    long now = Metadata.nowMs();
    long nextRetry = Long.MAX_VALUE;
    for (PartitionState state : assigned.values()) {
      if (now < state.retryAtMs) {
        nextRetry = Math.min(nextRetry, state.retryAtMs);
        continue;
      }
      if (state.position < 0) {
        if (!state.listOffsetsInFlight) {
          sendListOffsets(state, timestampOf(strategyOf(state)));
        }
      } else if (!state.fetchInFlight && state.buffer.isEmpty()) {
        int maxWaitMs = (int) Math.max(0, Math.min(settings.fetchMaxWaitMs(), pollDeadline - now));
        sendFetch(state, maxWaitMs);
      }
    }
    return nextRetry;
  }

  private void sendFetch(PartitionState state, int maxWaitMs) {
    TopicPartition tp = state.tp;
    long epoch = state.epoch;
    long offset = state.position;
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

  // ---------------------------------------------------------------------------------------------------------------
  // Answers

  private void handle(Completion completion) {
    if (completion instanceof FetchDone fetch) {
      handleFetch(fetch);
    } else if (completion instanceof OffsetsDone offsets) {
      handleOffsets(offsets);
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

  private void handleFetch(FetchDone done) {
    PartitionState state = assigned.get(done.tp());
    if (state == null || state.epoch != done.epoch()) {
      return;
    }
    state.fetchInFlight = false;
    if (state.position != done.fetchOffset() || !state.buffer.isEmpty()) {
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

  /** Decodes the batches of a fetch into the partition's buffer: records from the position, below the HW. */
  private void buffer(PartitionState state, FetchResponse response) {
    long next = state.position;
    long hw = response.highWatermark();
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
      if (batch.nextOffset() <= next || batch.isControlBatch()) {
        continue;
      }
      try {
        for (Record record : batch) {
          long offset = record.offset();
          if (offset < next) {
            continue;
          }
          if (hw >= 0 && offset >= hw) {
            return;
          }
          state.buffer.addLast(record);
          next = offset + 1;
        }
      } catch (InvalidRecordException e) {
        throw new TributaryException(
            e.errorCode(), "invalid record batch fetched from " + state.tp + " at " + next + ": " + e, e);
      }
    }
  }

  /** Takes up to max.poll.records buffered records, starting with the partition after the last one served. */
  private List<ConsumerRecord<K, V>> collect() {
    int max = settings.maxPollRecords();
    List<ConsumerRecord<K, V>> out = new ArrayList<>();
    List<PartitionState> states = new ArrayList<>(assigned.values());
    int n = states.size();
    for (int i = 0; i < n && out.size() < max; i++) {
      int index = (rotation + i) % n;
      PartitionState state = states.get(index);
      ArrayDeque<Record> buffer = state.buffer;
      String topic = state.tp.topic();
      while (!buffer.isEmpty() && out.size() < max) {
        Record record = buffer.peekFirst();
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
        buffer.pollFirst();
        state.position = record.offset() + 1;
        out.add(
            new ConsumerRecord<>(
                topic, state.tp.partition(), record.offset(), record.timestamp(), key, value, record.headers()));
      }
      if (!out.isEmpty()) {
        rotation = buffer.isEmpty() ? index + 1 : index;
      }
    }
    return out;
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

  /** Starts a new epoch: drops buffered records and forgets requests in flight. */
  private void reset(PartitionState state) {
    state.epoch = ++epochCounter;
    state.buffer.clear();
    state.fetchInFlight = false;
    state.listOffsetsInFlight = false;
    state.retryAtMs = 0;
    state.pendingReset = null;
  }

  /**
   * How a partition without a position gets one.
   *
   * @throws TributaryException OFFSET_OUT_OF_RANGE if that is auto.offset.reset=none
   */
  private String strategyOf(PartitionState state) {
    String strategy = state.pendingReset != null ? state.pendingReset : settings.autoOffsetReset();
    if (NONE.equals(strategy)) {
      throw new TributaryException(
          ErrorCode.OFFSET_OUT_OF_RANGE,
          "No position for partition " + state.tp + " and auto.offset.reset=none (seek to set one)");
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
