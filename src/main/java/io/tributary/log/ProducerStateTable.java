package io.tributary.log;

import io.tributary.protocol.ErrorCode;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The idempotent-producer state of one partition, as Kafka's {@code ProducerStateManager} (KIP-98): for every producer
 * id that appended to the partition, its producer epoch and the sequence numbers and offsets of its last {@value
 * #MAX_BATCHES_PER_PRODUCER} batches. The partition leader asks {@link #check} before appending a batch and calls
 * {@link #onAppended} after; followers and recovery replay call {@link #onAppended} for every batch of the log too, so
 * that the table is the same on every replica and a new leader recognises retries of batches its predecessor
 * appended.
 *
 * <h2>Rules of {@link #check}</h2>
 *
 * <ul>
 *   <li>producer id -1 ({@link #NO_PRODUCER_ID}, a non-idempotent batch): always {@link Result#APPEND}.
 *   <li>unknown producer id: {@link Result#APPEND} if the batch starts at sequence 0, or if the table may have lost
 *       state ({@link #stateMayBeIncomplete()}, set when {@link #truncateTo} forgot a producer or by {@link
 *       #markStateMayBeIncomplete()}); otherwise {@link Result#UNKNOWN_PRODUCER_ID} (e.g. the producer expired).
 *   <li>epoch lower than the known one: {@link Result#INVALID_PRODUCER_EPOCH} (a fenced, older incarnation).
 *   <li>epoch higher than the known one: the producer bumped its epoch, sequences restart: {@link Result#APPEND} if the
 *       batch starts at 0, else {@link Result#OUT_OF_ORDER_SEQUENCE}.
 *   <li>same epoch: a batch with exactly the base and last sequence of one of the remembered batches is a retry:
 *       {@link Result#DUPLICATE} with that batch's original offsets (the leader answers NONE with them and appends
 *       nothing); a batch starting right after the last remembered one ({@code last + 1}, wrapping from {@link
 *       Integer#MAX_VALUE} to 0) is {@link Result#APPEND}; anything else, including a retry older than the window of
 *       {@value #MAX_BATCHES_PER_PRODUCER} batches, is {@link Result#OUT_OF_ORDER_SEQUENCE} (as Kafka).
 * </ul>
 *
 * <p>Sequence numbers count records: a batch of n records with base sequence s covers s .. s+n-1, wrapping at {@link
 * Integer#MAX_VALUE} to 0 ({@link #incrementSequence}).
 *
 * <p>Not thread-safe: confined to the partition actor (leader or follower) that owns it, as the rest of the partition's
 * state. {@link #toBytes()} gives a copy for the partition snapshot.
 */
public final class ProducerStateTable {

  /** How many batches are remembered per producer (Kafka's window: at most 5 requests in flight per partition). */
  public static final int MAX_BATCHES_PER_PRODUCER = 5;

  /** Producer id of a batch from a non-idempotent producer. */
  public static final long NO_PRODUCER_ID = -1L;

  /** Default of Kafka's {@code producer.id.expiration.ms}: 1 day, in ms. */
  public static final long DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000L;

  /** First bytes of {@link #toBytes()}: "PST" and the format version. */
  private static final int MAGIC = 0x50535400;

  private static final byte FORMAT_VERSION = 1;
  private static final int HEADER_BYTES = 4 + 1 + 1 + 4; // magic, version, flags, producer count
  private static final int PRODUCER_BYTES = 8 + 2 + 8 + 1; // id, epoch, last timestamp, batch count
  private static final int BATCH_BYTES = 4 + 4 + 8 + 8; // first seq, last seq, first offset, last offset
  private static final int CRC_BYTES = 4;
  private static final byte FLAG_STATE_MAY_BE_INCOMPLETE = 1;

  /** What {@link #check} decided. */
  public enum Result {
    /** Append the batch. */
    APPEND,
    /** A retry of a batch already appended: append nothing, answer with {@link Check#baseOffset()}. */
    DUPLICATE,
    /** The batch's sequence does not follow the producer's last one: reject with OUT_OF_ORDER_SEQUENCE_NUMBER. */
    OUT_OF_ORDER_SEQUENCE,
    /** The batch's epoch is older than the producer's current one: reject with INVALID_PRODUCER_EPOCH. */
    INVALID_PRODUCER_EPOCH,
    /** No state for this producer and the batch does not start at 0: reject with UNKNOWN_PRODUCER_ID. */
    UNKNOWN_PRODUCER_ID;

    /**
     * The error code for the produce response: NONE for {@link #APPEND} and {@link #DUPLICATE} (a duplicate is
     * answered as a success with its original offsets), else the matching error.
     */
    public ErrorCode errorCode() {
      return switch (this) {
        case APPEND, DUPLICATE -> ErrorCode.NONE;
        case OUT_OF_ORDER_SEQUENCE -> ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER;
        case INVALID_PRODUCER_EPOCH -> ErrorCode.INVALID_PRODUCER_EPOCH;
        case UNKNOWN_PRODUCER_ID -> ErrorCode.UNKNOWN_PRODUCER_ID;
      };
    }
  }

  /**
   * The answer of {@link #check}.
   *
   * @param result what to do with the batch
   * @param baseOffset for {@link Result#DUPLICATE}: the offset of the original batch's first record; else -1
   * @param lastOffset for {@link Result#DUPLICATE}: the offset of the original batch's last record; else -1
   * @param message why, for errors (null for APPEND and DUPLICATE)
   */
  public record Check(Result result, long baseOffset, long lastOffset, String message) {
    private static final Check APPEND = new Check(Result.APPEND, -1L, -1L, null);

    /** The error code for the produce response (see {@link Result#errorCode()}). */
    public ErrorCode errorCode() {
      return result.errorCode();
    }
  }

  /** {@link #fromBytes} was given bytes that are not a table written by {@link #toBytes()}. */
  public static final class InvalidProducerStateException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    InvalidProducerStateException(String message) {
      super(message);
    }

    InvalidProducerStateException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** One remembered batch: its sequence range and offset range. */
  private record BatchMetadata(int firstSeq, int lastSeq, long firstOffset, long lastOffset) {}

  /** The state of one producer id. */
  private static final class ProducerEntry {
    short epoch;
    long lastTimestampMs;
    final ArrayDeque<BatchMetadata> batches = new ArrayDeque<>(MAX_BATCHES_PER_PRODUCER + 1);

    ProducerEntry(short epoch) {
      this.epoch = epoch;
    }
  }

  private final Map<Long, ProducerEntry> producers = new HashMap<>();
  private boolean stateMayBeIncomplete;

  /** An empty table. */
  public ProducerStateTable() {}

  /**
   * Decides what to do with a batch (see the class comment). Changes nothing.
   *
   * @param producerId the batch's producer id, or -1
   * @param producerEpoch the batch's producer epoch
   * @param baseSequence the sequence number of the batch's first record
   * @param lastSequence the sequence number of its last record ({@code incrementSequence(baseSequence, records -
   *     1)}, e.g. {@link io.tributary.record.RecordBatch#lastSequence()})
   * @return the decision; for DUPLICATE, the original offsets
   */
  public Check check(long producerId, short producerEpoch, int baseSequence, int lastSequence) {
    if (producerId == NO_PRODUCER_ID) {
      return Check.APPEND;
    }
    if (baseSequence < 0 || lastSequence < 0) {
      return error(
          Result.OUT_OF_ORDER_SEQUENCE,
          "invalid sequence numbers " + baseSequence + ".." + lastSequence + " for producer " + producerId);
    }
    ProducerEntry entry = producers.get(producerId);
    if (entry == null) {
      if (baseSequence == 0 || stateMayBeIncomplete) {
        return Check.APPEND;
      }
      return error(
          Result.UNKNOWN_PRODUCER_ID,
          "no state for producer " + producerId + " (expired or never seen) and its batch starts at sequence "
              + baseSequence + ", not 0");
    }
    if (producerEpoch < entry.epoch) {
      return error(
          Result.INVALID_PRODUCER_EPOCH,
          "producer " + producerId + " epoch " + producerEpoch + " is older than the current epoch " + entry.epoch);
    }
    if (producerEpoch > entry.epoch) {
      if (baseSequence == 0) {
        return Check.APPEND;
      }
      return error(
          Result.OUT_OF_ORDER_SEQUENCE,
          "producer " + producerId + " moved to epoch " + producerEpoch + " but its batch starts at sequence "
              + baseSequence + ", not 0");
    }
    for (BatchMetadata b : entry.batches) {
      if (b.firstSeq == baseSequence && b.lastSeq == lastSequence) {
        return new Check(Result.DUPLICATE, b.firstOffset, b.lastOffset, null);
      }
    }
    BatchMetadata last = entry.batches.peekLast();
    if (last == null) {
      // an entry always has batches (an emptied one is removed); kept for safety: behave as for a new epoch
      return baseSequence == 0 || stateMayBeIncomplete
          ? Check.APPEND
          : error(Result.OUT_OF_ORDER_SEQUENCE, "producer " + producerId + " has no batch to follow");
    }
    int expected = incrementSequence(last.lastSeq, 1);
    if (baseSequence == expected) {
      return Check.APPEND;
    }
    return error(
        Result.OUT_OF_ORDER_SEQUENCE,
        "out of order sequence number for producer " + producerId + " epoch " + producerEpoch + ": found "
            + baseSequence + ", expected " + expected);
  }

  /**
   * Records an appended batch. Call it for every batch of the log, in log order: on the leader after the append, on
   * followers when they append a replicated batch, and on recovery replay, so that all replicas agree. A batch with
   * producer id -1 is ignored. A batch with another epoch than the known one starts the producer's window afresh
   * (the log is the truth: the leader accepted it).
   *
   * @param producerId the batch's producer id, or -1
   * @param producerEpoch the batch's producer epoch
   * @param baseSequence the sequence number of its first record
   * @param lastSequence the sequence number of its last record
   * @param baseOffset the offset of its first record
   * @param lastOffset the offset of its last record
   * @param maxTimestampMs the batch's max timestamp (as Kafka, which expires producers by it) or its append time, ms
   */
  public void onAppended(
      long producerId,
      short producerEpoch,
      int baseSequence,
      int lastSequence,
      long baseOffset,
      long lastOffset,
      long maxTimestampMs) {
    if (producerId == NO_PRODUCER_ID) {
      return;
    }
    ProducerEntry entry = producers.get(producerId);
    if (entry == null) {
      entry = new ProducerEntry(producerEpoch);
      producers.put(producerId, entry);
    } else if (entry.epoch != producerEpoch) {
      entry.epoch = producerEpoch;
      entry.batches.clear();
    }
    entry.batches.addLast(new BatchMetadata(baseSequence, lastSequence, baseOffset, lastOffset));
    while (entry.batches.size() > MAX_BATCHES_PER_PRODUCER) {
      entry.batches.removeFirst();
    }
    entry.lastTimestampMs = maxTimestampMs;
  }

  /**
   * The log lost its suffix from {@code offset} on (a follower truncating to the new leader's log): forgets every
   * remembered batch with a last offset at or above it. A producer left without batches is forgotten, and the table
   * then {@linkplain #stateMayBeIncomplete() may be incomplete} (that producer's retries must be accepted at whatever
   * sequence they carry).
   *
   * @param offset the first offset that is no longer in the log
   */
  public void truncateTo(long offset) {
    Iterator<ProducerEntry> it = producers.values().iterator();
    while (it.hasNext()) {
      ProducerEntry entry = it.next();
      entry.batches.removeIf(b -> b.lastOffset >= offset);
      if (entry.batches.isEmpty()) {
        it.remove();
        stateMayBeIncomplete = true;
      }
    }
  }

  /**
   * Forgets the producers whose last append is {@code producerIdExpirationMs} or more old (Kafka's {@code
   * producer.id.expiration.ms}, default {@value #DEFAULT_PRODUCER_ID_EXPIRATION_MS}). A forgotten producer's next
   * batch must start at sequence 0 (else UNKNOWN_PRODUCER_ID).
   *
   * @param nowMs the current time, ms since the epoch (same clock as the timestamps given to {@link #onAppended})
   * @param producerIdExpirationMs the age after which a producer is forgotten, ms
   */
  public void expire(long nowMs, long producerIdExpirationMs) {
    producers.values().removeIf(e -> nowMs - e.lastTimestampMs >= producerIdExpirationMs);
  }

  /**
   * Whether producer state may be missing (a producer was forgotten by {@link #truncateTo}, or {@link
   * #markStateMayBeIncomplete()} was called): then an unknown producer id is accepted at any sequence instead of
   * UNKNOWN_PRODUCER_ID. Kept in {@link #toBytes()}.
   */
  public boolean stateMayBeIncomplete() {
    return stateMayBeIncomplete;
  }

  /**
   * Says that producer state may be missing, e.g. the partition was recovered without the table (an old snapshot
   * format) or a log prefix holding producer state was deleted: unknown producers are then accepted at any sequence.
   */
  public void markStateMayBeIncomplete() {
    stateMayBeIncomplete = true;
  }

  /** The number of producers with state. */
  public int size() {
    return producers.size();
  }

  /**
   * The epoch known for a producer id.
   *
   * @return the epoch, or -1 if the producer is unknown
   */
  public short producerEpoch(long producerId) {
    ProducerEntry entry = producers.get(producerId);
    return entry == null ? -1 : entry.epoch;
  }

  /**
   * The sequence number of the last record the producer appended in its current epoch.
   *
   * @return the sequence number, or -1 if the producer is unknown
   */
  public int lastSequence(long producerId) {
    ProducerEntry entry = producers.get(producerId);
    return entry == null || entry.batches.isEmpty() ? -1 : entry.batches.peekLast().lastSeq;
  }

  /**
   * {@code sequence + increment}, wrapping past {@link Integer#MAX_VALUE} to 0 (Kafka's {@code
   * DefaultRecordBatch.incrementSequence}).
   *
   * @param sequence a sequence number, ≥ 0
   * @param increment ≥ 0
   * @return the sequence number {@code increment} records later
   */
  public static int incrementSequence(int sequence, int increment) {
    if (sequence > Integer.MAX_VALUE - increment) {
      return increment - (Integer.MAX_VALUE - sequence) - 1;
    }
    return sequence + increment;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Binary form

  /**
   * The table as bytes, for the partition snapshot. Layout (big-endian): magic {@code "PST\0"} (int32), format version
   * (int8, 1), flags (int8: bit 0 = {@link #stateMayBeIncomplete()}), producer count (int32); per producer, in
   * ascending id order: id (int64), epoch (int16), last timestamp (int64, ms), batch count (int8, 1..{@value
   * #MAX_BATCHES_PER_PRODUCER}), and per batch, oldest first: first sequence (int32), last sequence (int32), first
   * offset (int64), last offset (int64); then a CRC32C (uint32) of everything before it. 19 + 24 bytes per batch per
   * producer.
   *
   * @return a new array
   */
  public byte[] toBytes() {
    List<Long> ids = new ArrayList<>(producers.keySet());
    ids.sort(null);
    int size = HEADER_BYTES + CRC_BYTES;
    for (ProducerEntry e : producers.values()) {
      size += PRODUCER_BYTES + BATCH_BYTES * e.batches.size();
    }
    ByteBuffer buf = ByteBuffer.allocate(size);
    buf.putInt(MAGIC);
    buf.put(FORMAT_VERSION);
    buf.put(stateMayBeIncomplete ? FLAG_STATE_MAY_BE_INCOMPLETE : 0);
    buf.putInt(ids.size());
    for (long id : ids) {
      ProducerEntry e = producers.get(id);
      buf.putLong(id);
      buf.putShort(e.epoch);
      buf.putLong(e.lastTimestampMs);
      buf.put((byte) e.batches.size());
      for (BatchMetadata b : e.batches) {
        buf.putInt(b.firstSeq);
        buf.putInt(b.lastSeq);
        buf.putLong(b.firstOffset);
        buf.putLong(b.lastOffset);
      }
    }
    CRC32C crc = new CRC32C();
    crc.update(buf.array(), 0, buf.position());
    buf.putInt((int) crc.getValue());
    return buf.array();
  }

  /**
   * Reads a table written by {@link #toBytes()}.
   *
   * @param bytes the bytes
   * @return a new table
   * @throws InvalidProducerStateException (an {@link IllegalArgumentException}) if the bytes are null, truncated,
   *     have trailing bytes, a wrong magic, an unknown version, a CRC mismatch, or values no table can hold
   */
  public static ProducerStateTable fromBytes(byte[] bytes) {
    if (bytes == null) {
      throw new InvalidProducerStateException("producer state bytes are null");
    }
    if (bytes.length < HEADER_BYTES + CRC_BYTES) {
      throw new InvalidProducerStateException("producer state is " + bytes.length + " bytes, too short");
    }
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    try {
      int magic = buf.getInt();
      if (magic != MAGIC) {
        throw new InvalidProducerStateException("not a producer state table (magic " + Integer.toHexString(magic) + ")");
      }
      byte version = buf.get();
      if (version != FORMAT_VERSION) {
        throw new InvalidProducerStateException("unknown producer state format version " + version);
      }
      CRC32C crc = new CRC32C();
      crc.update(bytes, 0, bytes.length - CRC_BYTES);
      int stored = ByteBuffer.wrap(bytes, bytes.length - CRC_BYTES, CRC_BYTES).getInt();
      if (stored != (int) crc.getValue()) {
        throw new InvalidProducerStateException("producer state CRC mismatch (corrupt bytes)");
      }
      byte flags = buf.get();
      if ((flags & ~FLAG_STATE_MAY_BE_INCOMPLETE) != 0) {
        throw new InvalidProducerStateException("unknown producer state flags " + flags);
      }
      int count = buf.getInt();
      long maxCount = (bytes.length - HEADER_BYTES - CRC_BYTES) / (PRODUCER_BYTES + BATCH_BYTES);
      if (count < 0 || count > maxCount) {
        throw new InvalidProducerStateException("invalid producer count " + count);
      }
      ProducerStateTable table = new ProducerStateTable();
      table.stateMayBeIncomplete = (flags & FLAG_STATE_MAY_BE_INCOMPLETE) != 0;
      for (int i = 0; i < count; i++) {
        long id = buf.getLong();
        if (id < 0) {
          throw new InvalidProducerStateException("invalid producer id " + id);
        }
        ProducerEntry entry = new ProducerEntry(buf.getShort());
        entry.lastTimestampMs = buf.getLong();
        int batches = buf.get();
        if (batches < 1 || batches > MAX_BATCHES_PER_PRODUCER) {
          throw new InvalidProducerStateException("invalid batch count " + batches + " for producer " + id);
        }
        for (int j = 0; j < batches; j++) {
          int firstSeq = buf.getInt();
          int lastSeq = buf.getInt();
          long firstOffset = buf.getLong();
          long lastOffset = buf.getLong();
          if (firstSeq < 0 || lastSeq < 0 || firstOffset < 0 || lastOffset < firstOffset) {
            throw new InvalidProducerStateException("invalid batch of producer " + id);
          }
          entry.batches.addLast(new BatchMetadata(firstSeq, lastSeq, firstOffset, lastOffset));
        }
        if (table.producers.put(id, entry) != null) {
          throw new InvalidProducerStateException("producer " + id + " appears twice");
        }
      }
      if (buf.remaining() != CRC_BYTES) {
        throw new InvalidProducerStateException(
            "producer state has " + (buf.remaining() - CRC_BYTES) + " unexpected trailing bytes");
      }
      return table;
    } catch (BufferUnderflowException e) {
      throw new InvalidProducerStateException("producer state is truncated", e);
    }
  }

  @Override
  public String toString() {
    return "ProducerStateTable(" + producers.size() + " producers"
        + (stateMayBeIncomplete ? ", may be incomplete" : "") + ")";
  }

  private static Check error(Result result, String message) {
    return new Check(result, -1L, -1L, message);
  }
}
