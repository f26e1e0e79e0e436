package io.tributary.client;

import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicNames;
import io.tributary.record.Header;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link Producer} built as Kafka's {@code KafkaProducer}: {@link #send} partitions and serializes a record and
 * appends it to a {@link RecordAccumulator} in the calling thread; one sender thread per producer ({@code
 * tributary-producer-N-sender}) drains ready batches, sends them through the gateway, the batches of several
 * partitions together in one {@link MultiProduceRequest} as Kafka's sender puts every ready partition of a broker in
 * one Produce request, and handles the answers (retries, completion of the futures).
 *
 * <p>Futures complete, and their callbacks run, on the sender thread (or on the thread that closes the producer when
 * it aborts records): callbacks should be quick and must not call {@link #flush()} (which throws {@link
 * IllegalStateException} there) or block on {@code send} for long. {@link #close} from a callback does not wait.
 *
 * <p>Idempotence ({@code enable.idempotence}): the producer id is drawn by {@link ProducerIds#random()} when the
 * producer is made, with epoch 0; the {@link RecordAccumulator} seals batches with it and the per-partition sequence
 * numbers (see its "Order and retries"). A DUPLICATE_SEQUENCE_NUMBER answer to a sealed batch counts as a success.
 *
 * <p>A MESSAGE_TOO_LARGE answer to a batch of several records makes the accumulator split it and queue the pieces in
 * its place (see its "Splitting"), as Kafka's {@code Sender}; they are drained, built (compressed) and sent as any
 * new batch.
 *
 * <p>Thread-safe.
 */
final class TributaryProducer<K, V> implements Producer<K, V>, RecordAccumulator.Listener {

  private final TributaryClient client;
  /** The producer's settings, {@code max.request.size} capped at {@link #frameLimit}. */
  private final ProducerSettings settings;
  /** {@code max.request.size} as configured (for error messages). */
  private final int configuredMaxRequestSize;
  /**
   * The largest request the client's transport carries: {@code akka.remote.artery.advanced.maximum-frame-size} less
   * 64 KiB ({@link io.tributary.protocol.FrameLimits}, the broker's {@code message.max.bytes} cap too), bytes.
   * A larger request would be dropped by Artery as oversized and time out; a record that does not fit is refused at
   * {@link #send} with MESSAGE_TOO_LARGE instead.
   */
  private final int frameLimit;
  private final Serializer<K> keySerializer;
  private final Serializer<V> valueSerializer;
  private final Metadata metadata;
  private final Partitioner partitioner = new Partitioner();
  private final RecordAccumulator accumulator;
  private final ScheduledThreadPoolExecutor sender;
  private volatile Thread senderThread;
  private final AtomicBoolean drainScheduled = new AtomicBoolean();
  private final Object timerLock = new Object();
  private volatile long timerAtMs = Long.MAX_VALUE;
  private ScheduledFuture<?> timer;
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Monotonic ms before which retries are counted, not logged ({@link #warnRetry}); sender thread only. */
  private long nextRetryWarningMs = Long.MIN_VALUE;
  /** Retries since the last warning; sender thread only. */
  private int retriesNotLogged;
  private final CompletableFuture<Void> closedFuture = new CompletableFuture<>();

  TributaryProducer(
      TributaryClient client,
      ProducerSettings settings,
      Serializer<K> keySerializer,
      Serializer<V> valueSerializer,
      int id) {
    this.client = client;
    this.configuredMaxRequestSize = settings.maxRequestSize();
    this.frameLimit = io.tributary.protocol.FrameLimits.maxPayloadBytes(client.system().settings().config());
    this.settings = settings.withMaxRequestSize(Math.min(settings.maxRequestSize(), frameLimit));
    this.keySerializer = keySerializer;
    this.valueSerializer = valueSerializer;
    this.metadata =
        new Metadata(client, settings.requestTimeoutMs(), settings.retryBackoffMs(), settings.metadataMaxAgeMs());
    this.accumulator = new RecordAccumulator(this.settings, Metadata::nowMs, this);
    this.sender =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "tributary-producer-" + id + "-sender");
              thread.setDaemon(true);
              senderThread = thread;
              return thread;
            });
    this.sender.setRemoveOnCancelPolicy(true);
    this.sender.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Blocks only while the topic's partition count is not known yet and while buffer memory is full, together at
   * most {@code max.block.ms}. Serializer exceptions propagate as they are.
   *
   * @throws TributaryException INVALID_REQUEST if the producer is closed; REQUEST_TIMED_OUT if {@code buffer.memory}
   *     stayed full for {@code max.block.ms}
   */
  @Override
  public CompletionStage<RecordMetadata> send(ProducerRecord<K, V> record) {
    return send(record, null);
  }

  @Override
  public CompletionStage<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback) {
    CompletableFuture<RecordMetadata> future = enqueue(record, callback);
    if (callback != null && future.isCompletedExceptionally() && !(future instanceof RecordFuture)) {
      // refused before it was buffered: the callback hears it too (on this thread, as Kafka's)
      future.whenComplete((md, ex) -> callback.onCompletion(null,
          ex instanceof Exception e ? e : new RuntimeException(ex)));
    }
    return future;
  }

  private CompletableFuture<RecordMetadata> enqueue(ProducerRecord<K, V> record, Callback callback) {
    Objects.requireNonNull(record, "record");
    if (closed.get()) {
      throw new TributaryException(ErrorCode.INVALID_REQUEST, "Cannot send after the producer has been closed");
    }
    String topic = record.topic();
    long start = Metadata.nowMs();
    int numPartitions = metadata.cachedPartitionCount(topic);
    if (numPartitions <= 0) {
      String invalid = TopicNames.invalidReason(topic);
      if (invalid != null) { // no such topic can exist: say why at once, as Kafka's InvalidTopicException
        return failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid);
      }
      try {
        numPartitions = metadata.partitionCount(topic, settings.maxBlockMs());
      } catch (TributaryException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    byte[] key = keySerializer.serialize(topic, record.key());
    byte[] value = valueSerializer.serialize(topic, record.value());
    List<Header> headerList = record.headers();
    Header[] headers = headerList.isEmpty() ? null : headerList.toArray(new Header[0]);
    int size = RecordBatchBuilder.estimateSizeInBytes(key, value, headers);
    if ((long) size + RecordBatch.HEADER_SIZE > settings.maxRequestSize()) {
      return failed(
          ErrorCode.MESSAGE_TOO_LARGE,
          "The record is " + size + " bytes when serialized, " + (size + RecordBatch.HEADER_SIZE) + " with the "
              + RecordBatch.HEADER_SIZE + "-byte batch header, which is larger than "
              + (configuredMaxRequestSize > frameLimit
                  ? "the " + frameLimit + " bytes a request can carry (akka.remote.artery.advanced.maximum-frame-size"
                      + " less 64 KiB; " + ClientConfig.MAX_REQUEST_SIZE + "=" + configuredMaxRequestSize + ")"
                  : ClientConfig.MAX_REQUEST_SIZE + "=" + configuredMaxRequestSize));
    }
    if (size > settings.bufferMemory()) {
      return failed(
          ErrorCode.MESSAGE_TOO_LARGE,
          "The record is " + size + " bytes when serialized, which is larger than " + ClientConfig.BUFFER_MEMORY + "="
              + settings.bufferMemory());
    }
    Integer explicit = record.partition();
    if (explicit != null && explicit >= numPartitions) {
      try {
        numPartitions = metadata.fetch(topic, remaining(start));
      } catch (TributaryException e) {
        return CompletableFuture.failedFuture(e);
      }
      if (explicit >= numPartitions) {
        return failed(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "Partition " + explicit + " of topic " + topic + " does not exist (the topic has " + numPartitions
                + " partitions)");
      }
    }
    long timestamp = record.timestamp() != null ? record.timestamp() : System.currentTimeMillis();
    accumulator.reserve(size, remaining(start));
    try {
      int partition;
      boolean sticky = false;
      if (explicit != null) {
        partition = explicit;
      } else if (key != null) {
        partition = Partitioner.partitionForKey(key, numPartitions);
      } else {
        partition = partitioner.stickyPartition(topic, numPartitions);
        sticky = true;
      }
      CompletableFuture<RecordMetadata> future =
          accumulator.append(topic, partition, timestamp, key, value, headers, size, sticky, callback);
      if (future == null) {
        partitioner.onNewBatch(topic, partition, numPartitions);
        partition = partitioner.stickyPartition(topic, numPartitions);
        future = accumulator.append(topic, partition, timestamp, key, value, headers, size, false, callback);
      }
      return future;
    } catch (RuntimeException | Error e) {
      accumulator.unreserve(size);
      throw e;
    }
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if called from a send callback (on the sender thread)
   * @throws TributaryException NETWORK_EXCEPTION if the thread is interrupted (its interrupt flag is set again)
   */
  @Override
  public void flush() {
    if (Thread.currentThread() == senderThread) {
      throw new IllegalStateException("flush() must not be called from a send callback");
    }
    accumulator.beginFlush();
    try {
      wakeup();
      accumulator.awaitIncomplete(Long.MAX_VALUE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted during flush()", e);
    } finally {
      accumulator.endFlush();
    }
  }

  /**
   * {@inheritDoc}
   *
   * @throws TributaryException INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION (after {@code max.block.ms}),
   *     REQUEST_TIMED_OUT
   */
  @Override
  public int partitionsFor(String topic) {
    return metadata.partitionCount(topic, settings.maxBlockMs());
  }

  /**
   * {@inheritDoc}
   *
   * <p>New sends are refused at once; buffered records are sent without waiting for {@code linger.ms}. Records still
   * not acknowledged when {@code timeout} is up fail with REQUEST_TIMED_OUT. Called from a send callback, it does not
   * wait (as Kafka's {@code close} from a callback). The client's ActorSystem is left running.
   */
  @Override
  public void close(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (!closed.compareAndSet(false, true)) {
      if (Thread.currentThread() != senderThread) {
        try { // the first close is bounded by its own timeout; this caller waits at most its own
          closedFuture.get(toMillisSaturated(timeout), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
          // bounded wait: the first close goes on
        }
      }
      return;
    }
    try {
      long timeoutMs = Thread.currentThread() == senderThread ? 0 : toMillisSaturated(timeout);
      accumulator.beginClose();
      wakeup();
      boolean allDone;
      try {
        allDone = accumulator.awaitAllComplete(timeoutMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        allDone = false;
      }
      if (!allDone) {
        accumulator.abortAll(
            new TributaryException(
                ErrorCode.REQUEST_TIMED_OUT, "The producer was closed before the record was acknowledged"));
      }
      sender.shutdown();
      client.unregister(this);
    } finally {
      closedFuture.complete(null);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Sender

  /** {@inheritDoc} Runs a drain on the sender thread soon (coalesced). */
  @Override
  public void wakeup() {
    if (drainScheduled.compareAndSet(false, true)) {
      try {
        sender.execute(this::runDrain);
      } catch (RejectedExecutionException e) {
        drainScheduled.set(false);
      }
    }
  }

  /** {@inheritDoc} One timer at a time, for the earliest deadline asked for. */
  @Override
  public void drainAt(long deadlineMs) {
    if (deadlineMs >= timerAtMs) {
      return;
    }
    long delay = deadlineMs - Metadata.nowMs();
    if (delay <= 0) {
      wakeup();
      return;
    }
    synchronized (timerLock) {
      if (deadlineMs >= timerAtMs) {
        return;
      }
      if (timer != null) {
        timer.cancel(false);
      }
      try {
        timer = sender.schedule(this::onTimer, delay, TimeUnit.MILLISECONDS);
        timerAtMs = deadlineMs;
      } catch (RejectedExecutionException e) {
        timer = null;
      }
    }
  }

  private void onTimer() {
    synchronized (timerLock) {
      timerAtMs = Long.MAX_VALUE;
      timer = null;
    }
    runDrain();
  }

  private void runDrain() {
    drainScheduled.set(false);
    try {
      RecordAccumulator.Drained drained = accumulator.drain(partitioner::isSticky);
      sendAll(drained.batches());
      if (drained.nextDeadlineMs() != Long.MAX_VALUE) {
        drainAt(drained.nextDeadlineMs());
      }
    } catch (RuntimeException e) {
      client.system().log().error("Tributary producer sender failed", e);
    }
  }

  /**
   * Sends drained batches in as few requests as Kafka's sender would: batches of several partitions with the same
   * leader (as the client's metadata last described it) go together in one {@link MultiProduceRequest} (at most one
   * batch per partition, at most {@code max.request.size} bytes in all, the first always), as Kafka's one Produce
   * request per broker per drain; a request of one batch is a plain {@link ProduceRequest}. A partition's k-th batch
   * of this drain goes in its leader's k-th request, so its batches leave in order. All requests go through the
   * client's gateway, which routes each batch to its leader; grouping by leader keeps a leader that does not answer
   * from holding up the answers for other leaders' partitions. Sender thread only.
   */
  private void sendAll(List<ProducerBatch> batches) {
    if (batches.isEmpty()) {
      return;
    }
    if (batches.size() == 1) {
      ProducerBatch batch = batches.get(0);
      byte[] bytes = build(batch);
      if (bytes != null) {
        send(batch, bytes);
      }
      return;
    }
    // per leader, round k: the k-th batch of each of its partitions, in drain order
    Map<String, List<List<ProducerBatch>>> byLeader = new LinkedHashMap<>();
    Map<String, List<List<byte[]>>> bytesByLeader = new HashMap<>();
    Map<TopicPartition, Integer> seen = new HashMap<>();
    for (ProducerBatch batch : batches) {
      byte[] bytes = build(batch);
      if (bytes == null) {
        continue;
      }
      String leader = Objects.requireNonNullElse(metadata.leader(batch.topic, batch.partition), "");
      List<List<ProducerBatch>> rounds = byLeader.computeIfAbsent(leader, l -> new ArrayList<>());
      List<List<byte[]>> roundBytes = bytesByLeader.computeIfAbsent(leader, l -> new ArrayList<>());
      int k = seen.merge(new TopicPartition(batch.topic, batch.partition), 1, Integer::sum) - 1;
      while (k >= rounds.size()) {
        rounds.add(new ArrayList<>());
        roundBytes.add(new ArrayList<>());
      }
      rounds.get(k).add(batch);
      roundBytes.get(k).add(bytes);
    }
    for (Map.Entry<String, List<List<ProducerBatch>>> e : byLeader.entrySet()) {
      sendRounds(e.getValue(), bytesByLeader.get(e.getKey()));
    }
  }

  private void sendRounds(List<List<ProducerBatch>> rounds, List<List<byte[]>> roundBytes) {
    int limit = settings.maxRequestSize();
    for (int k = 0; k < rounds.size(); k++) {
      List<ProducerBatch> round = rounds.get(k);
      List<byte[]> bytes = roundBytes.get(k);
      int from = 0;
      long size = 0;
      for (int i = 0; i < round.size(); i++) {
        if (i > from && size + bytes.get(i).length > limit) {
          sendRequest(round.subList(from, i), bytes.subList(from, i));
          from = i;
          size = 0;
        }
        size += bytes.get(i).length;
      }
      sendRequest(round.subList(from, round.size()), bytes.subList(from, round.size()));
    }
  }

  /** The batch's bytes to send (built and compressed once, see {@link RecordAccumulator#close}); null if it failed. */
  private byte[] build(ProducerBatch batch) {
    try {
      return accumulator.close(batch);
    } catch (RuntimeException e) {
      accumulator.onFailure(
          batch, new TributaryException(ErrorCode.MESSAGE_TOO_LARGE, "could not build the record batch: " + e, e));
      return null;
    }
  }

  private void sendRequest(List<ProducerBatch> batches, List<byte[]> bytes) {
    if (batches.size() == 1) {
      send(batches.get(0), bytes.get(0));
      return;
    }
    List<ProducerBatch> sent = List.copyOf(batches);
    List<MultiProduceRequest.Entry> entries = new ArrayList<>(sent.size());
    for (int i = 0; i < sent.size(); i++) {
      entries.add(MultiProduceRequest.Entry.of(sent.get(i).topic, sent.get(i).partition, bytes.get(i)));
    }
    short acks = settings.acks();
    int timeoutMs = settings.requestTimeoutMs();
    CompletionStage<MultiProduceResponse> answer =
        client.ask(
            replyTo -> new MultiProduceRequest(ProtocolVersions.CURRENT, acks, timeoutMs, entries, replyTo),
            timeoutMs);
    if (acks == 0) {
      for (ProducerBatch batch : sent) {
        accumulator.onSentWithoutAcks(batch);
      }
    }
    answer.whenCompleteAsync((response, failure) -> {
      for (int i = 0; i < sent.size(); i++) {
        ProducerBatch batch = sent.get(i);
        ProduceResponse r = response == null || i >= response.responses().size() ? null : response.responses().get(i);
        if (r != null && (r.partition() != batch.partition || !batch.topic.equals(r.topic()))) {
          r = null; // not this batch's answer: a broker that broke the entry order
        }
        Throwable f = failure;
        if (f == null && r == null) {
          f = new TributaryException(ErrorCode.UNKNOWN_SERVER_ERROR, "the broker's answer to a produce request of "
              + sent.size() + " batches has no answer in place for " + batch.topic + "-" + batch.partition);
        }
        if (acks == 0) {
          onAcksZeroAnswer(batch, r);
        } else {
          onAnswer(batch, r, f);
        }
      }
    }, sender);
  }

  private void send(ProducerBatch batch, byte[] bytes) {
    short acks = settings.acks();
    int timeoutMs = settings.requestTimeoutMs();
    CompletionStage<ProduceResponse> answer =
        client.ask(
            replyTo ->
                new ProduceRequest(
                    ProtocolVersions.CURRENT, batch.topic, batch.partition, acks, timeoutMs, bytes, replyTo),
            timeoutMs);
    if (acks == 0) {
      // the futures complete now (as Kafka's acks=0); the answer only frees the in-flight slot. Without that bound a
      // fast producer outran the broker and Artery/the leader's stash dropped requests, silently
      accumulator.onSentWithoutAcks(batch);
      answer.whenCompleteAsync((response, failure) -> onAcksZeroAnswer(batch, response), sender);
    } else {
      answer.whenCompleteAsync((response, failure) -> onAnswer(batch, response, failure), sender);
    }
  }

  /**
   * Logs a retried produce error at WARN, as Kafka's producer does ("Got error produce response ..., retrying"), so
   * that a producer held up by, say, NOT_ENOUGH_REPLICAS does not wait silently until {@code delivery.timeout.ms}; at
   * most one line per {@value #RETRY_WARNING_INTERVAL_MS} ms, with the number of retries since the last one. Sender
   * thread only.
   */
  private void warnRetry(ProducerBatch batch, TributaryException error) {
    long now = Metadata.nowMs();
    if (now < nextRetryWarningMs) {
      retriesNotLogged++;
      return;
    }
    nextRetryWarningMs = now + RETRY_WARNING_INTERVAL_MS;
    String since = retriesNotLogged == 0 ? "" : " (" + retriesNotLogged + " more retries since the last warning)";
    retriesNotLogged = 0;
    if (error.errorCode() == ErrorCode.MESSAGE_TOO_LARGE) { // a split (see RecordAccumulator), not a retry
      LOG.warn("Produce to {}-{} failed with MESSAGE_TOO_LARGE, splitting the batch of {} records and sending the"
          + " pieces: {}{}", batch.topic, batch.partition, batch.recordCount(), error.getMessage(), since);
      return;
    }
    LOG.warn("Produce to {}-{} failed with {}, retrying until delivery.timeout.ms ({} ms) is up: {}{}", batch.topic,
        batch.partition, error.errorCode(), settings.deliveryTimeoutMs(), error.getMessage(), since);
  }

  /** The shortest time between two retry warnings of one producer, ms. */
  static final long RETRY_WARNING_INTERVAL_MS = 5_000;

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TributaryProducer.class);

  /** An answer (or timeout) to an acks=0 request: frees its slot; a stale-leader error refreshes the metadata. */
  private void onAcksZeroAnswer(ProducerBatch batch, ProduceResponse response) {
    try {
      if (response != null && isStaleMetadata(response.error())) {
        metadata.requestRefresh(batch.topic);
      }
      accumulator.releaseInFlight(batch);
    } catch (RuntimeException e) {
      client.system().log().error("Tributary producer failed to handle a produce answer", e);
    }
  }

  private static boolean isStaleMetadata(ErrorCode code) {
    return code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        || code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        || code == ErrorCode.LEADER_NOT_AVAILABLE
        || code == ErrorCode.FENCED_LEADER_EPOCH;
  }

  private void onAnswer(ProducerBatch batch, ProduceResponse response, Throwable failure) {
    try {
      TributaryException error;
      if (failure != null) {
        error =
            TributaryClient.toException(
                failure, "produce to " + batch.topic + "-" + batch.partition, settings.requestTimeoutMs());
      } else if (response.error() == ErrorCode.NONE) {
        accumulator.onSuccess(batch, response.baseOffset(), response.logAppendTimeMs());
        return;
      } else if (response.error() == ErrorCode.DUPLICATE_SEQUENCE_NUMBER && batch.hasSequence()) {
        // the leader already has this batch (a retry): as Kafka, a success; the offsets are those it gave, if any
        accumulator.onSuccess(batch, response.baseOffset(), response.logAppendTimeMs());
        return;
      } else {
        error =
            new TributaryException(
                response.error(),
                response.errorMessage() != null ? response.errorMessage() : response.error().defaultMessage());
      }
      ErrorCode code = error.errorCode();
      if (isStaleMetadata(code)) {
        metadata.requestRefresh(batch.topic);
      }
      if (accumulator.onFailure(batch, error)) {
        if (batch.retryBehindKnownGap) {
          // the leader's expected answer to a batch behind a batch it refused: resent with the bumped epoch
          LOG.debug("Produce to {}-{}: {} behind a refused batch, resending with a new producer epoch", batch.topic,
              batch.partition, error.errorCode());
        } else {
          warnRetry(batch, error);
        }
      }
    } catch (RuntimeException e) {
      client.system().log().error("Tributary producer failed to handle a produce answer", e);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  private long remaining(long startMs) {
    return Math.max(0, settings.maxBlockMs() - (Metadata.nowMs() - startMs));
  }

  private static CompletableFuture<RecordMetadata> failed(ErrorCode code, String message) {
    return CompletableFuture.failedFuture(new TributaryException(code, message));
  }

  private static long toMillisSaturated(Duration d) {
    try {
      return Math.max(0, d.toMillis());
    } catch (ArithmeticException e) {
      return d.isNegative() ? 0 : Long.MAX_VALUE;
    }
  }
}
