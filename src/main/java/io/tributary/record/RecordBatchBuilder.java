package io.tributary.record;

import io.tributary.protocol.ErrorCode;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Builds one record batch v2 (layout in {@link RecordBatch}) into a growable buffer, as Kafka's {@code
 * MemoryRecordsBuilder} does for magic 2: records are encoded uncompressed as they are appended; {@link
 * #build(Compression.Compressor)} compresses the records section once, at the end.
 *
 * <p>Records are encoded as they are appended: the first record's timestamp becomes the batch's baseTimestamp, each
 * record stores its timestamp as a delta from it (so timestamps may go backwards), the batch's maxTimestamp is the
 * largest one, and offset deltas are 0, 1, 2, ... {@link #build()} writes the header and the CRC32C and returns the
 * batch. Producers build with base offset 0; the partition leader later assigns the real offsets with {@link
 * RecordBatch#setBaseOffset}.
 *
 * <p>Typical use, as a producer accumulating up to {@code batch.size}:
 *
 * <pre>{@code
 * RecordBatchBuilder b = new RecordBatchBuilder();
 * while (b.hasRoomFor(batchSize, ts, key, value, headers)) b.append(ts, key, value, headers);
 * byte[] batch = b.build();
 * }</pre>
 *
 * <p>Key, value and header value arrays are copied into the buffer during {@code append}; the caller may reuse them
 * afterwards. This class is not thread-safe. A builder is single-use: after {@link #build()} it accepts nothing more.
 */
public final class RecordBatchBuilder {

  /** Default initial buffer size in bytes. */
  public static final int DEFAULT_INITIAL_CAPACITY = 1024;

  /** Largest array the JVM reliably allocates. */
  private static final int MAX_ARRAY_SIZE = Integer.MAX_VALUE - 8;

  /**
   * Upper bound of a record's fixed fields: attributes (1), timestampDelta (at most a 10-byte varlong), offsetDelta (at
   * most a 5-byte varint).
   */
  private static final int MAX_FIXED_FIELDS_SIZE = 1 + ByteUtils.MAX_VARLONG_SIZE + ByteUtils.MAX_VARINT_SIZE;

  private final long baseOffset;
  private long producerId;
  private short producerEpoch;
  private int baseSequence;
  private final int partitionLeaderEpoch;

  private byte[] buf;
  /** The written-into array after a build that did not return it ({@link #takeSpareBuffer}). */
  private byte[] spare;
  private int pos = RecordBatch.RECORDS_OFFSET;
  private int count;
  private long baseTimestamp = RecordBatch.NO_TIMESTAMP;
  private long maxTimestamp = RecordBatch.NO_TIMESTAMP;
  private boolean built;

  /**
   * A builder for a producer without idempotence: base offset 0, producerId -1, producerEpoch -1, baseSequence -1,
   * partitionLeaderEpoch -1.
   */
  public RecordBatchBuilder() {
    this(
        0L,
        RecordBatch.NO_PRODUCER_ID,
        RecordBatch.NO_PRODUCER_EPOCH,
        RecordBatch.NO_SEQUENCE,
        RecordBatch.NO_PARTITION_LEADER_EPOCH);
  }

  /**
   * A builder with the given header fields and a {@value #DEFAULT_INITIAL_CAPACITY}-byte initial buffer.
   *
   * @param baseOffset the offset of the first record (usually 0; the leader assigns offsets)
   * @param producerId the idempotent producer's id, or -1
   * @param producerEpoch the idempotent producer's epoch, or -1
   * @param baseSequence the sequence number of the first record, or -1
   * @param partitionLeaderEpoch the leader epoch, or -1 (the leader sets it)
   */
  public RecordBatchBuilder(
      long baseOffset, long producerId, short producerEpoch, int baseSequence, int partitionLeaderEpoch) {
    this(baseOffset, producerId, producerEpoch, baseSequence, partitionLeaderEpoch, DEFAULT_INITIAL_CAPACITY);
  }

  /**
   * A builder with the given header fields and initial buffer size; sizing the buffer to the expected batch avoids
   * growing it.
   *
   * @param initialCapacityBytes initial buffer size in bytes; raised to {@link RecordBatch#HEADER_SIZE} if smaller
   * @throws IllegalArgumentException if {@code initialCapacityBytes} is negative or too large for an array
   */
  public RecordBatchBuilder(
      long baseOffset,
      long producerId,
      short producerEpoch,
      int baseSequence,
      int partitionLeaderEpoch,
      int initialCapacityBytes) {
    this(baseOffset, producerId, producerEpoch, baseSequence, partitionLeaderEpoch, newBuffer(initialCapacityBytes));
  }

  private static byte[] newBuffer(int initialCapacityBytes) {
    if (initialCapacityBytes < 0 || initialCapacityBytes > MAX_ARRAY_SIZE) {
      throw new IllegalArgumentException("invalid initial capacity " + initialCapacityBytes);
    }
    return new byte[Math.max(initialCapacityBytes, RecordBatch.HEADER_SIZE)];
  }

  /**
   * A builder that writes into {@code buffer}, an array no one else reads or writes until this builder is built (for
   * instance one given back by an earlier builder's {@link #takeSpareBuffer()}, as Kafka's producer reuses {@code
   * batch.size} buffers from its {@code BufferPool}). Its contents do not matter: the builder writes every byte of the
   * batch it builds (the header's fields and the records after it) and reads none it did not write. It grows (into a
   * new array) as the other constructor's buffer does.
   *
   * @param buffer the array to write into, at least {@link RecordBatch#HEADER_SIZE} bytes
   * @throws IllegalArgumentException if {@code buffer} is shorter than a batch header
   */
  public RecordBatchBuilder(
      long baseOffset,
      long producerId,
      short producerEpoch,
      int baseSequence,
      int partitionLeaderEpoch,
      byte[] buffer) {
    if (buffer.length < RecordBatch.HEADER_SIZE) {
      throw new IllegalArgumentException("a buffer of " + buffer.length + " bytes cannot hold a batch header");
    }
    this.baseOffset = baseOffset;
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.baseSequence = baseSequence;
    this.partitionLeaderEpoch = partitionLeaderEpoch;
    this.buf = buffer;
  }

  /**
   * After {@link #build()} or {@link #build(Compression.Compressor)}: the array the builder wrote into, when the built
   * batch is not that array (it was copied to its exact size, or compressed into a new array), so that nothing refers
   * to it any more and it can be given to a new builder; null when the built batch is the array itself, before the
   * build, and at every call after the first.
   */
  public byte[] takeSpareBuffer() {
    byte[] b = spare;
    spare = null;
    return b;
  }

  /**
   * Whether a record fits within {@code batchSizeLimit}, as Kafka's {@code MemoryRecordsBuilder.hasRoomFor}: an empty
   * builder always has room (one record larger than the limit still goes out alone, the broker then judges it against
   * its own maximum); otherwise the batch size after appending it must be at most the limit. Exact, not an estimate.
   *
   * @param batchSizeLimit the largest batch size in bytes (e.g. the producer's {@code batch.size})
   * @param timestamp the record's timestamp in ms (affects the size of its delta)
   * @param key the key, or null
   * @param value the value, or null
   * @param headers the headers, or null for none
   * @return false once the builder has been built
   */
  public boolean hasRoomFor(int batchSizeLimit, long timestamp, byte[] key, byte[] value, Header[] headers) {
    if (built) {
      return false;
    }
    if (count == 0) {
      return true;
    }
    long bodySize = bodySize(count, timestamp - baseTimestamp, key, value, headers);
    long recordSize = bodySize + ByteUtils.sizeOfVarint((int) Math.min(bodySize, Integer.MAX_VALUE));
    return pos + recordSize <= batchSizeLimit;
  }

  /**
   * Appends a record and returns its offset delta (0 for the first record, then 1, 2, ...).
   *
   * @param timestamp the record's timestamp in ms since the epoch, or -1 for none
   * @param key the key, or null; copied
   * @param value the value, or null; copied
   * @param headers the headers in order, or null for none; each non-null; values copied
   * @return the record's offset delta, its index in the batch
   * @throws IllegalArgumentException if {@code timestamp} is negative and not -1 (as Kafka)
   * @throws NullPointerException if a header is null
   * @throws InvalidRecordException ({@link ErrorCode#MESSAGE_TOO_LARGE}) if the batch would exceed the largest array
   * @throws IllegalStateException if {@link #build()} was already called
   */
  public int append(long timestamp, byte[] key, byte[] value, Header[] headers) {
    if (built) {
      throw new IllegalStateException("the batch has already been built");
    }
    if (timestamp < 0 && timestamp != RecordBatch.NO_TIMESTAMP) {
      throw new IllegalArgumentException("invalid negative timestamp " + timestamp);
    }
    int offsetDelta = count;
    long base = offsetDelta == 0 ? timestamp : baseTimestamp;
    long timestampDelta = timestamp - base;
    long body = bodySize(offsetDelta, timestampDelta, key, value, headers);
    if (body > MAX_ARRAY_SIZE) {
      throw tooLarge(body);
    }
    int bodySize = (int) body;
    long needed = (long) pos + ByteUtils.sizeOfVarint(bodySize) + bodySize;
    ensureCapacity(needed);

    byte[] b = buf;
    int p = ByteUtils.writeVarint(bodySize, b, pos);
    b[p++] = 0; // record attributes, unused
    p = ByteUtils.writeVarlong(timestampDelta, b, p);
    p = ByteUtils.writeVarint(offsetDelta, b, p);
    p = writeNullableBytes(key, b, p);
    p = writeNullableBytes(value, b, p);
    if (headers == null) {
      b[p++] = 0; // varint 0
    } else {
      p = ByteUtils.writeVarint(headers.length, b, p);
      for (Header header : headers) {
        String headerKey = header.key();
        p = ByteUtils.writeVarint(ByteUtils.utf8Length(headerKey), b, p);
        p = ByteUtils.writeUtf8(headerKey, b, p);
        p = writeNullableBytes(header.value(), b, p);
      }
    }
    pos = p;

    if (offsetDelta == 0) {
      baseTimestamp = timestamp;
    }
    maxTimestamp = Math.max(maxTimestamp, timestamp);
    count = offsetDelta + 1;
    return offsetDelta;
  }

  /**
   * Sets the idempotent producer's fields of the header (they are covered by the CRC, so they must be set before
   * {@link #build()}): an idempotent producer assigns the base sequence when it seals the batch for its first send.
   *
   * @param producerId the producer id, or -1
   * @param producerEpoch the producer epoch, or -1
   * @param baseSequence the sequence number of the first record, or -1
   * @throws IllegalStateException if the batch was already built
   */
  public void setProducerState(long producerId, short producerEpoch, int baseSequence) {
    if (built) {
      throw new IllegalStateException("the batch has already been built");
    }
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.baseSequence = baseSequence;
  }

  /**
   * An upper bound of the encoded size of one record with these fields, including its length varint, whatever its
   * timestamp and offset delta (as Kafka's {@code DefaultRecord.recordSizeUpperBound}). Add {@link
   * RecordBatch#HEADER_SIZE} once per batch.
   *
   * @param key the key, or null
   * @param value the value, or null
   * @param headers the headers, or null for none
   * @return the bound in bytes, saturated at {@link Integer#MAX_VALUE}
   * @throws NullPointerException if a header is null
   */
  public static int estimateSizeInBytes(byte[] key, byte[] value, Header[] headers) {
    long body = MAX_FIXED_FIELDS_SIZE + fieldsSize(key, value, headers);
    long size = body + ByteUtils.sizeOfVarint((int) Math.min(body, Integer.MAX_VALUE));
    return (int) Math.min(size, Integer.MAX_VALUE);
  }

  /**
   * The size of the batch built so far, in bytes, including the header: exactly the length of the array {@link
   * #build()} would return now.
   */
  public int estimatedSizeInBytes() {
    return pos;
  }

  /** The number of records appended so far. */
  public int recordCount() {
    return count;
  }

  /** Whether no record has been appended yet. */
  public boolean isEmpty() {
    return count == 0;
  }

  /**
   * Finishes the batch: writes the header fields, computes the CRC32C, and returns an array of exactly {@link
   * #estimatedSizeInBytes()} bytes (the internal buffer itself when it is exactly full, else one copy). The builder
   * cannot be used afterwards.
   *
   * @return the batch, ready for {@link RecordBatch#validate} / {@link RecordBatch#wrap}
   * @throws IllegalStateException if no record was appended (a v2 batch from a producer holds at least one) or the
   *     batch was already built
   */
  public byte[] build() {
    checkBuildable();
    byte[] b = buf;
    writeHeader(b, pos, RecordBatch.COMPRESSION_NONE);
    built = true;
    buf = null;
    if (pos == b.length) {
      return b;
    }
    spare = b;
    return Arrays.copyOf(b, pos);
  }

  private void checkBuildable() {
    if (built) {
      throw new IllegalStateException("the batch has already been built");
    }
    if (count == 0) {
      throw new IllegalStateException("a record batch needs at least one record");
    }
  }

  /** Writes the header of a batch of {@code size} bytes into {@code b[0, HEADER_SIZE)}, then the CRC over it all. */
  private void writeHeader(byte[] b, int size, int codec) {
    ByteUtils.writeLong(baseOffset, b, RecordBatch.BASE_OFFSET_OFFSET);
    ByteUtils.writeInt(size - RecordBatch.LOG_OVERHEAD, b, RecordBatch.LENGTH_OFFSET);
    ByteUtils.writeInt(partitionLeaderEpoch, b, RecordBatch.PARTITION_LEADER_EPOCH_OFFSET);
    b[RecordBatch.MAGIC_OFFSET] = RecordBatch.MAGIC;
    ByteUtils.writeShort((short) codec, b, RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeInt(count - 1, b, RecordBatch.LAST_OFFSET_DELTA_OFFSET);
    ByteUtils.writeLong(baseTimestamp, b, RecordBatch.BASE_TIMESTAMP_OFFSET);
    ByteUtils.writeLong(maxTimestamp, b, RecordBatch.MAX_TIMESTAMP_OFFSET);
    ByteUtils.writeLong(producerId, b, RecordBatch.PRODUCER_ID_OFFSET);
    ByteUtils.writeShort(producerEpoch, b, RecordBatch.PRODUCER_EPOCH_OFFSET);
    ByteUtils.writeInt(baseSequence, b, RecordBatch.BASE_SEQUENCE_OFFSET);
    ByteUtils.writeInt(count, b, RecordBatch.RECORDS_COUNT_OFFSET);
    CRC32C crc = new CRC32C();
    crc.update(b, RecordBatch.ATTRIBUTES_OFFSET, size - RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeUnsignedInt(crc.getValue(), b, RecordBatch.CRC_OFFSET);
  }

  /**
   * Finishes the batch as {@link #build()}, with its records section compressed by {@code compressor} as one stream
   * and the codec in the attributes; the header is written uncompressed and the CRC32C covers the compressed bytes.
   * The sizes seen by {@link #hasRoomFor} and {@link #estimatedSizeInBytes()} are the uncompressed ones; the result
   * is usually smaller.
   *
   * @param compressor the codec to use, or {@code null} for none (then exactly {@link #build()})
   * @return the batch, ready for {@link RecordBatch#validate} / {@link RecordBatch#wrap}
   * @throws IllegalStateException as {@link #build()}
   * @throws InvalidRecordException ({@link ErrorCode#MESSAGE_TOO_LARGE}) if the output would not fit an array
   */
  public byte[] build(Compression.Compressor compressor) {
    if (compressor == null) {
      return build();
    }
    checkBuildable();
    byte[] out = compressor.compress(buf, RecordBatch.RECORDS_OFFSET, pos - RecordBatch.RECORDS_OFFSET,
        RecordBatch.HEADER_SIZE);
    writeHeader(out, out.length, compressor.type().id);
    built = true;
    spare = buf;
    buf = null;
    return out;
  }

  /**
   * {@link #build()} wrapped as a {@link RecordBatch} (no second check: the builder wrote it).
   *
   * @throws IllegalStateException as {@link #build()}
   */
  public RecordBatch buildBatch() {
    return RecordBatch.wrap(build());
  }

  // ---------------------------------------------------------------------------------------------------------------

  private static long bodySize(
      int offsetDelta, long timestampDelta, byte[] key, byte[] value, Header[] headers) {
    return 1L
        + ByteUtils.sizeOfVarlong(timestampDelta)
        + ByteUtils.sizeOfVarint(offsetDelta)
        + fieldsSize(key, value, headers);
  }

  /** Size of key, value and headers with their length varints. */
  private static long fieldsSize(byte[] key, byte[] value, Header[] headers) {
    long size = nullableBytesSize(key) + nullableBytesSize(value);
    if (headers == null) {
      return size + 1;
    }
    size += ByteUtils.sizeOfVarint(headers.length);
    for (Header header : headers) {
      int keyLength = ByteUtils.utf8Length(header.key());
      size += ByteUtils.sizeOfVarint(keyLength) + keyLength + nullableBytesSize(header.value());
    }
    return size;
  }

  private static long nullableBytesSize(byte[] bytes) {
    return bytes == null ? 1 : ByteUtils.sizeOfVarint(bytes.length) + (long) bytes.length;
  }

  private static int writeNullableBytes(byte[] bytes, byte[] b, int p) {
    if (bytes == null) {
      return ByteUtils.writeVarint(-1, b, p);
    }
    p = ByteUtils.writeVarint(bytes.length, b, p);
    System.arraycopy(bytes, 0, b, p, bytes.length);
    return p + bytes.length;
  }

  private void ensureCapacity(long needed) {
    if (needed <= buf.length) {
      return;
    }
    if (needed > MAX_ARRAY_SIZE) {
      throw tooLarge(needed);
    }
    int newCapacity = (int) Math.min(MAX_ARRAY_SIZE, Math.max(needed, 2L * buf.length));
    buf = Arrays.copyOf(buf, newCapacity);
  }

  private static InvalidRecordException tooLarge(long bytes) {
    return new InvalidRecordException(
        ErrorCode.MESSAGE_TOO_LARGE, "record batch would grow to " + bytes + " bytes, more than an array holds");
  }
}
