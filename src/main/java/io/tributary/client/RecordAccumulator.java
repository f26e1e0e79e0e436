package io.tributary.client;

import io.tributary.protocol.ErrorCode;
import io.tributary.record.Compression;
import io.tributary.record.CompressionType;
import io.tributary.record.Header;
import io.tributary.record.RecordBatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The producer's buffer, as Kafka's {@code RecordAccumulator}: one queue of {@link ProducerBatch}es per partition,
 * filled by {@link #append} from any thread and emptied by {@link #drain} on the sender thread, plus the bookkeeping of
 * in-flight batches, retries, expiry and {@code buffer.memory}.
 *
 * <h2>Readiness</h2>
 *
 * The head batch of a partition is ready to send when it is full (it reached {@code batch.size}, or a record did not
 * fit), a newer batch is queued behind it, it has waited {@code linger.ms}, a flush or close is in progress, or a
 * thread is blocked waiting for buffer memory. When a drain finds a batch ready, the head batches of the other
 * partitions (those it takes no batch from otherwise) that only wait for {@code linger.ms} are drained with it (and
 * take their in-flight slot), as Kafka's {@code RecordAccumulator.drain} takes a batch of every partition of a ready
 * broker: a request goes out anyway, and the producer puts them into it (see {@code TributaryProducer}). Partitions written at the same rate then linger in
 * step, and one request carries a batch of each.
 *
 * <h2>Compression</h2>
 *
 * With {@code compression.type} other than none, a batch's records are compressed once, when it is first drained
 * ({@link #close}), on the sender thread. A batch is filled until its estimated compressed size reaches {@code
 * batch.size}, as Kafka's {@code MemoryRecordsBuilder}: the uncompressed size times the topic's estimated ratio times
 * 1.05, where the ratio starts at 1, moves down by 0.005 per batch that compressed better and jumps up (by 0.05 at
 * least) after a batch that compressed worse (Kafka's {@code CompressionRatioEstimator}). The uncompressed size of a
 * batch never exceeds {@code max.request.size} less {@value #COMPRESSION_OVERHEAD_ALLOWANCE} bytes (nor goes below
 * {@code batch.size}).
 *
 * <h2>Order and retries</h2>
 *
 * Batches of a partition are drained in append order, at most {@code max.in.flight.requests.per.connection} at once.
 * A batch that fails with a retriable error goes back to the front of its queue, in sequence order, and is resent
 * after {@code retry.backoff.ms}; while any batch of the partition awaits a retry the partition sends one batch at a
 * time, oldest first, so retried batches are resent in order and before every newer batch.
 *
 * <p><b>Idempotent producer</b> ({@code enable.idempotence}, Kafka's KIP-98): when a batch is drained for the first
 * time it is <em>sealed</em>: the producer id, epoch and the partition's next sequence number (counted in records,
 * from 0, wrapping at {@link Integer#MAX_VALUE}) are written into its header, and every retry sends the same bytes.
 * The partition leader appends a batch only if its sequence follows the last one it appended for this producer, and
 * answers a retry of one of the last 5 batches with the original offsets instead of appending it again. So with up to
 * 5 batches in flight: if batch n fails retriably, batches n+1.. that were in flight are rejected by the leader with
 * OUT_OF_ORDER_SEQUENCE_NUMBER (or UNKNOWN_PRODUCER_ID if n was the producer's first batch there), which is retried
 * with the same bytes while an earlier batch of the partition is in flight or awaits its retry (it may still fill the
 * gap); they all go back to the queue in sequence order and are resent one at a time, n first. Nothing is written
 * twice and nothing is reordered.
 *
 * <p>A sealed batch that finally fails (a non-retriable error, {@code delivery.timeout.ms}, {@code retries}) leaves a
 * hole in its partition's sequence (or not, if it was in fact appended and only its answer was lost). The producer
 * then bumps its epoch (and takes a new producer id when the epoch would overflow), as Kafka's idempotent producer
 * does since KIP-360, but locally, without a broker round trip: it stops sealing new batches until no sealed batch is
 * pending, then restarts every partition's sequence at 0 with the new epoch, which the leader accepts (a higher epoch
 * resets sequences). The batches of the partition sealed after the hole are not lost with it; as Kafka's {@code
 * TransactionManager.canRetry} and {@code resetProducerState}, they are <em>unsealed</em> and, after the bump, sealed
 * again with the new epoch and fresh sequences (the bytes copied with the new header and CRC) and resent in their
 * order, one at a time and before every newer batch:
 *
 * <ul>
 *   <li>OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID with no earlier batch of the partition pending: the gap is
 *       real, and the answer shows the batch was not appended (a batch that was would be answered as a duplicate).
 *   <li>A batch finally failing with an answer showing the leader refused it without appending (MESSAGE_TOO_LARGE,
 *       INVALID_RECORD, INVALID_TIMESTAMP, ...; see {@link #isRefusedNotAppended}) on every attempt since it was
 *       sealed leaves a known gap: the batches sealed after it under the same epoch can never be appended (the leader
 *       appends sequences only contiguously), so those awaiting a retry are unsealed at once and those in flight when
 *       they are answered with one of the errors above or a retriable error.
 *   <li>A batch that finally fails after a timeout or a lost answer may have been appended: nothing is assumed, the
 *       batches after it are resent with their seal, and the leader either appends them (no gap) or answers
 *       OUT_OF_ORDER_SEQUENCE_NUMBER (first case).
 * </ul>
 *
 * Each such resend counts as an attempt ({@code retries}, {@code delivery.timeout.ms}). This relies, as Kafka, on the
 * leader keeping the producer's state; a leader that lost it may accept a batch after a gap.
 *
 * <p><b>Without idempotence</b>, with more than one batch in flight, a later batch that was already accepted stays
 * before a retried (or split) one, and a retry after a lost answer can write the batch twice (as Kafka without
 * idempotence). With {@code max.in.flight.requests.per.connection=1}, per-partition order is strict.
 *
 * <h2>Splitting</h2>
 *
 * A batch of several records that the leader refuses as larger than the topic's {@code max.message.bytes}
 * (MESSAGE_TOO_LARGE) is split, as Kafka's {@code Sender.completeBatch} and {@code
 * RecordAccumulator.splitAndReenqueue} do: its records are decoded from the bytes sent (decompressed if need be; the
 * batch keeps no other copy of them, so nothing is copied when no split happens) into new batches of at most {@code
 * batch.size} and at most half the refused batch's uncompressed size (so that each split makes progress; a record
 * larger than that goes alone), see {@link ProducerBatch#split}. They go back to the front of the partition's queue in
 * their order, at the refused batch's place (before every newer batch and after older ones awaiting a retry), ready
 * at once, compressed again when sent, and resent as new batches: a split is not an attempt ({@code retries}), but
 * {@code delivery.timeout.ms} still counts from the refused batch's first append (a refusal after it fails every
 * record with REQUEST_TIMED_OUT). Each record's future moves with it. A piece still too large is split again; a
 * batch of one record too large fails with MESSAGE_TOO_LARGE, alone. The topic's compression ratio estimate restarts
 * at 1 (or the refused batch's ratio if higher), as Kafka's.
 *
 * <p>With idempotence the refused batch's sequence numbers were never appended, so it leaves a gap exactly as a batch
 * that finally fails (above): the batches sealed after it are unsealed, the epoch is bumped once no sealed batch is
 * pending, and the pieces, being new unsealed batches placed before them, are then sealed first, with fresh sequence
 * numbers, followed by the unsealed batches in their order. A sealed batch that may have been appended by an earlier
 * attempt (see above) is not split but fails as it is, as a batch of one record does: its records could otherwise be
 * written twice. (Kafka instead gives the pieces the refused batch's own sequence numbers under the same epoch; here
 * the epoch bump, which this producer does locally, keeps one rule for every gap.)
 *
 * <h2>Expiry</h2>
 *
 * A batch fails with REQUEST_TIMED_OUT once {@code delivery.timeout.ms} has passed since its first record was
 * appended: while queued (checked at each drain), or when an attempt fails after that time. A batch is not retried
 * more than {@code retries} times.
 *
 * <p>Thread-safe: each partition queue is guarded by its own lock; futures are completed (and user callbacks run)
 * outside every lock. Time comes from an injected monotonic millisecond clock.
 */
final class RecordAccumulator {

  /** What the accumulator tells the sender. Called outside the accumulator's locks. */
  interface Listener {
    /** A batch became ready (full) or an in-flight slot was freed: drain soon. */
    void wakeup();

    /** A new batch was created: drain at {@code deadlineMs} (monotonic ms) at the latest. */
    void drainAt(long deadlineMs);
  }

  /** The batches {@link #drain} took, and when to drain next. */
  record Drained(List<ProducerBatch> batches, long nextDeadlineMs) {}

  /** One partition's queue and in-flight state; guarded by its own monitor. */
  private static final class PartitionQueue {
    final ArrayDeque<ProducerBatch> deque = new ArrayDeque<>();
    int inFlight;
    int pendingRetries;
    /** Batches drained so far (each drain of a batch counts): the in-order window of {@link #slotFree}. */
    long sendCounter;
    long nextSequence;
    /** The batches awaiting an answer, in send order (idempotence: to tell whether an earlier batch is pending). */
    final List<ProducerBatch> inFlightBatches = new ArrayList<>();
    /** Idempotence: the next record sequence number, valid for {@link #sequenceProducerId}/{@link #sequenceEpoch}. */
    int nextProducerSequence;
    long sequenceProducerId = -1;
    short sequenceEpoch = -1;
    /**
     * Idempotence: the position ({@link ProducerBatch#sequence}, {@link ProducerBatch#splitPath}) of the first batch
     * known never to be appended under {@link #gapProducerId}/{@link #gapEpoch} (see "Order and retries"); {@link
     * Long#MAX_VALUE} if none.
     */
    long gapPosition = Long.MAX_VALUE;
    int[] gapSplitPath = new int[0];
    long gapProducerId = -1;
    short gapEpoch = -1;
  }

  /** The partition queues of one topic, indexed by partition; grown on demand. */
  private static final class TopicQueues {
    volatile PartitionQueue[] partitions = new PartitionQueue[0];
    /** Estimated compressed / uncompressed size of this topic's batches; written by the sender thread only. */
    volatile float compressionRatio = 1.0f;

    PartitionQueue get(int partition) {
      PartitionQueue[] array = partitions;
      if (partition < array.length) {
        PartitionQueue pq = array[partition];
        if (pq != null) {
          return pq;
        }
      }
      synchronized (this) {
        array = partitions;
        if (partition >= array.length) {
          array = Arrays.copyOf(array, partition + 1);
        }
        PartitionQueue pq = array[partition];
        if (pq == null) {
          pq = new PartitionQueue();
          array[partition] = pq;
        }
        partitions = array;
        return pq;
      }
    }
  }

  /** Room left below {@code max.request.size} for the codec's framing when a batch of incompressible data is built. */
  static final int COMPRESSION_OVERHEAD_ALLOWANCE = 1024;
  /** Kafka's {@code COMPRESSION_RATE_ESTIMATION_FACTOR}: the estimated ratio is inflated by 5%. */
  private static final float COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05f;
  /** Kafka's {@code COMPRESSION_RATIO_IMPROVING_STEP}. */
  private static final float COMPRESSION_RATIO_IMPROVING_STEP = 0.005f;
  /** Kafka's {@code COMPRESSION_RATIO_DETERIORATE_STEP}. */
  private static final float COMPRESSION_RATIO_DETERIORATE_STEP = 0.05f;

  private final int batchSize;
  /**
   * Arrays of {@code batch.size} bytes that built batches no longer use (their bytes were copied to the exact size or
   * compressed, {@link ProducerBatch#takeSpareBuffer}), for new batches to write into instead of a new zeroed array
   * each, as Kafka's {@code BufferPool} reuses {@code batch.size} buffers: at 1 KiB records a new 64 KiB array per
   * batch was a quarter of the producer's allocation. An array is given back when its batch is built, before it is
   * sent: nothing refers to it then. At most {@value #SPARE_BUFFERS} are kept. Taken under a partition's lock on
   * the application's threads, given back on the sender thread.
   */
  private final java.util.concurrent.ArrayBlockingQueue<byte[]> spareBuffers =
      new java.util.concurrent.ArrayBlockingQueue<>(SPARE_BUFFERS);
  private static final int SPARE_BUFFERS = 16;
  /** The compressor of every batch (sender thread only), or null for compression.type=none. */
  private final Compression.Compressor compressor;
  /** The largest uncompressed batch when compressing (bytes). */
  private final int maxUncompressedBatchSize;
  private final long lingerMs;
  private final int maxInFlight;
  private final int retries;
  private final long retryBackoffMs;
  private final long deliveryTimeoutMs;
  private final Semaphore memory;
  private final LongSupplier clock;
  private final Listener listener;
  private final Map<String, TopicQueues> topics = new ConcurrentHashMap<>();
  private final Set<ProducerBatch> incomplete = ConcurrentHashMap.newKeySet();
  private final AtomicInteger flushesInProgress = new AtomicInteger();
  private volatile boolean closing;
  private volatile boolean closingAborted;

  private final boolean idempotent;
  private final LongSupplier newProducerId;
  /** Idempotence: the producer id and epoch new batches are sealed with; changed only on the sender thread. */
  private volatile long producerId;
  private volatile short producerEpoch;
  /** Idempotence: sealed batches not done yet. */
  private final AtomicInteger sealedIncomplete = new AtomicInteger();
  /** Idempotence: a sealed batch failed; bump the epoch once no sealed batch is pending. */
  private volatile boolean epochBumpNeeded;

  /**
   * @param settings batch.size, linger.ms, max.in.flight, retries, retry.backoff.ms, delivery.timeout.ms and
   *     buffer.memory are used
   * @param clock monotonic time in ms
   * @param listener told when to drain
   */
  RecordAccumulator(ProducerSettings settings, LongSupplier clock, Listener listener) {
    this(settings, clock, listener, ProducerIds::random);
  }

  /**
   * @param settings as above; {@code idempotent} turns the idempotent producer on
   * @param clock monotonic time in ms
   * @param listener told when to drain
   * @param newProducerId gives a producer id (≥ 0) at construction and whenever the epoch would overflow
   */
  RecordAccumulator(ProducerSettings settings, LongSupplier clock, Listener listener, LongSupplier newProducerId) {
    this.idempotent = settings.idempotent();
    this.newProducerId = newProducerId;
    this.producerId = idempotent ? newProducerId.getAsLong() : RecordBatch.NO_PRODUCER_ID;
    this.producerEpoch = idempotent ? 0 : RecordBatch.NO_PRODUCER_EPOCH;
    this.batchSize = settings.batchSize();
    this.compressor =
        settings.compressionType() == CompressionType.NONE
            ? null
            : new Compression.Compressor(settings.compressionType(), settings.compressionLevel());
    this.maxUncompressedBatchSize = Math.max(batchSize, settings.maxRequestSize() - COMPRESSION_OVERHEAD_ALLOWANCE);
    this.lingerMs = settings.lingerMs();
    this.maxInFlight = settings.maxInFlight();
    this.retries = settings.retries();
    this.retryBackoffMs = settings.retryBackoffMs();
    this.deliveryTimeoutMs = settings.deliveryTimeoutMs();
    this.memory = new Semaphore(settings.bufferMemory());
    this.clock = clock;
    this.listener = listener;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Appending (any thread)

  /**
   * Takes {@code bytes} of buffer memory, blocking up to {@code maxBlockMs} while it is full.
   *
   * @throws TributaryException REQUEST_TIMED_OUT if the memory stayed full for {@code maxBlockMs}
   */
  void reserve(int bytes, long maxBlockMs) {
    if (memory.tryAcquire(bytes)) {
      return;
    }
    boolean acquired;
    try {
      acquired = maxBlockMs > 0 && memory.tryAcquire(bytes, maxBlockMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted while waiting for buffer memory", e);
    }
    if (!acquired) {
      throw new TributaryException(
          ErrorCode.REQUEST_TIMED_OUT,
          "buffer.memory full for max.block.ms=" + maxBlockMs + " ms (" + bytes + " bytes needed)");
    }
  }

  /** Gives back memory taken by {@link #reserve} for a record that was not appended. */
  void unreserve(int bytes) {
    memory.release(bytes);
  }

  /** Free buffer memory in bytes. */
  int availableMemory() {
    return memory.availablePermits();
  }

  /**
   * Appends a record to the open batch of its partition, or to a new batch.
   *
   * @param reservedBytes buffer memory already {@link #reserve reserved} for this record; the batch takes it over
   * @param abortOnNewBatch if the record would need a new batch, append nothing and return {@code null} (the sticky
   *     partitioner then moves to another partition and appends again, as Kafka's {@code abortOnNewBatch})
   * @param callback run when the record completes (see {@link RecordFuture}); {@code null} for none
   * @return the record's future, or {@code null} if aborted (the reservation stays with the caller)
   * @throws TributaryException INVALID_REQUEST once {@link #beginClose} was called (the reservation stays with the
   *     caller)
   */
  CompletableFuture<RecordMetadata> append(
      String topic,
      int partition,
      long timestamp,
      byte[] key,
      byte[] value,
      Header[] headers,
      int reservedBytes,
      boolean abortOnNewBatch,
      Callback callback) {
    TopicQueues tq = topics.get(topic);
    if (tq == null) {
      tq = topics.computeIfAbsent(topic, t -> new TopicQueues());
    }
    PartitionQueue pq = tq.get(partition);
    int limit = writeLimit(tq);
    CompletableFuture<RecordMetadata> future;
    boolean becameFull = false;
    long newBatchDeadline = -1;
    synchronized (pq) {
      if (closing) {
        throw new TributaryException(ErrorCode.INVALID_REQUEST, "Cannot send after the producer has been closed");
      }
      ProducerBatch last = pq.deque.peekLast();
      if (last != null && !last.full && !last.drained) {
        future = last.tryAppend(limit, timestamp, key, value, headers, callback);
        if (future != null) {
          last.reservedBytes += reservedBytes;
          if (last.sizeInBytes() >= limit) {
            last.full = true;
            becameFull = true;
          }
        } else {
          last.full = true;
          becameFull = true;
        }
      } else {
        future = null;
      }
      if (future == null && !abortOnNewBatch) {
        long now = clock.getAsLong();
        int capacity = Math.max(batchSize, RecordBatch.HEADER_SIZE + reservedBytes);
        byte[] buffer = capacity == batchSize ? spareBuffers.poll() : null;
        ProducerBatch batch = new ProducerBatch(topic, partition, pq.nextSequence++, now, capacity, buffer);
        future = batch.tryAppend(limit, timestamp, key, value, headers, callback);
        batch.reservedBytes = reservedBytes;
        pq.deque.addLast(batch);
        incomplete.add(batch);
        if (batch.sizeInBytes() >= limit) {
          batch.full = true;
          becameFull = true;
        }
        newBatchDeadline = TributaryClient.saturatedAdd(now, lingerMs);
      }
    }
    if (becameFull) {
      listener.wakeup();
    }
    if (newBatchDeadline >= 0) {
      listener.drainAt(newBatchDeadline);
    }
    return future;
  }

  /**
   * The uncompressed size a batch of the topic is filled up to: {@code batch.size} without compression, else the size
   * whose estimated compressed size is {@code batch.size} (see the class comment), within [batch.size,
   * max.request.size - {@value #COMPRESSION_OVERHEAD_ALLOWANCE}].
   */
  private int writeLimit(TopicQueues tq) {
    if (compressor == null) {
      return batchSize;
    }
    double estimated = batchSize / (tq.compressionRatio * (double) COMPRESSION_RATE_ESTIMATION_FACTOR);
    return (int) Math.max(batchSize, Math.min(estimated, maxUncompressedBatchSize));
  }

  /** The number of spare {@code batch.size} arrays kept for new batches (tests). */
  int spareBuffersForTest() {
    return spareBuffers.size();
  }

  /** The estimated compression ratio of {@code topic}'s batches (1 until a batch was built; for tests). */
  float compressionRatio(String topic) {
    TopicQueues tq = topics.get(topic);
    return tq == null ? 1.0f : tq.compressionRatio;
  }

  /**
   * Builds (the first time; compressing it with {@code compression.type}) and returns the bytes of a drained batch,
   * and updates its topic's compression ratio estimate. Sender thread only.
   *
   * @throws RuntimeException if the batch cannot be built (e.g. too large for an array)
   */
  byte[] close(ProducerBatch batch) {
    if (batch.isBuilt()) {
      return batch.close(null);
    }
    int uncompressed = batch.sizeInBytes();
    byte[] bytes = batch.close(compressor);
    byte[] spare = batch.takeSpareBuffer();
    if (spare != null && spare.length == batchSize) {
      spareBuffers.offer(spare); // dropped when the pool is full
    }
    if (compressor != null && uncompressed > 0) {
      TopicQueues tq = topics.get(batch.topic);
      if (tq != null) {
        float observed = (float) bytes.length / uncompressed;
        float current = tq.compressionRatio;
        if (observed > current) {
          tq.compressionRatio = Math.max(current + COMPRESSION_RATIO_DETERIORATE_STEP, observed);
        } else if (observed < current) {
          tq.compressionRatio = Math.max(current - COMPRESSION_RATIO_IMPROVING_STEP, observed);
        }
      }
    }
    return bytes;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Draining and completion (sender thread)

  /**
   * Takes the batches that are ready and allowed to be sent (see the class comment), marks them in flight, and fails
   * the queued batches whose {@code delivery.timeout.ms} has passed.
   *
   * @return the batches to send now, in per-partition order, and the next time (monotonic ms) a drain has something
   *     to do without a wakeup ({@link Long#MAX_VALUE} if none)
   */
  Drained drain() {
    return drain((topic, partition) -> false);
  }

  /** Which partitions' batches are being filled on purpose (see {@link #drain(Filling)}). */
  @FunctionalInterface
  interface Filling {
    boolean test(String topic, int partition);
  }

  /**
   * As {@link #drain()}, leaving out of the drain-along (see the class comment) the lingering batches that {@code
   * filling} names: the producer's sticky partitions, whose batch the partitioner fills before it moves on (sending it
   * early would make it move on after a few records, and every batch small). Sender thread only.
   */
  Drained drain(Filling filling) {
    long now = clock.getAsLong();
    boolean forceReady = closing || flushesInProgress.get() > 0 || memory.hasQueuedThreads();
    boolean sealingBlocked = idempotent && epochBumpNeeded && !tryBumpEpoch();
    List<ProducerBatch> ready = new ArrayList<>();
    List<ProducerBatch> expired = null;
    List<PartitionQueue> lingering = null; // partitions whose head batch waits only for linger.ms
    long next = Long.MAX_VALUE;
    for (TopicQueues tq : topics.values()) {
      for (PartitionQueue pq : tq.partitions) {
        if (pq == null) {
          continue;
        }
        synchronized (pq) {
          ArrayDeque<ProducerBatch> deque = pq.deque;
          // expire from the head: the queue is in append order, so also in creation-time order
          ProducerBatch head;
          while ((head = deque.peekFirst()) != null && now - head.createdMs >= deliveryTimeoutMs) {
            deque.pollFirst();
            if (head.attempts > 0) {
              pq.pendingRetries--;
            }
            if (expired == null) {
              expired = new ArrayList<>();
            }
            expired.add(head);
          }
          boolean tookOne = false;
          while ((head = deque.peekFirst()) != null) {
            if (!slotFree(pq)) {
              break;
            }
            if (head.attempts > 0) {
              if (now < head.retryNotBeforeMs) {
                next = Math.min(next, head.retryNotBeforeMs);
                break;
              }
            } else if (!(forceReady || head.full || deque.size() > 1 || now - head.createdMs >= lingerMs)) {
              next = Math.min(next, TributaryClient.saturatedAdd(head.createdMs, lingerMs));
              if (!tookOne) { // not a batch that started filling when the one before it went (one per partition)
                if (lingering == null) {
                  lingering = new ArrayList<>();
                }
                lingering.add(pq);
              }
              break;
            }
            if (idempotent && !head.hasSequence() && sealingBlocked) {
              break; // drained again when the last sealed batch is done (its completion wakes the sender)
            }
            take(pq, ready);
            tookOne = true;
          }
          if (head != null) {
            next = Math.min(next, TributaryClient.saturatedAdd(head.createdMs, deliveryTimeoutMs));
          }
        }
      }
    }
    if (lingering != null && !ready.isEmpty() && !sealingBlocked) {
      // as Kafka's drain: a request goes out anyway, so the other partitions' batches still lingering go with it
      for (PartitionQueue pq : lingering) {
        synchronized (pq) {
          ProducerBatch head = pq.deque.peekFirst();
          if (head == null || head.attempts > 0 || !slotFree(pq) || filling.test(head.topic, head.partition)) {
            continue;
          }
          take(pq, ready);
        }
      }
    }
    if (expired != null) {
      for (ProducerBatch batch : expired) {
        finish(batch, false, -1, -1, expiredError(batch, now, null));
      }
    }
    if (idempotent && epochBumpNeeded && sealedIncomplete.get() == 0) {
      next = now; // the epoch can be bumped now: drain again at once
    }
    return new Drained(ready, next);
  }

  /**
   * Takes the partition's head batch into {@code ready}: sealed first if idempotence needs it (the caller checked
   * that sealing is not blocked), marked drained, numbered for the in-order window, its in-flight slot taken. Under
   * the queue's lock.
   */
  private void take(PartitionQueue pq, List<ProducerBatch> ready) {
    ProducerBatch head = pq.deque.pollFirst();
    if (idempotent && !head.hasSequence()) {
      seal(pq, head);
    }
    head.drained = true;
    head.sendIndex = pq.sendCounter++;
    pq.inFlight++;
    pq.inFlightBatches.add(head);
    ready.add(head);
  }

  /**
   * Whether the partition may send one more batch: one at a time while a batch awaits its retry; else fewer than
   * {@code max.in.flight.requests.per.connection} unanswered, and fewer than that many sent since the oldest batch
   * still unanswered, even if later ones were answered meanwhile. Answers can come out of order (a batch's answer
   * waits for the other partitions of its request, see {@code TributaryProducer}); without the second bound, while
   * one batch waited, the partition kept sending, and when that batch was retried the leader, which remembers a
   * producer's last 5 batches (as Kafka's), no longer knew it and answered OUT_OF_ORDER_SEQUENCE_NUMBER, which the
   * producer must take as a batch never appended: it was appended a second time under a new epoch. (Kafka gets the
   * same bound from answering a connection's requests in order.) Under the queue's lock.
   */
  private boolean slotFree(PartitionQueue pq) {
    if (pq.pendingRetries > 0) {
      return pq.inFlight == 0;
    }
    return pq.inFlight < maxInFlight
        && (pq.inFlightBatches.isEmpty() || pq.sendCounter - pq.inFlightBatches.get(0).sendIndex < maxInFlight);
  }

  /** Stamps the producer id, epoch and the partition's next sequence number into a batch. Under the queue's lock. */
  private void seal(PartitionQueue pq, ProducerBatch batch) {
    long pid = producerId;
    short epoch = producerEpoch;
    if (pq.sequenceProducerId != pid || pq.sequenceEpoch != epoch) {
      pq.sequenceProducerId = pid;
      pq.sequenceEpoch = epoch;
      pq.nextProducerSequence = 0;
    }
    int sequence = pq.nextProducerSequence;
    batch.seal(pid, epoch, sequence);
    pq.nextProducerSequence = incrementSequence(sequence, batch.recordCount());
    sealedIncomplete.incrementAndGet();
  }

  /**
   * Bumps the producer epoch (a new producer id when it would overflow) if no sealed batch is pending; every
   * partition's sequence then restarts at 0. Sender thread only.
   *
   * @return whether it was bumped (sealing may go on)
   */
  private boolean tryBumpEpoch() {
    if (sealedIncomplete.get() != 0) {
      return false;
    }
    epochBumpNeeded = false;
    if (producerEpoch == Short.MAX_VALUE) {
      producerId = newProducerId.getAsLong();
      producerEpoch = 0;
    } else {
      producerEpoch = (short) (producerEpoch + 1);
    }
    return true;
  }

  /** {@code sequence + increment}, wrapping past {@link Integer#MAX_VALUE} to 0, as Kafka. */
  static int incrementSequence(int sequence, int increment) {
    if (sequence > Integer.MAX_VALUE - increment) {
      return increment - (Integer.MAX_VALUE - sequence) - 1;
    }
    return sequence + increment;
  }

  /** Whether idempotence is on. */
  boolean idempotent() {
    return idempotent;
  }

  /** The producer id new batches are sealed with (-1 without idempotence). */
  long producerId() {
    return producerId;
  }

  /** The producer epoch new batches are sealed with (-1 without idempotence). */
  short producerEpoch() {
    return producerEpoch;
  }

  /**
   * Records a successful attempt and completes the batch's futures with offsets from {@code baseOffset} (-1 for
   * acks=0). Runs callbacks on the calling thread.
   */
  void onSuccess(ProducerBatch batch, long baseOffset, long logAppendTimeMs) {
    PartitionQueue pq = queueOf(batch);
    synchronized (pq) {
      pq.inFlight--;
      pq.inFlightBatches.remove(batch);
      if (batch.attempts > 0) {
        pq.pendingRetries--;
      }
    }
    finish(batch, true, baseOffset, logAppendTimeMs, null);
    listener.wakeup();
  }

  /**
   * {@code acks=0}: completes the batch's futures as sent (offsets -1, as Kafka's {@code acks=0}, whose future
   * completes once the request is on the socket) but keeps its in-flight slot until {@link #releaseInFlight}, so that
   * at most {@code max.in.flight.requests.per.connection} unanswered batches per partition are on their way (the
   * bound that TCP's flow control gives Kafka). Runs callbacks on the calling thread.
   */
  void onSentWithoutAcks(ProducerBatch batch) {
    finish(batch, true, -1L, -1L, null);
  }

  /**
   * Frees the in-flight slot of a batch completed by {@link #onSentWithoutAcks}: its answer came, or its request
   * timed out. A second call for the same batch does nothing.
   */
  void releaseInFlight(ProducerBatch batch) {
    PartitionQueue pq = queueOf(batch);
    synchronized (pq) {
      if (pq.inFlightBatches.remove(batch)) {
        pq.inFlight--;
      }
    }
    listener.wakeup();
  }

  /**
   * Records a failed attempt: a retriable error within {@code retries} and {@code delivery.timeout.ms} puts the batch
   * back in its queue for a retry after {@code retry.backoff.ms}; otherwise the batch fails with {@code error} (or
   * REQUEST_TIMED_OUT if its delivery time is up). Runs callbacks on the calling thread.
   *
   * <p>With idempotence (see "Order and retries" in the class comment), for a sealed batch:
   * OUT_OF_ORDER_SEQUENCE_NUMBER and UNKNOWN_PRODUCER_ID are retriable: with the same bytes while an earlier batch of
   * the partition is in flight or awaits its retry, else (a real gap) unsealed, to be resent with the bumped epoch. A
   * batch behind a gap (sealed under the same epoch after a batch known never to be appended) is unsealed on a
   * retriable error too. A final failure with an error that shows the leader refused the batch, on every attempt
   * since it was sealed, leaves a gap.
   *
   * <p>MESSAGE_TOO_LARGE for a batch of several records splits it (see "Splitting" in the class comment): the batch
   * is retired in favour of its pieces, queued at its place; with idempotence its seal leaves a gap. Only if it may
   * have been appended, or the producer is being aborted, does it fail as any other batch; after {@code
   * delivery.timeout.ms} it fails with REQUEST_TIMED_OUT.
   *
   * @return whether the batch (or, split, its records) will be sent again
   */
  boolean onFailure(ProducerBatch batch, TributaryException error) {
    long now = clock.getAsLong();
    PartitionQueue pq = queueOf(batch);
    boolean retry;
    boolean retriable;
    boolean timedOut = now - batch.createdMs >= deliveryTimeoutMs;
    boolean splittable = isSplittable(batch, error);
    if (splittable && !timedOut && trySplit(pq, batch)) {
      listener.wakeup();
      return true;
    }
    synchronized (pq) {
      pq.inFlight--;
      pq.inFlightBatches.remove(batch);
      ErrorCode code = error.errorCode();
      boolean sealed = idempotent && batch.hasSequence();
      boolean refused = sealed && isRefusedNotAppended(code);
      if (sealed && !refused) {
        batch.mayHaveBeenAppended = true;
      }
      boolean reseal = false;
      batch.retryBehindKnownGap = false;
      if (sealed && isBehindGap(pq, batch)) {
        // it cannot be appended with its sequence any more: whatever the answer, resend it with the new epoch
        retriable = error.isRetriable() || isSequenceError(code);
        reseal = retriable;
        batch.retryBehindKnownGap = isSequenceError(code);
      } else if (sealed && isSequenceError(code)) {
        retriable = true;
        reseal = !hasEarlierPending(pq, batch); // else the earlier batch may still fill the gap: resend as it is
      } else {
        retriable = error.isRetriable();
      }
      retry = retriable && !timedOut && batch.attempts < retries && !batch.isDone() && !closingAborted;
      if (retry) {
        if (reseal) {
          markGap(pq, batch);
          unseal(batch);
        }
        if (batch.attempts == 0) {
          pq.pendingRetries++;
        }
        batch.attempts++;
        batch.lastError = error;
        batch.retryNotBeforeMs = now + retryBackoffMs;
        reinsertInOrder(pq.deque, batch);
      } else {
        if (batch.attempts > 0) {
          pq.pendingRetries--;
        }
        if (refused && !batch.mayHaveBeenAppended) {
          markGap(pq, batch); // the batch fails below: finish() asks for the epoch bump and counts it done
        }
      }
    }
    if (!retry) {
      TributaryException failure = timedOut && (retriable || splittable) ? expiredError(batch, now, error) : error;
      finish(batch, false, -1, -1, failure);
    }
    listener.wakeup();
    return retry;
  }

  /**
   * Whether a failed batch is one to split (see "Splitting" in the class comment): MESSAGE_TOO_LARGE from the leader
   * for a built batch of several records that is not done.
   */
  private static boolean isSplittable(ProducerBatch batch, TributaryException error) {
    return error.errorCode() == ErrorCode.MESSAGE_TOO_LARGE
        && batch.recordCount() > 1
        && batch.isBuilt()
        && !batch.isDone();
  }

  /**
   * Replaces a batch the leader refused as too large by its {@link ProducerBatch#split pieces}, queued at its place
   * (before every newer batch of the partition), unsealed and ready; with idempotence, its seal leaves a gap (the
   * epoch is bumped before the pieces are sealed). Not done (returns false, nothing changed) if the producer is being
   * aborted, if the batch is done already, or if, sealed, it may have been appended by an earlier attempt (its records
   * would be written twice).
   *
   * @return whether the batch was split (and retired)
   */
  private boolean trySplit(PartitionQueue pq, ProducerBatch batch) {
    if (closingAborted || (idempotent && batch.hasSequence() && batch.mayHaveBeenAppended)) {
      return false; // checked again under the lock
    }
    List<ProducerBatch> pieces;
    try {
      pieces = batch.split(batchSize); // outside the lock: decodes (and decompresses) the records
    } catch (RuntimeException e) {
      return false; // e.g. completed (and released) by abortAll meanwhile: it fails as it is
    }
    synchronized (pq) {
      boolean sealed = idempotent && batch.hasSequence();
      if (closingAborted || (sealed && batch.mayHaveBeenAppended) || !batch.tryMarkDone()) {
        return false;
      }
      pq.inFlight--;
      pq.inFlightBatches.remove(batch);
      if (batch.attempts > 0) {
        pq.pendingRetries--;
      }
      if (sealed) {
        markGap(pq, batch); // its sequences are never appended: the batches sealed after it are resealed too
        epochBumpNeeded = true; // before the count drops, so that the drain that sees 0 also sees the flag
        sealedIncomplete.decrementAndGet();
      }
      insertInOrder(pq.deque, pieces);
      incomplete.addAll(pieces);
    }
    batch.retire(pieces);
    incomplete.remove(batch);
    if (compressor != null && batch.uncompressedSizeInBytes() > 0) {
      // as Kafka's splitAndReenqueue: the estimate was too low; restart it at 1 or this batch's ratio if higher
      TopicQueues tq = topics.get(batch.topic);
      if (tq != null) {
        tq.compressionRatio = Math.max(1.0f, (float) batch.sizeInBytes() / batch.uncompressedSizeInBytes());
      }
    }
    return true;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Flush and close

  /** Makes every batch ready until {@link #endFlush}. */
  void beginFlush() {
    flushesInProgress.incrementAndGet();
  }

  /** Ends a {@link #beginFlush}. */
  void endFlush() {
    flushesInProgress.decrementAndGet();
  }

  /** Makes every batch ready from now on, and refuses new records (closing). */
  void beginClose() {
    closing = true;
  }

  /**
   * Waits until every batch that is incomplete now is done (for a batch split meanwhile: every piece of it).
   *
   * @param timeoutMs the longest wait, ms
   * @return true if all of them are done
   * @throws InterruptedException if interrupted
   */
  boolean awaitIncomplete(long timeoutMs) throws InterruptedException {
    long deadline = TributaryClient.saturatedAdd(clock.getAsLong(), timeoutMs);
    ArrayDeque<ProducerBatch> batches = new ArrayDeque<>(incomplete);
    ProducerBatch batch;
    while ((batch = batches.pollFirst()) != null) {
      long remaining = deadline - clock.getAsLong();
      if (!batch.awaitDone(Math.max(0, remaining))) {
        return false;
      }
      List<ProducerBatch> pieces = batch.splitInto();
      if (pieces != null) {
        batches.addAll(pieces); // split while waited for: its records are done when its pieces are
      }
    }
    return true;
  }

  /** Whether some batch is not done. */
  boolean hasIncomplete() {
    return !incomplete.isEmpty();
  }

  /**
   * Waits until no batch at all is incomplete, including batches created while waiting (after {@link #beginClose}
   * none can be).
   *
   * @return true if none is left within {@code timeoutMs}
   * @throws InterruptedException if interrupted
   */
  boolean awaitAllComplete(long timeoutMs) throws InterruptedException {
    long deadline = TributaryClient.saturatedAdd(clock.getAsLong(), timeoutMs);
    while (hasIncomplete()) {
      long remaining = deadline - clock.getAsLong();
      if (remaining < 0 || !awaitIncomplete(remaining)) {
        return !hasIncomplete();
      }
    }
    return true;
  }

  /** Fails every batch that is not done with {@code error}, queued or in flight; nothing is retried afterwards. */
  void abortAll(TributaryException error) {
    closingAborted = true;
    List<ProducerBatch> queued = new ArrayList<>();
    for (TopicQueues tq : topics.values()) {
      for (PartitionQueue pq : tq.partitions) {
        if (pq != null) {
          synchronized (pq) {
            queued.addAll(pq.deque);
            pq.deque.clear();
          }
        }
      }
    }
    queued.addAll(incomplete);
    for (ProducerBatch batch : queued) {
      finish(batch, false, -1, -1, error);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Whether a batch older than {@code batch} is in flight or awaits a retry with its seal (so it may still be
   * appended before it). Under the queue's lock.
   */
  private static boolean hasEarlierPending(PartitionQueue pq, ProducerBatch batch) {
    for (ProducerBatch b : pq.inFlightBatches) {
      if (ProducerBatch.compareOrder(b, batch) < 0) {
        return true;
      }
    }
    for (ProducerBatch b : pq.deque) {
      if (ProducerBatch.compareOrder(b, batch) >= 0) {
        break; // the queue is in send order
      }
      if (b.attempts > 0 && b.hasSequence()) {
        return true;
      }
    }
    return false;
  }

  /** OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID: the leader found a gap before the batch's sequence. */
  private static boolean isSequenceError(ErrorCode code) {
    return code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER || code == ErrorCode.UNKNOWN_PRODUCER_ID;
  }

  /**
   * Whether an answer with this error shows that the leader refused the batch before appending it: checks of the
   * batch itself (size, layout, CRC, codec, timestamps, acks), of its producer state, and NOT_ENOUGH_REPLICAS (checked
   * before the append). Timeouts, lost connections, NOT_LEADER_OR_FOLLOWER (also the answer to an appended acks=all
   * batch whose leader moved) and NOT_ENOUGH_REPLICAS_AFTER_APPEND do not.
   */
  private static boolean isRefusedNotAppended(ErrorCode code) {
    return switch (code) {
      case MESSAGE_TOO_LARGE,
          INVALID_RECORD,
          INVALID_TIMESTAMP,
          CORRUPT_MESSAGE,
          UNSUPPORTED_COMPRESSION_TYPE,
          INVALID_REQUIRED_ACKS,
          NOT_ENOUGH_REPLICAS,
          OUT_OF_ORDER_SEQUENCE_NUMBER,
          UNKNOWN_PRODUCER_ID,
          INVALID_PRODUCER_EPOCH -> true;
      default -> false;
    };
  }

  /** Whether a batch is sealed after the partition's gap, with the gap's producer id and epoch. Under the lock. */
  private static boolean isBehindGap(PartitionQueue pq, ProducerBatch batch) {
    return batch.hasSequence()
        && batch.producerId == pq.gapProducerId
        && batch.producerEpoch == pq.gapEpoch
        && ProducerBatch.compareOrder(batch.sequence, batch.splitPath, pq.gapPosition, pq.gapSplitPath) > 0;
  }

  /**
   * Records that a sealed batch will never be appended under its seal: no batch sealed after it under the same epoch
   * can be appended either. The queued ones (awaiting a retry with their seal) are unsealed at once; those in flight
   * are when their answer comes. Under the queue's lock; before {@code batch} is unsealed or finished.
   */
  private void markGap(PartitionQueue pq, ProducerBatch batch) {
    if (pq.gapProducerId != batch.producerId
        || pq.gapEpoch != batch.producerEpoch
        || ProducerBatch.compareOrder(batch.sequence, batch.splitPath, pq.gapPosition, pq.gapSplitPath) < 0) {
      pq.gapProducerId = batch.producerId;
      pq.gapEpoch = batch.producerEpoch;
      pq.gapPosition = batch.sequence;
      pq.gapSplitPath = batch.splitPath;
    }
    for (ProducerBatch queued : pq.deque) {
      if (isBehindGap(pq, queued)) {
        unseal(queued);
      }
    }
  }

  /** Unseals a sealed batch that is not in flight, to be sealed again after the epoch bump. Under the queue's lock. */
  private void unseal(ProducerBatch batch) {
    epochBumpNeeded = true; // before the count drops, so that the drain that sees 0 also sees the flag
    batch.unseal();
    sealedIncomplete.decrementAndGet();
  }

  private PartitionQueue queueOf(ProducerBatch batch) {
    return topics.get(batch.topic).get(batch.partition);
  }

  /**
   * Completes a batch once (success if {@code succeeded}): frees its memory first (so a callback that sends again
   * finds it), runs the futures' callbacks, then forgets it.
   */
  private void finish(
      ProducerBatch batch, boolean succeeded, long baseOffset, long logAppendTimeMs, TributaryException error) {
    if (!batch.tryMarkDone()) {
      return;
    }
    if (batch.hasSequence()) {
      if (!succeeded) {
        epochBumpNeeded = true; // before the count drops, so that the drain that sees 0 also sees the flag
      }
      sealedIncomplete.decrementAndGet();
    }
    memory.release(batch.reservedBytes);
    try {
      if (succeeded) {
        batch.completeSuccess(baseOffset, logAppendTimeMs);
      } else {
        batch.completeFailure(error);
      }
    } finally {
      incomplete.remove(batch);
    }
  }

  /** Puts a batch to retry back in the queue before every batch that comes after it in send order. */
  private static void reinsertInOrder(ArrayDeque<ProducerBatch> deque, ProducerBatch batch) {
    insertInOrder(deque, List.of(batch));
  }

  /**
   * Puts batches that are adjacent in send order, in that order, into the queue before every batch that comes after
   * them (the queue is kept in send order).
   */
  private static void insertInOrder(ArrayDeque<ProducerBatch> deque, List<ProducerBatch> batches) {
    ProducerBatch first = batches.get(0);
    ArrayDeque<ProducerBatch> before = new ArrayDeque<>();
    while (!deque.isEmpty() && ProducerBatch.compareOrder(deque.peekFirst(), first) < 0) {
      before.push(deque.pollFirst());
    }
    for (int i = batches.size() - 1; i >= 0; i--) {
      deque.addFirst(batches.get(i));
    }
    while (!before.isEmpty()) {
      deque.addFirst(before.pop());
    }
  }

  private TributaryException expiredError(ProducerBatch batch, long now, TributaryException cause) {
    TributaryException last = cause != null ? cause : batch.lastError;
    return new TributaryException(
        ErrorCode.REQUEST_TIMED_OUT,
        "Expiring "
            + batch.recordCount()
            + " record(s) for "
            + batch.topic
            + "-"
            + batch.partition
            + ": "
            + (now - batch.createdMs)
            + " ms has passed since batch creation ("
            + ClientConfig.DELIVERY_TIMEOUT_MS
            + "="
            + deliveryTimeoutMs
            + ")"
            + (last != null ? "; last error: " + last.getMessage() : ""),
        last);
  }
}
