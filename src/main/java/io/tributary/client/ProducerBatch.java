package io.tributary.client;

import io.tributary.record.Compression;
import io.tributary.record.Header;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One record batch of one partition on its way to the broker, with the futures of its records, as Kafka's {@code
 * ProducerBatch}.
 *
 * <p>Life cycle: <em>open</em> (the last batch of its partition's queue; {@link #tryAppend} adds records) →
 * <em>full</em> (no more appends, still queued) → <em>drained</em> (taken from the queue; {@link #close()} builds the
 * bytes once) → sent, possibly several times (retries) → <em>done</em> ({@link #tryMarkDone} once, then {@link
 * #completeSuccess} or {@link #completeFailure}).
 *
 * <p>Idempotent producer: a batch is <em>sealed</em> ({@link #seal}) with the producer id, epoch and base sequence when
 * it is first drained, and every retry sends the same bytes. A sealed batch that is known never to have been appended
 * and that can no longer be appended with its sequence (a batch before it in the partition will never be) is
 * <em>unsealed</em> ({@link #unseal}) and sealed again with the bumped epoch and a new sequence: the built bytes are
 * then copied with the new producer fields and CRC ({@link RecordBatch#withProducerState}), as Kafka's {@code
 * resetProducerState}.
 *
 * <p>Not thread-safe by itself: appends and state changes happen under the lock of the partition's queue in {@link
 * RecordAccumulator}; {@link #close()} is called by the one thread that drained the batch; completion is guarded by an
 * atomic flag and runs outside any lock.
 */
final class ProducerBatch {

  final String topic;
  final int partition;
  /** Position in the partition's send order (0, 1, 2, ... per partition). */
  final long sequence;
  /** When the first record was appended (monotonic ms): start of linger and of delivery.timeout.ms. */
  final long createdMs;

  private RecordBatchBuilder builder;
  private byte[] bytes;
  private int recordCount;
  private CompletableFuture<?>[] futures;
  private long[] timestamps;
  private int[] keySizes;
  private int[] valueSizes;

  /** Bytes of buffer.memory held by this batch; released when it is done. */
  int reservedBytes;
  /** No more appends (set when a record did not fit, or the batch reached batch.size). */
  boolean full;
  /** Taken out of the queue (in flight, or being retried). */
  boolean drained;
  /** Number of completed send attempts that failed (0 until the first failure). */
  int attempts;
  /** Earliest time (monotonic ms) of the next attempt after a failure. */
  long retryNotBeforeMs;
  /** The error of the last failed attempt, for the final message. */
  TributaryException lastError;
  /**
   * Idempotent producer: the sequence number of the first record, assigned when the batch is first drained ({@link
   * #seal}), and again if it is resealed after {@link #unseal}; -1 while not sealed or without idempotence.
   */
  int baseSequence = -1;
  /** Idempotent producer: the producer id the batch is sealed with, or -1. */
  long producerId = -1;
  /** Idempotent producer: the producer epoch the batch is sealed with, or -1. */
  short producerEpoch = -1;
  /**
   * Idempotent producer: an attempt with the current seal ended with an error that does not show the leader refused
   * the batch (e.g. a timeout, a lost answer): the batch may have been appended.
   */
  boolean mayHaveBeenAppended;

  private final AtomicBoolean done = new AtomicBoolean();
  private final CountDownLatch doneLatch = new CountDownLatch(1);

  ProducerBatch(String topic, int partition, long sequence, long createdMs, int initialCapacity) {
    this.topic = topic;
    this.partition = partition;
    this.sequence = sequence;
    this.createdMs = createdMs;
    this.builder = new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, initialCapacity);
    this.futures = new CompletableFuture<?>[8];
    this.timestamps = new long[8];
    this.keySizes = new int[8];
    this.valueSizes = new int[8];
  }

  /**
   * Appends a record if it fits within {@code batchSize} (an empty batch takes any record).
   *
   * @return the record's future, or {@code null} if it does not fit (nothing changed)
   */
  CompletableFuture<RecordMetadata> tryAppend(
      int batchSize, long timestamp, byte[] key, byte[] value, Header[] headers, Callback callback) {
    if (!builder.hasRoomFor(batchSize, timestamp, key, value, headers)) {
      return null;
    }
    builder.append(timestamp, key, value, headers);
    int i = recordCount;
    if (i == futures.length) {
      int n = i * 2;
      futures = Arrays.copyOf(futures, n);
      timestamps = Arrays.copyOf(timestamps, n);
      keySizes = Arrays.copyOf(keySizes, n);
      valueSizes = Arrays.copyOf(valueSizes, n);
    }
    CompletableFuture<RecordMetadata> future = new RecordFuture(callback);
    futures[i] = future;
    timestamps[i] = timestamp;
    keySizes[i] = key == null ? -1 : key.length;
    valueSizes[i] = value == null ? -1 : value.length;
    recordCount = i + 1;
    return future;
  }

  /** The size of the batch so far, in bytes, header included (uncompressed until built, then the built size). */
  int sizeInBytes() {
    return bytes != null ? bytes.length : builder.estimatedSizeInBytes();
  }

  /** The number of records. */
  int recordCount() {
    return recordCount;
  }

  /**
   * Idempotent producer: stamps the producer id, epoch and base sequence into the batch header. Called when the batch
   * is first drained (no record can be appended any more), before {@link #close()} computes the CRC; retries send the
   * same bytes. Called again after {@link #unseal}: if the bytes were built, they are replaced by a copy with the new
   * fields and CRC (the old array is not changed; a request may still hold it).
   *
   * @throws IllegalStateException if the batch is sealed
   */
  void seal(long producerId, short epoch, int sequence) {
    if (hasSequence()) {
      throw new IllegalStateException("already sealed: " + this);
    }
    if (bytes != null) {
      bytes = RecordBatch.withProducerState(bytes, producerId, epoch, sequence);
    } else {
      builder.setProducerState(producerId, epoch, sequence);
    }
    this.producerId = producerId;
    this.producerEpoch = epoch;
    this.baseSequence = sequence;
  }

  /**
   * Idempotent producer: forgets the producer id, epoch and sequence the batch was sealed with, so that it is sealed
   * again ({@link #seal}) before its next attempt. Only for a batch known never to have been appended under its seal
   * and not in flight.
   */
  void unseal() {
    this.producerId = -1;
    this.producerEpoch = -1;
    this.baseSequence = -1;
    this.mayHaveBeenAppended = false;
  }

  /** Whether the batch carries an idempotent producer's sequence number ({@link #seal} was called). */
  boolean hasSequence() {
    return baseSequence >= 0;
  }

  /** Builds the batch bytes uncompressed (once; later calls return the same array). Only after it was drained. */
  byte[] close() {
    return close(null);
  }

  /**
   * Builds the batch bytes (once, compressed with {@code compressor} if not null; later calls return the same array
   * whatever they pass). Only after the batch was drained.
   */
  byte[] close(Compression.Compressor compressor) {
    if (bytes == null) {
      bytes = builder.build(compressor);
      builder = null;
    }
    return bytes;
  }

  /** Whether {@link #close} has built the bytes. */
  boolean isBuilt() {
    return bytes != null;
  }

  /** Whether the batch has been marked done ({@link #tryMarkDone}). */
  boolean isDone() {
    return done.get();
  }

  /**
   * Marks the batch done, once: the caller then completes it with {@link #completeSuccess} or {@link
   * #completeFailure}.
   *
   * @return false if the batch was already marked done
   */
  boolean tryMarkDone() {
    return done.compareAndSet(false, true);
  }

  /**
   * Completes every record's future with its metadata. Runs user callbacks: call without holding locks, after {@link
   * #tryMarkDone} returned true.
   *
   * @param baseOffset the offset of the first record, or -1 (acks=0)
   * @param logAppendTimeMs the broker's append time if the topic uses it, else -1
   */
  void completeSuccess(long baseOffset, long logAppendTimeMs) {
    try {
      for (int i = 0; i < recordCount; i++) {
        long offset = baseOffset < 0 ? -1L : baseOffset + i;
        long timestamp = logAppendTimeMs >= 0 ? logAppendTimeMs : timestamps[i];
        @SuppressWarnings("unchecked")
        CompletableFuture<RecordMetadata> f = (CompletableFuture<RecordMetadata>) futures[i];
        f.complete(new RecordMetadata(topic, partition, offset, timestamp, keySizes[i], valueSizes[i]));
      }
    } finally {
      release();
    }
  }

  /**
   * Completes every record's future exceptionally with {@code error}. Runs user callbacks: call without holding locks,
   * after {@link #tryMarkDone} returned true.
   */
  void completeFailure(TributaryException error) {
    try {
      for (int i = 0; i < recordCount; i++) {
        futures[i].completeExceptionally(error);
      }
    } finally {
      release();
    }
  }

  /** Waits until the batch is done, up to {@code timeoutMs}; returns whether it is done. */
  boolean awaitDone(long timeoutMs) throws InterruptedException {
    return doneLatch.await(timeoutMs, TimeUnit.MILLISECONDS);
  }

  private void release() {
    futures = null;
    timestamps = null;
    keySizes = null;
    valueSizes = null;
    doneLatch.countDown();
  }

  @Override
  public String toString() {
    return "ProducerBatch(" + topic + "-" + partition + " #" + sequence + ", " + recordCount + " records"
        + (baseSequence >= 0 ? ", seq " + baseSequence + " epoch " + producerEpoch : "") + ")";
  }
}
