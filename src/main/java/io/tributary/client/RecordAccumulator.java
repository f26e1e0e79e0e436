package io.tributary.client;

import io.tributary.protocol.ErrorCode;
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
 * thread is blocked waiting for buffer memory.
 *
 * <h2>Order and retries</h2>
 *
 * Batches of a partition are drained in append order, at most {@code max.in.flight.requests.per.connection} at once.
 * A batch that fails with a retriable error goes back to the front of its queue, in sequence order, and is resent
 * after {@code retry.backoff.ms}; while any batch of the partition awaits a retry the partition sends one batch at a
 * time, oldest first, so retried batches are resent in order and before every newer batch. With more than one batch in
 * flight, a later batch that was already accepted stays before the retried one, and a retry after a lost answer can
 * write the batch twice: as in Kafka without idempotence (idempotent producers come with replication). With {@code
 * max.in.flight.requests.per.connection=1}, per-partition order is strict.
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
    long nextSequence;
  }

  /** The partition queues of one topic, indexed by partition; grown on demand. */
  private static final class TopicQueues {
    volatile PartitionQueue[] partitions = new PartitionQueue[0];

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

  private final int batchSize;
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

  /**
   * @param settings batch.size, linger.ms, max.in.flight, retries, retry.backoff.ms, delivery.timeout.ms and
   *     buffer.memory are used
   * @param clock monotonic time in ms
   * @param listener told when to drain
   */
  RecordAccumulator(ProducerSettings settings, LongSupplier clock, Listener listener) {
    this.batchSize = settings.batchSize();
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
      boolean abortOnNewBatch) {
    TopicQueues tq = topics.get(topic);
    if (tq == null) {
      tq = topics.computeIfAbsent(topic, t -> new TopicQueues());
    }
    PartitionQueue pq = tq.get(partition);
    CompletableFuture<RecordMetadata> future;
    boolean becameFull = false;
    long newBatchDeadline = -1;
    synchronized (pq) {
      if (closing) {
        throw new TributaryException(ErrorCode.INVALID_REQUEST, "Cannot send after the producer has been closed");
      }
      ProducerBatch last = pq.deque.peekLast();
      if (last != null && !last.full && !last.drained) {
        future = last.tryAppend(batchSize, timestamp, key, value, headers);
        if (future != null) {
          last.reservedBytes += reservedBytes;
          if (last.sizeInBytes() >= batchSize) {
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
        ProducerBatch batch = new ProducerBatch(topic, partition, pq.nextSequence++, now, capacity);
        future = batch.tryAppend(batchSize, timestamp, key, value, headers);
        batch.reservedBytes = reservedBytes;
        pq.deque.addLast(batch);
        incomplete.add(batch);
        if (batch.sizeInBytes() >= batchSize) {
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
    long now = clock.getAsLong();
    boolean forceReady = closing || flushesInProgress.get() > 0 || memory.hasQueuedThreads();
    List<ProducerBatch> ready = new ArrayList<>();
    List<ProducerBatch> expired = null;
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
          while ((head = deque.peekFirst()) != null) {
            boolean slotFree = pq.pendingRetries > 0 ? pq.inFlight == 0 : pq.inFlight < maxInFlight;
            if (!slotFree) {
              break;
            }
            if (head.attempts > 0) {
              if (now < head.retryNotBeforeMs) {
                next = Math.min(next, head.retryNotBeforeMs);
                break;
              }
            } else if (!(forceReady || head.full || deque.size() > 1 || now - head.createdMs >= lingerMs)) {
              next = Math.min(next, TributaryClient.saturatedAdd(head.createdMs, lingerMs));
              break;
            }
            deque.pollFirst();
            head.drained = true;
            pq.inFlight++;
            ready.add(head);
          }
          if (head != null) {
            next = Math.min(next, TributaryClient.saturatedAdd(head.createdMs, deliveryTimeoutMs));
          }
        }
      }
    }
    if (expired != null) {
      for (ProducerBatch batch : expired) {
        finish(batch, false, -1, -1, expiredError(batch, now, null));
      }
    }
    return new Drained(ready, next);
  }

  /**
   * Records a successful attempt and completes the batch's futures with offsets from {@code baseOffset} (-1 for
   * acks=0). Runs callbacks on the calling thread.
   */
  void onSuccess(ProducerBatch batch, long baseOffset, long logAppendTimeMs) {
    PartitionQueue pq = queueOf(batch);
    synchronized (pq) {
      pq.inFlight--;
      if (batch.attempts > 0) {
        pq.pendingRetries--;
      }
    }
    finish(batch, true, baseOffset, logAppendTimeMs, null);
    listener.wakeup();
  }

  /**
   * Records a failed attempt: a retriable error within {@code retries} and {@code delivery.timeout.ms} puts the batch
   * back in its queue for a retry after {@code retry.backoff.ms}; otherwise the batch fails with {@code error} (or
   * REQUEST_TIMED_OUT if its delivery time is up). Runs callbacks on the calling thread.
   *
   * @return whether the batch will be retried
   */
  boolean onFailure(ProducerBatch batch, TributaryException error) {
    long now = clock.getAsLong();
    PartitionQueue pq = queueOf(batch);
    boolean retry;
    boolean timedOut = now - batch.createdMs >= deliveryTimeoutMs;
    synchronized (pq) {
      pq.inFlight--;
      retry = error.isRetriable() && !timedOut && batch.attempts < retries && !batch.isDone() && !closingAborted;
      if (retry) {
        if (batch.attempts == 0) {
          pq.pendingRetries++;
        }
        batch.attempts++;
        batch.lastError = error;
        batch.retryNotBeforeMs = now + retryBackoffMs;
        reinsertInOrder(pq.deque, batch);
      } else if (batch.attempts > 0) {
        pq.pendingRetries--;
      }
    }
    if (!retry) {
      TributaryException failure =
          timedOut && error.isRetriable() ? expiredError(batch, now, error) : error;
      finish(batch, false, -1, -1, failure);
    }
    listener.wakeup();
    return retry;
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
   * Waits until every batch that is incomplete now is done.
   *
   * @param timeoutMs the longest wait, ms
   * @return true if all of them are done
   * @throws InterruptedException if interrupted
   */
  boolean awaitIncomplete(long timeoutMs) throws InterruptedException {
    long deadline = TributaryClient.saturatedAdd(clock.getAsLong(), timeoutMs);
    for (ProducerBatch batch : new ArrayList<>(incomplete)) {
      long remaining = deadline - clock.getAsLong();
      if (!batch.awaitDone(Math.max(0, remaining))) {
        return false;
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

  /** Puts a batch to retry back in the queue before every batch with a higher sequence number. */
  private static void reinsertInOrder(ArrayDeque<ProducerBatch> deque, ProducerBatch batch) {
    ArrayDeque<ProducerBatch> before = new ArrayDeque<>();
    while (!deque.isEmpty() && deque.peekFirst().sequence < batch.sequence) {
      before.push(deque.pollFirst());
    }
    deque.addFirst(batch);
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
