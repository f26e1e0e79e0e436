package io.tributary.client;

import io.tributary.record.Compression;
import io.tributary.record.Header;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
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
 * <p>Split: a built batch of several records that the leader refused as too large (MESSAGE_TOO_LARGE) is replaced by
 * smaller batches holding the same records in the same order, with the same futures ({@link #split}), as Kafka's
 * {@code ProducerBatch.split}; the refused batch is then {@link #retire retired}: done, without completing any
 * record's future. The pieces sort right where it was in its partition's send order ({@link #compareOrder}).
 *
 * <p>Not thread-safe by itself: appends and state changes happen under the lock of the partition's queue in {@link
 * RecordAccumulator}; {@link #close()} is called by the one thread that drained the batch; completion is guarded by an
 * atomic flag and runs outside any lock.
 */
final class ProducerBatch {

  final String topic;
  final int partition;
  /** Position in the partition's send order (0, 1, 2, ... per partition); a split's pieces keep their batch's. */
  final long sequence;
  /**
   * Order among the pieces of split batches, after {@link #sequence} ({@link #compareOrder}): empty for a batch made
   * by {@link RecordAccumulator#append}; a piece of a split has its batch's path plus its index among the pieces.
   */
  final int[] splitPath;
  /** When the first record was appended (monotonic ms): start of linger and of delivery.timeout.ms. */
  final long createdMs;

  private RecordBatchBuilder builder;
  private byte[] bytes;
  /** The builder's array after the build, when the bytes are a copy of it ({@link #takeSpareBuffer}). */
  private byte[] spareBuffer;
  private int recordCount;
  private CompletableFuture<?>[] futures;
  private long[] timestamps;
  private int[] keySizes;
  private int[] valueSizes;

  /** The uncompressed size in bytes when the batch was built ({@link #close}), header included; 0 before. */
  private int uncompressedSizeInBytes;
  /** The batches that replaced this one ({@link #retire}); set before it is marked done, null if none. */
  private volatile List<ProducerBatch> splitInto;

  /** Bytes of buffer.memory held by this batch; released when it is done. */
  int reservedBytes;
  /** No more appends (set when a record did not fit, or the batch reached batch.size). */
  boolean full;
  /** Taken out of the queue (in flight, or being retried). */
  boolean drained;
  /** The partition's count of drains when this batch was last drained (see RecordAccumulator's in-order window). */
  long sendIndex;
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
  /**
   * Idempotent producer: the last failed attempt was the expected answer to a batch sealed behind a known gap (a
   * sequence error after an earlier batch of the partition was refused, e.g. MESSAGE_TOO_LARGE), resent with the
   * bumped epoch; the producer does not warn about such a retry. Sender thread only.
   */
  boolean retryBehindKnownGap;

  private final AtomicBoolean done = new AtomicBoolean();
  private final CountDownLatch doneLatch = new CountDownLatch(1);

  private static final int[] NO_SPLIT_PATH = new int[0];

  ProducerBatch(String topic, int partition, long sequence, long createdMs, int initialCapacity) {
    this(topic, partition, sequence, NO_SPLIT_PATH, createdMs, initialCapacity, null);
  }

  /**
   * A batch that writes into {@code buffer} (a reused array, see {@link RecordBatchBuilder}'s constructor that takes
   * one), or into a new array of {@code initialCapacity} bytes when {@code buffer} is null.
   */
  ProducerBatch(String topic, int partition, long sequence, long createdMs, int initialCapacity, byte[] buffer) {
    this(topic, partition, sequence, NO_SPLIT_PATH, createdMs, initialCapacity, buffer);
  }

  private ProducerBatch(String topic, int partition, long sequence, int[] splitPath, long createdMs,
      int initialCapacity, byte[] buffer) {
    this.topic = topic;
    this.partition = partition;
    this.sequence = sequence;
    this.splitPath = splitPath;
    this.createdMs = createdMs;
    this.builder = buffer != null
        ? new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, buffer)
        : new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, initialCapacity);
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
    CompletableFuture<RecordMetadata> future = new RecordFuture(callback);
    append(timestamp, key, value, headers, future, key == null ? -1 : key.length, value == null ? -1 : value.length);
    return future;
  }

  private void append(
      long timestamp, byte[] key, byte[] value, Header[] headers, CompletableFuture<?> future, int keySize,
      int valueSize) {
    builder.append(timestamp, key, value, headers);
    int i = recordCount;
    if (i == futures.length) {
      int n = i * 2;
      futures = Arrays.copyOf(futures, n);
      timestamps = Arrays.copyOf(timestamps, n);
      keySizes = Arrays.copyOf(keySizes, n);
      valueSizes = Arrays.copyOf(valueSizes, n);
    }
    futures[i] = future;
    timestamps[i] = timestamp;
    keySizes[i] = keySize;
    valueSizes[i] = valueSize;
    recordCount = i + 1;
  }

  /**
   * The pieces this batch splits into after the leader refused it as too large, as Kafka's {@code
   * ProducerBatch.split}: its records, decoded from the built bytes (decompressed if need be), in their order, filled
   * into new open batches of at most {@code min(batchSize, half this batch's uncompressed size)} bytes each
   * (uncompressed, header included; a record larger than that goes alone). The half makes every split progress: a
   * batch of several records always gives at least two pieces, also when the topic's {@code max.message.bytes} is
   * below {@code batch.size} (where Kafka, which splits to {@code batch.size} only, rebuilds the same batch until
   * {@code delivery.timeout.ms}: KAFKA-8350).
   *
   * <p>Each piece holds the futures of its records (their callbacks run when the piece completes), keeps this batch's
   * {@link #createdMs} (so {@code delivery.timeout.ms} counts from the first append), starts with no attempt, is not
   * sealed, is {@link #full} and sorts at this batch's place: {@link #sequence} and {@link #splitPath} plus its index.
   * The buffer memory this batch holds is shared among the pieces (their {@link #reservedBytes} add up to it). This
   * batch is not changed: {@link #retire} it once the pieces are queued.
   *
   * @param batchSize the producer's {@code batch.size}
   * @return at least two batches
   * @throws IllegalStateException if the batch is not built or has fewer than two records
   * @throws io.tributary.record.InvalidRecordException if the built bytes do not decode (not for bytes built here)
   */
  List<ProducerBatch> split(int batchSize) {
    if (bytes == null || recordCount < 2) {
      throw new IllegalStateException("only a built batch of several records can be split: " + this);
    }
    int limit = Math.min(batchSize, uncompressedSizeInBytes / 2);
    List<ProducerBatch> pieces = new ArrayList<>();
    ProducerBatch piece = null;
    int reservedLeft = reservedBytes;
    Iterator<Record> records = RecordBatch.wrap(bytes).iterator();
    for (int i = 0; i < recordCount; i++) {
      Record r = records.next();
      Header[] headers = r.headers().isEmpty() ? null : r.headers().toArray(new Header[0]);
      if (piece == null || !piece.builder.hasRoomFor(limit, timestamps[i], r.key(), r.value(), headers)) {
        int[] path = Arrays.copyOf(splitPath, splitPath.length + 1);
        path[splitPath.length] = pieces.size();
        int capacity = Math.max(RecordBatch.HEADER_SIZE + r.sizeInBytes(), Math.min(limit, uncompressedSizeInBytes));
        piece = new ProducerBatch(topic, partition, sequence, path, createdMs, capacity, null);
        piece.full = true;
        pieces.add(piece);
      }
      piece.append(timestamps[i], r.key(), r.value(), headers, futures[i], keySizes[i], valueSizes[i]);
      int share = Math.min(reservedLeft, RecordBatchBuilder.estimateSizeInBytes(r.key(), r.value(), headers));
      piece.reservedBytes += share;
      reservedLeft -= share;
    }
    piece.reservedBytes += reservedLeft;
    return pieces;
  }

  /**
   * Marks this batch done in favour of the {@code pieces} it was split into, without completing any record's future
   * (the pieces hold them) and without giving back its buffer memory (the pieces did take it over): waiters of {@link
   * #awaitDone} are released and then find the pieces in {@link #splitInto()}. Call after {@link #tryMarkDone}
   * returned true.
   */
  void retire(List<ProducerBatch> pieces) {
    splitInto = List.copyOf(pieces);
    reservedBytes = 0;
    release();
  }

  /** The batches that replaced this one when it was split ({@link #retire}), or null. */
  List<ProducerBatch> splitInto() {
    return splitInto;
  }

  /**
   * Compares two batches of one partition by send order: by {@link #sequence}, then (pieces of split batches) by
   * {@link #splitPath}, lexicographically.
   */
  static int compareOrder(ProducerBatch a, ProducerBatch b) {
    return compareOrder(a.sequence, a.splitPath, b.sequence, b.splitPath);
  }

  /** {@link #compareOrder(ProducerBatch, ProducerBatch)} on the two fields. */
  static int compareOrder(long sequenceA, int[] pathA, long sequenceB, int[] pathB) {
    int c = Long.compare(sequenceA, sequenceB);
    return c != 0 ? c : Arrays.compare(pathA, pathB);
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
      int uncompressed = builder.estimatedSizeInBytes();
      bytes = builder.build(compressor);
      spareBuffer = builder.takeSpareBuffer();
      uncompressedSizeInBytes = uncompressed;
      builder = null;
    }
    return bytes;
  }

  /**
   * Once after {@link #close}: the array the records were written into when the built bytes are not that array (see
   * {@link RecordBatchBuilder#takeSpareBuffer()}), for a new batch to write into; else, and at later calls, null.
   */
  byte[] takeSpareBuffer() {
    byte[] b = spareBuffer;
    spareBuffer = null;
    return b;
  }

  /** The uncompressed size in bytes, header included, once built ({@link #close}); else 0. */
  int uncompressedSizeInBytes() {
    return uncompressedSizeInBytes;
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
    StringBuilder position = new StringBuilder().append(sequence);
    for (int i : splitPath) {
      position.append('.').append(i);
    }
    return "ProducerBatch(" + topic + "-" + partition + " #" + position + ", " + recordCount + " records"
        + (baseSequence >= 0 ? ", seq " + baseSequence + " epoch " + producerEpoch : "") + ")";
  }
}
