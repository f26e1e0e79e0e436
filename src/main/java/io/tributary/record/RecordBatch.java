package io.tributary.record;

import io.tributary.protocol.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.zip.CRC32C;

/**
 * A view over a {@code byte[]} that holds exactly one record batch in Kafka's record batch v2 format (magic 2), the
 * unit Tributary appends, journals, replicates and serves, byte for byte as Kafka's {@code
 * org.apache.kafka.common.record.DefaultRecordBatch}.
 *
 * <h2>Batch layout</h2>
 *
 * All fixed-width integers are big-endian. Positions are byte offsets from the start of the array.
 *
 * <pre>
 * position  size  field                 constant
 * 0         8     baseOffset            {@link #BASE_OFFSET_OFFSET}            int64, offset of the first record
 * 8         4     length                {@link #LENGTH_OFFSET}                 int32, bytes after this field
 *                                                                              (= total size - {@link #LOG_OVERHEAD})
 * 12        4     partitionLeaderEpoch  {@link #PARTITION_LEADER_EPOCH_OFFSET} int32, -1 if not set
 * 16        1     magic                 {@link #MAGIC_OFFSET}                  int8, always 2
 * 17        4     crc                   {@link #CRC_OFFSET}                    uint32, CRC32C of bytes
 *                                                                              [{@link #ATTRIBUTES_OFFSET}, end)
 * 21        2     attributes            {@link #ATTRIBUTES_OFFSET}             int16, see below
 * 23        4     lastOffsetDelta       {@link #LAST_OFFSET_DELTA_OFFSET}      int32, recordCount - 1
 * 27        8     baseTimestamp         {@link #BASE_TIMESTAMP_OFFSET}         int64 ms, first record's timestamp
 * 35        8     maxTimestamp          {@link #MAX_TIMESTAMP_OFFSET}          int64 ms, largest record timestamp
 * 43        8     producerId            {@link #PRODUCER_ID_OFFSET}            int64, -1 if none
 * 51        2     producerEpoch         {@link #PRODUCER_EPOCH_OFFSET}         int16, -1 if none
 * 53        4     baseSequence          {@link #BASE_SEQUENCE_OFFSET}          int32, -1 if none
 * 57        4     recordsCount          {@link #RECORDS_COUNT_OFFSET}          int32
 * 61        ...   records               {@link #RECORDS_OFFSET} = {@link #HEADER_SIZE}
 * </pre>
 *
 * Attributes: bits 0-2 compression ({@link #COMPRESSION_NONE} 0, {@link #COMPRESSION_GZIP} 1, {@link
 * #COMPRESSION_SNAPPY} 2, {@link #COMPRESSION_LZ4} 3, {@link #COMPRESSION_ZSTD} 4), bit 3 timestamp type (0 create
 * time, 1 log-append time), bit 4 transactional, bit 5 control batch; other bits are 0.
 *
 * <h2>Record layout</h2>
 *
 * The records section (from {@link #RECORDS_OFFSET} to the end) holds the records back to back. With a codec other
 * than none it is instead one compressed stream of exactly those bytes (formats in {@link Compression}); the header
 * stays uncompressed, and the CRC covers the compressed bytes. Every varint/varlong is zigzag-encoded as in {@link
 * ByteUtils}:
 *
 * <pre>
 * length          varint   bytes of the record after this field
 * attributes      int8     unused, 0
 * timestampDelta  varlong  timestamp - baseTimestamp (ms)
 * offsetDelta     varint   offset - baseOffset; the record's index in the batch
 * keyLength       varint   -1 for a null key
 * key             bytes
 * valueLength     varint   -1 for a null value
 * value           bytes
 * headerCount     varint
 * headers         per header: keyLength varint (&gt;= 0), key UTF-8 bytes,
 *                             valueLength varint (-1 for null), value bytes
 * </pre>
 *
 * <h2>Errors</h2>
 *
 * Anything that shows the bytes were damaged (too short, a length field that disagrees with the array, a wrong magic,
 * a CRC mismatch) throws {@link CorruptRecordException} ({@link ErrorCode#CORRUPT_MESSAGE}, retriable). Content that
 * passes the CRC but breaks the format (record fields that overrun or underrun their lengths, counts that disagree, a
 * compressed section that does not decompress, an unsupported codec) throws {@link InvalidRecordException} ({@link
 * ErrorCode#INVALID_RECORD}, {@link
 * ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}, {@link ErrorCode#MESSAGE_TOO_LARGE}). No other exception escapes from
 * malformed input: every read is bounds-checked.
 *
 * <h2>Ownership and thread-safety</h2>
 *
 * The view does not copy the array ({@link #bytes()} returns it). Nothing changes it except {@link #setBaseOffset} and
 * {@link #setPartitionLeaderEpoch}, which the partition leader calls once, before it publishes the batch. After that
 * the batch may be read by any number of threads, given a safe publication (e.g. an actor message). This class is not
 * thread-safe while being mutated.
 */
public final class RecordBatch implements Iterable<Record> {

  /** Position of baseOffset (int64). */
  public static final int BASE_OFFSET_OFFSET = 0;
  /** Position of the length field (int32): the number of bytes after it, i.e. total size - {@link #LOG_OVERHEAD}. */
  public static final int LENGTH_OFFSET = 8;
  /** Bytes before and including the length field: baseOffset + length, as Kafka's {@code LOG_OVERHEAD}. */
  public static final int LOG_OVERHEAD = 12;
  /** Position of partitionLeaderEpoch (int32). */
  public static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
  /** Position of magic (int8, {@link #MAGIC}). */
  public static final int MAGIC_OFFSET = 16;
  /** Position of the CRC (uint32, CRC32C over {@link #ATTRIBUTES_OFFSET} to the end of the batch). */
  public static final int CRC_OFFSET = 17;
  /** Position of attributes (int16). */
  public static final int ATTRIBUTES_OFFSET = 21;
  /** Position of lastOffsetDelta (int32). */
  public static final int LAST_OFFSET_DELTA_OFFSET = 23;
  /** Position of baseTimestamp (int64, ms). */
  public static final int BASE_TIMESTAMP_OFFSET = 27;
  /** Position of maxTimestamp (int64, ms). */
  public static final int MAX_TIMESTAMP_OFFSET = 35;
  /** Position of producerId (int64). */
  public static final int PRODUCER_ID_OFFSET = 43;
  /** Position of producerEpoch (int16). */
  public static final int PRODUCER_EPOCH_OFFSET = 51;
  /** Position of baseSequence (int32). */
  public static final int BASE_SEQUENCE_OFFSET = 53;
  /** Position of recordsCount (int32). */
  public static final int RECORDS_COUNT_OFFSET = 57;
  /** Position of the first record. */
  public static final int RECORDS_OFFSET = 61;
  /** Size of the batch header in bytes (= {@link #RECORDS_OFFSET}); the smallest possible batch array. */
  public static final int HEADER_SIZE = RECORDS_OFFSET;

  /** The only magic value this format has. */
  public static final byte MAGIC = 2;

  /** Attribute bits holding the compression codec. */
  public static final int COMPRESSION_CODEC_MASK = 0x07;
  /** Attribute bit set when timestamps are log-append time (else create time). */
  public static final int TIMESTAMP_TYPE_MASK = 0x08;
  /** Attribute bit set for a transactional batch. */
  public static final int TRANSACTIONAL_FLAG_MASK = 0x10;
  /** Attribute bit set for a control batch (transaction markers). */
  public static final int CONTROL_FLAG_MASK = 0x20;

  /** Compression codec 0: none. */
  public static final int COMPRESSION_NONE = 0;
  /** Compression codec 1: gzip. */
  public static final int COMPRESSION_GZIP = 1;
  /** Compression codec 2: snappy (not supported: {@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}). */
  public static final int COMPRESSION_SNAPPY = 2;
  /** Compression codec 3: lz4. */
  public static final int COMPRESSION_LZ4 = 3;
  /** Compression codec 4: zstd. */
  public static final int COMPRESSION_ZSTD = 4;

  /** Value of producerId when there is none. */
  public static final long NO_PRODUCER_ID = -1L;
  /** Value of producerEpoch when there is none. */
  public static final short NO_PRODUCER_EPOCH = -1;
  /** Value of baseSequence when there is none. */
  public static final int NO_SEQUENCE = -1;
  /** Value of partitionLeaderEpoch when not set. */
  public static final int NO_PARTITION_LEADER_EPOCH = -1;
  /** A timestamp that is not set. */
  public static final long NO_TIMESTAMP = -1L;

  /** Smallest encoded record: length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headerCount. */
  static final int MIN_RECORD_SIZE = 7;

  private final byte[] bytes;

  private RecordBatch(byte[] bytes) {
    this.bytes = bytes;
  }

  /**
   * Wraps bytes already known to be a batch (e.g. read back from the local journal) with only the cheap frame checks:
   * at least {@link #HEADER_SIZE} bytes, length field equal to {@code bytes.length - LOG_OVERHEAD}, magic 2. The CRC
   * and the records are not checked; use {@link #validate} for bytes from the network.
   *
   * @param bytes exactly one batch, from index 0 to {@code bytes.length}; not copied
   * @return a view over {@code bytes}
   * @throws CorruptRecordException if a frame check fails
   * @throws NullPointerException if {@code bytes} is null
   */
  public static RecordBatch wrap(byte[] bytes) {
    checkFrame(bytes);
    return new RecordBatch(bytes);
  }

  /**
   * Wraps and fully validates bytes received from a producer or another node, as Kafka's broker does before it
   * appends: the frame checks of {@link #wrap}, the CRC32C, a supported codec, {@code recordsCount >= 1} and {@code ==
   * lastOffsetDelta + 1}, and every record parses with {@code offsetDelta} equal to its index and consumes exactly its
   * declared length, the last one ending at the end of the records section. Allocates no per-record objects.
   *
   * <p>A compressed batch is decompressed to check its records the same way (as Kafka's broker does for compressed
   * batches), into a scratch buffer kept per thread, and nothing else is kept: the batch is stored as the producer
   * compressed it, never recompressed. Cost, measured with {@code CompressionMicroBench} (src/test) on 64 KiB of
   * 100-byte records (595 per batch), JDK 17, 2 cores: validate takes ~12 µs uncompressed, ~45 µs (lz4) / ~65 µs
   * (zstd) / ~45 µs (gzip) when every record is the same (what the perf tools send), ~105 µs (lz4) / ~65 µs (zstd) /
   * ~375 µs (gzip) for different random letters per record; small next to a journal write of the same batch (1-3 ms),
   * and in exchange a producer cannot store a batch that no consumer could read.
   *
   * @param bytes exactly one batch, from index 0 to {@code bytes.length}; not copied
   * @return a view over {@code bytes}
   * @throws CorruptRecordException ({@link ErrorCode#CORRUPT_MESSAGE}) if a frame check or the CRC fails
   * @throws InvalidRecordException ({@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}) if the codec is snappy or an
   *     unassigned id, or ({@link ErrorCode#INVALID_RECORD}) if the counts or a record are malformed or the compressed
   *     section does not decompress
   * @throws NullPointerException if {@code bytes} is null
   */
  public static RecordBatch validate(byte[] bytes) {
    return validate(bytes, Integer.MAX_VALUE);
  }

  /**
   * As {@link #validate(byte[])}, and also rejects a batch larger than {@code maxBatchSizeBytes}, as Kafka's broker
   * does with {@code message.max.bytes}.
   *
   * @param bytes exactly one batch; not copied
   * @param maxBatchSizeBytes the largest accepted {@code bytes.length}, in bytes
   * @return a view over {@code bytes}
   * @throws InvalidRecordException ({@link ErrorCode#MESSAGE_TOO_LARGE}) if {@code bytes.length > maxBatchSizeBytes};
   *     otherwise as {@link #validate(byte[])}
   * @throws CorruptRecordException as {@link #validate(byte[])}
   */
  public static RecordBatch validate(byte[] bytes, int maxBatchSizeBytes) {
    validate(bytes, 0, bytes.length, maxBatchSizeBytes);
    return new RecordBatch(bytes);
  }

  /**
   * The checks of {@link #validate(byte[], int)} on the batch that is the range {@code buf[offset, offset + length)}
   * of a larger array (e.g. a produce request's batch in its received frame), without copying it.
   *
   * @param buf holds the batch; not changed
   * @param offset index of the batch's first byte
   * @param length the batch's size in bytes
   * @param maxBatchSizeBytes the largest accepted {@code length}, in bytes
   * @throws CorruptRecordException as {@link #validate(byte[], int)}
   * @throws InvalidRecordException as {@link #validate(byte[], int)}
   * @throws IndexOutOfBoundsException if the range is not within {@code buf}
   * @throws NullPointerException if {@code buf} is null
   */
  public static void validate(byte[] buf, int offset, int length, int maxBatchSizeBytes) {
    java.util.Objects.checkFromIndexSize(offset, length, buf.length);
    checkFrame(buf, offset, length);
    if (length > maxBatchSizeBytes) {
      throw new InvalidRecordException(
          ErrorCode.MESSAGE_TOO_LARGE,
          "record batch of " + length + " bytes is larger than the maximum of " + maxBatchSizeBytes);
    }
    long stored = ByteUtils.readUnsignedInt(buf, offset + CRC_OFFSET);
    long computed = computeCrc(buf, offset, length);
    if (stored != computed) {
      throw new CorruptRecordException(
          "record batch CRC32C mismatch: stored " + stored + ", computed " + computed + " over " + length
              + " bytes");
    }
    int codec = ByteUtils.readShort(buf, offset + ATTRIBUTES_OFFSET) & COMPRESSION_CODEC_MASK;
    CompressionType type = CompressionType.forId(codec);
    if (type == null || !type.isSupported()) {
      throw unsupported(codec);
    }
    int count = ByteUtils.readInt(buf, offset + RECORDS_COUNT_OFFSET);
    int lastOffsetDelta = ByteUtils.readInt(buf, offset + LAST_OFFSET_DELTA_OFFSET);
    if (count < 1) {
      throw new InvalidRecordException("record batch has an invalid records count " + count);
    }
    if (lastOffsetDelta != count - 1) {
      throw new InvalidRecordException(
          "record batch has lastOffsetDelta " + lastOffsetDelta + " but " + count + " records");
    }
    if (type == CompressionType.NONE) {
      validateRecords(buf, offset + RECORDS_OFFSET, offset + length, count);
    } else {
      Compression.Output scratch = SCRATCH.get();
      try {
        Compression.decompress(codec, buf, offset + RECORDS_OFFSET, length - RECORDS_OFFSET, scratch);
        validateRecords(scratch.buf, 0, scratch.count, count);
      } finally {
        scratch.release();
      }
    }
  }

  /** Per-thread buffer that {@link #validate} decompresses into; nothing of it escapes a call. */
  private static final ThreadLocal<Compression.Output> SCRATCH =
      ThreadLocal.withInitial(() -> new Compression.Output(64 * 1024));

  /** Walks {@code count} records in {@code buf[start, end)} without allocating; they must fill it exactly. */
  private static void validateRecords(byte[] buf, int start, int end, int count) {
    if (count > (end - start) / MIN_RECORD_SIZE) {
      throw new InvalidRecordException("record batch claims " + count + " records in " + (end - start) + " bytes");
    }
    Reader reader = new Reader(buf, start, end);
    for (int i = 0; i < count; i++) {
      skipRecord(reader, i);
    }
    if (reader.pos != end) {
      throw new InvalidRecordException("record batch has " + (end - reader.pos) + " bytes after its last record");
    }
  }

  private static void checkFrame(byte[] bytes) {
    checkFrame(bytes, 0, bytes.length);
  }

  private static void checkFrame(byte[] buf, int offset, int size) {
    if (size < HEADER_SIZE) {
      throw new CorruptRecordException(
          "record batch of " + size + " bytes is shorter than the " + HEADER_SIZE + "-byte header");
    }
    int length = ByteUtils.readInt(buf, offset + LENGTH_OFFSET);
    if (length != size - LOG_OVERHEAD) {
      throw new CorruptRecordException(
          "record batch length field is " + length + " but " + (size - LOG_OVERHEAD)
              + " bytes follow it");
    }
    byte magic = buf[offset + MAGIC_OFFSET];
    if (magic != MAGIC) {
      throw new CorruptRecordException("record batch has magic " + magic + ", expected " + MAGIC);
    }
  }

  private static InvalidRecordException unsupported(int codec) {
    return new InvalidRecordException(
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "record batch compression type " + codec + " is not supported");
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Header fields

  /** The offset of the first record (int64 at {@link #BASE_OFFSET_OFFSET}). */
  public long baseOffset() {
    return ByteUtils.readLong(bytes, BASE_OFFSET_OFFSET);
  }

  /** The offset of the last record: {@code baseOffset() + lastOffsetDelta()}. */
  public long lastOffset() {
    return baseOffset() + lastOffsetDelta();
  }

  /** The offset after the last record: {@code lastOffset() + 1}, the log end offset once this batch is appended. */
  public long nextOffset() {
    return lastOffset() + 1;
  }

  /** The offset delta of the last record (int32 at {@link #LAST_OFFSET_DELTA_OFFSET}). */
  public int lastOffsetDelta() {
    return ByteUtils.readInt(bytes, LAST_OFFSET_DELTA_OFFSET);
  }

  /** The number of records (int32 at {@link #RECORDS_COUNT_OFFSET}). */
  public int recordCount() {
    return ByteUtils.readInt(bytes, RECORDS_COUNT_OFFSET);
  }

  /** The size of the whole batch in bytes ({@code bytes().length}), including the {@link #LOG_OVERHEAD}. */
  public int sizeInBytes() {
    return bytes.length;
  }

  /** The epoch of the leader that appended the batch, or -1 (int32 at {@link #PARTITION_LEADER_EPOCH_OFFSET}). */
  public int partitionLeaderEpoch() {
    return ByteUtils.readInt(bytes, PARTITION_LEADER_EPOCH_OFFSET);
  }

  /** The magic byte, always {@link #MAGIC} for a wrapped batch. */
  public byte magic() {
    return bytes[MAGIC_OFFSET];
  }

  /** The stored CRC32C as an unsigned 32-bit value in a long (uint32 at {@link #CRC_OFFSET}). */
  public long crc() {
    return ByteUtils.readUnsignedInt(bytes, CRC_OFFSET);
  }

  /** The raw attributes (int16 at {@link #ATTRIBUTES_OFFSET}). */
  public short attributes() {
    return ByteUtils.readShort(bytes, ATTRIBUTES_OFFSET);
  }

  /** The compression codec, 0 to 7 (see {@link #COMPRESSION_NONE} and the other {@code COMPRESSION_} constants). */
  public int compressionType() {
    return attributes() & COMPRESSION_CODEC_MASK;
  }

  /** Whether the records section is compressed (codec other than none). */
  public boolean isCompressed() {
    return compressionType() != COMPRESSION_NONE;
  }

  /** Whether record timestamps are log-append time (then every record's timestamp is {@link #maxTimestamp()}). */
  public boolean isLogAppendTime() {
    return (attributes() & TIMESTAMP_TYPE_MASK) != 0;
  }

  /** Whether the transactional attribute bit is set. */
  public boolean isTransactional() {
    return (attributes() & TRANSACTIONAL_FLAG_MASK) != 0;
  }

  /** Whether the control attribute bit is set. */
  public boolean isControlBatch() {
    return (attributes() & CONTROL_FLAG_MASK) != 0;
  }

  /** The first record's timestamp in ms, or -1 (int64 at {@link #BASE_TIMESTAMP_OFFSET}). */
  public long baseTimestamp() {
    return ByteUtils.readLong(bytes, BASE_TIMESTAMP_OFFSET);
  }

  /** The largest record timestamp in ms, or -1 (int64 at {@link #MAX_TIMESTAMP_OFFSET}). */
  public long maxTimestamp() {
    return ByteUtils.readLong(bytes, MAX_TIMESTAMP_OFFSET);
  }

  /** The idempotent producer's id, or -1 (int64 at {@link #PRODUCER_ID_OFFSET}). */
  public long producerId() {
    return ByteUtils.readLong(bytes, PRODUCER_ID_OFFSET);
  }

  /** The idempotent producer's epoch, or -1 (int16 at {@link #PRODUCER_EPOCH_OFFSET}). */
  public short producerEpoch() {
    return ByteUtils.readShort(bytes, PRODUCER_EPOCH_OFFSET);
  }

  /** The sequence number of the first record, or -1 (int32 at {@link #BASE_SEQUENCE_OFFSET}). */
  public int baseSequence() {
    return ByteUtils.readInt(bytes, BASE_SEQUENCE_OFFSET);
  }

  /**
   * The sequence number of the last record: {@link #baseSequence()} plus {@link #lastOffsetDelta()}, wrapping past
   * {@link Integer#MAX_VALUE} to 0 (as Kafka's {@code DefaultRecordBatch.lastSequence}); -1 if the batch has no
   * sequence.
   */
  public int lastSequence() {
    int base = baseSequence();
    if (base == NO_SEQUENCE) {
      return NO_SEQUENCE;
    }
    int delta = lastOffsetDelta();
    return base > Integer.MAX_VALUE - delta ? delta - (Integer.MAX_VALUE - base) - 1 : base + delta;
  }

  /**
   * The backing array itself, <em>not</em> a copy: exactly the batch, ready to journal or send. Callers must not
   * modify it (use {@link #setBaseOffset} / {@link #setPartitionLeaderEpoch}).
   */
  public byte[] bytes() {
    return bytes;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Mutators (partition leader only)

  /**
   * Sets the base offset in place, as Kafka's {@code DefaultRecordBatch.setLastOffset} does when the leader assigns
   * offsets; every record's offset moves with it. The base offset is outside the CRC, so the CRC stays valid and is
   * not recomputed. Writes into the backing array; not thread-safe.
   *
   * @param baseOffset the offset of the first record
   */
  public void setBaseOffset(long baseOffset) {
    ByteUtils.writeLong(baseOffset, bytes, BASE_OFFSET_OFFSET);
  }

  /**
   * Sets the partition leader epoch in place, as Kafka's {@code DefaultRecordBatch.setPartitionLeaderEpoch}. The field
   * is outside the CRC, so the CRC stays valid and is not recomputed. Writes into the backing array; not thread-safe.
   *
   * @param epoch the epoch of the leader appending the batch
   */
  public void setPartitionLeaderEpoch(int epoch) {
    ByteUtils.writeInt(epoch, bytes, PARTITION_LEADER_EPOCH_OFFSET);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Copies (idempotent producer)

  /**
   * A copy of a batch with other idempotent-producer fields (producer id, epoch and base sequence) and the CRC32C
   * recomputed, as Kafka's {@code ProducerBatch.resetProducerState}: an idempotent producer that bumped its epoch
   * resends a batch that was never appended under new sequence numbers. Every other byte (compressed or not) is kept.
   * The given array is not changed: it may still be held by a request in flight or by the leader that refused it.
   *
   * @param batch exactly one batch (as {@link #wrap} accepts); not changed
   * @param producerId the producer id, or {@link #NO_PRODUCER_ID}
   * @param producerEpoch the producer epoch, or {@link #NO_PRODUCER_EPOCH}
   * @param baseSequence the sequence number of the first record, or {@link #NO_SEQUENCE}
   * @return a new array of the same length
   * @throws CorruptRecordException if a frame check of {@link #wrap} fails
   */
  public static byte[] withProducerState(byte[] batch, long producerId, short producerEpoch, int baseSequence) {
    checkFrame(batch);
    byte[] copy = batch.clone();
    ByteUtils.writeLong(producerId, copy, PRODUCER_ID_OFFSET);
    ByteUtils.writeShort(producerEpoch, copy, PRODUCER_EPOCH_OFFSET);
    ByteUtils.writeInt(baseSequence, copy, BASE_SEQUENCE_OFFSET);
    ByteUtils.writeUnsignedInt(new RecordBatch(copy).computeCrc(), copy, CRC_OFFSET);
    return copy;
  }

  /**
   * A copy of an uncompressed batch with its records section compressed by {@code compressor}, as Kafka's broker
   * recompresses a batch for a topic whose {@code compression.type} differs from the producer's: the header keeps every
   * field (offsets, epochs, timestamps, producer state, record count), the codec bits of the attributes become the
   * compressor's, the length field the new size, and the CRC32C is recomputed over the compressed bytes. The records
   * decode to exactly the same records.
   *
   * @param batch exactly one uncompressed batch (as {@link #wrap} accepts); not changed
   * @param compressor the codec; confined to the calling thread
   * @param minSaving the least number of bytes the copy must save, e.g. an eighth of the batch
   * @return the compressed copy, or {@code null} if it would not be at least {@code minSaving} bytes smaller (then
   *     keep {@code batch})
   * @throws IllegalArgumentException if the batch is compressed already
   * @throws CorruptRecordException if a frame check of {@link #wrap} fails
   */
  public static byte[] withCompressedRecords(byte[] batch, Compression.Compressor compressor, int minSaving) {
    return withCompressedRecords(batch, 0, batch.length, compressor, minSaving);
  }

  /**
   * As {@link #withCompressedRecords(byte[], Compression.Compressor, int)} for the batch that is the range {@code
   * buf[offset, offset + length)} of a larger array: the compressed copy is a batch array of its own.
   *
   * @throws IndexOutOfBoundsException if the range is not within {@code buf}
   */
  public static byte[] withCompressedRecords(
      byte[] buf, int offset, int length, Compression.Compressor compressor, int minSaving) {
    java.util.Objects.checkFromIndexSize(offset, length, buf.length);
    checkFrame(buf, offset, length);
    short oldAttributes = ByteUtils.readShort(buf, offset + ATTRIBUTES_OFFSET);
    if ((oldAttributes & COMPRESSION_CODEC_MASK) != COMPRESSION_NONE) {
      throw new IllegalArgumentException("the batch is compressed already");
    }
    byte[] out = compressor.compress(buf, offset + RECORDS_OFFSET, length - RECORDS_OFFSET, HEADER_SIZE);
    if (out.length > length - minSaving) {
      return null;
    }
    System.arraycopy(buf, offset, out, 0, HEADER_SIZE);
    ByteUtils.writeInt(out.length - LOG_OVERHEAD, out, LENGTH_OFFSET);
    short attributes = (short) ((oldAttributes & ~COMPRESSION_CODEC_MASK) | compressor.type().id);
    ByteUtils.writeShort(attributes, out, ATTRIBUTES_OFFSET);
    ByteUtils.writeUnsignedInt(new RecordBatch(out).computeCrc(), out, CRC_OFFSET);
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // CRC and records

  /** Whether the stored CRC32C matches the bytes from {@link #ATTRIBUTES_OFFSET} to the end (as Kafka's {@code isValid}). */
  public boolean isValid() {
    return crc() == computeCrc();
  }

  private long computeCrc() {
    return computeCrc(bytes, 0, bytes.length);
  }

  private static long computeCrc(byte[] buf, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(buf, offset + ATTRIBUTES_OFFSET, length - ATTRIBUTES_OFFSET);
    return crc.getValue();
  }

  /**
   * Decodes the records one at a time, in offset order, each as a new {@link Record} with copied key and value. A
   * compressed batch is decompressed here, whole, into a buffer the iterator owns (one allocation per call; the
   * records copy their fields out of it).
   *
   * <p>On a batch that did not pass {@link #validate}, a malformed record throws {@link InvalidRecordException} from
   * {@code next()}. The iterator does not support {@code remove()} and is not thread-safe.
   *
   * @throws InvalidRecordException ({@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}) if the codec is snappy or an
   *     unassigned id, ({@link ErrorCode#INVALID_RECORD}) if the compressed section does not decompress
   */
  @Override
  public Iterator<Record> iterator() {
    int codec = compressionType();
    if (codec == COMPRESSION_NONE) {
      return new RecordIterator(bytes, RECORDS_OFFSET, bytes.length);
    }
    int compressedSize = bytes.length - RECORDS_OFFSET;
    Compression.Output out =
        new Compression.Output((int) Math.min(Compression.MAX_DECOMPRESSED_SIZE, Math.max(1024L, 4L * compressedSize)));
    Compression.decompress(codec, bytes, RECORDS_OFFSET, compressedSize, out);
    return new RecordIterator(out.buf, 0, out.count);
  }

  /**
   * Decodes all records into a new list that the caller owns.
   *
   * @return the records in offset order
   * @throws InvalidRecordException as {@link #iterator()}
   */
  public List<Record> records() {
    Iterator<Record> it = iterator();
    int count = recordCount();
    List<Record> out =
        new ArrayList<>(
            Math.max(0, Math.min(count, isCompressed() ? 4096 : (bytes.length - HEADER_SIZE) / MIN_RECORD_SIZE)));
    while (it.hasNext()) {
      out.add(it.next());
    }
    return out;
  }

  private final class RecordIterator implements Iterator<Record> {
    private final Reader reader;
    private final int count = recordCount();
    private final long baseOffset = baseOffset();
    private final long baseTimestamp = baseTimestamp();
    private final long logAppendTime = isLogAppendTime() ? maxTimestamp() : NO_TIMESTAMP;
    private int index;

    RecordIterator(byte[] buf, int start, int end) {
      reader = new Reader(buf, start, end);
    }

    @Override
    public boolean hasNext() {
      return index < count;
    }

    @Override
    public Record next() {
      if (index >= count) {
        throw new NoSuchElementException("no more records in the batch");
      }
      Record record = readRecord(reader, baseOffset, baseTimestamp, logAppendTime);
      index++;
      if (index == count && reader.pos != reader.end) {
        throw new InvalidRecordException(
            "record batch has " + (reader.end - reader.pos) + " bytes after its last record");
      }
      return record;
    }
  }

  /** Walks one record without allocating; checks its offset delta and that it consumes exactly its length. */
  private static void skipRecord(Reader r, int index) {
    int start = r.pos;
    int recordEnd = r.enterRecord();
    r.int8("attributes");
    r.varlong("timestampDelta");
    int offsetDelta = r.varint("offsetDelta");
    if (offsetDelta != index) {
      throw new InvalidRecordException(
          "record " + index + " at position " + start + " has offsetDelta " + offsetDelta);
    }
    r.skipBytes("key", true);
    r.skipBytes("value", true);
    int headerCount = r.headerCount();
    for (int h = 0; h < headerCount; h++) {
      r.skipBytes("header key", false);
      r.skipBytes("header value", true);
    }
    r.leaveRecord(start, recordEnd);
  }

  private static Record readRecord(Reader r, long baseOffset, long baseTimestamp, long logAppendTime) {
    int start = r.pos;
    int recordEnd = r.enterRecord();
    r.int8("attributes");
    long timestampDelta = r.varlong("timestampDelta");
    int offsetDelta = r.varint("offsetDelta");
    byte[] key = r.bytes("key");
    byte[] value = r.bytes("value");
    int headerCount = r.headerCount();
    List<Header> headers;
    if (headerCount == 0) {
      headers = List.of();
    } else {
      Header[] array = new Header[headerCount];
      for (int h = 0; h < headerCount; h++) {
        int keyLength = r.skipBytes("header key", false);
        String headerKey = new String(r.buf, r.pos - keyLength, keyLength, StandardCharsets.UTF_8);
        array[h] = new Header(headerKey, r.bytes("header value"));
      }
      headers = List.of(array);
    }
    r.leaveRecord(start, recordEnd);
    long timestamp = logAppendTime != NO_TIMESTAMP ? logAppendTime : baseTimestamp + timestampDelta;
    return new Record(baseOffset + offsetDelta, timestamp, key, value, headers, recordEnd - start);
  }

  /**
   * A bounds-checked cursor over the records section ({@code buf[start, end)}: the batch array, or the decompressed
   * records); one per walk, no allocation per field.
   */
  private static final class Reader {
    final byte[] buf;
    final int end;
    int pos;
    int limit;

    Reader(byte[] buf, int start, int end) {
      this.buf = buf;
      this.pos = start;
      this.end = end;
      this.limit = end;
    }

    /** Reads a record's length varint, checks it fits the section, and limits reads to the record; returns its end. */
    int enterRecord() {
      int start = pos;
      limit = end;
      int bodySize = varint("record length");
      if (bodySize < 0 || bodySize > limit - pos) {
        throw new InvalidRecordException(
            "record at position " + start + " declares " + bodySize + " bytes but " + (limit - pos) + " remain");
      }
      limit = pos + bodySize;
      return limit;
    }

    void leaveRecord(int start, int recordEnd) {
      if (pos != recordEnd) {
        throw new InvalidRecordException(
            "record at position " + start + " declares " + (recordEnd - start) + " bytes but its fields take "
                + (pos - start));
      }
      limit = end;
    }

    byte int8(String field) {
      if (pos >= limit) {
        throw overrun(field);
      }
      return buf[pos++];
    }

    /**
     * Reads a zigzag varint in one pass (as {@link ByteUtils#varintEnd} then {@link ByteUtils#readVarint}, with the
     * same result and the same refusals: at most {@value ByteUtils#MAX_VARINT_SIZE} bytes, none at or past {@code
     * limit}). Most fields of a record are one byte long, so that case returns at once.
     */
    int varint(String field) {
      int p = pos;
      if (p < limit) {
        int b = buf[p];
        if (b >= 0) {
          pos = p + 1;
          return (b >>> 1) ^ -(b & 1);
        }
      }
      int end = Math.min(limit, p + ByteUtils.MAX_VARINT_SIZE);
      int value = 0;
      for (int shift = 0; p < end; shift += 7) {
        int b = buf[p++];
        value |= (b & 0x7F) << shift;
        if (b >= 0) {
          pos = p;
          return (value >>> 1) ^ -(value & 1);
        }
      }
      throw overrun(field);
    }

    /** Reads a zigzag varlong in one pass, as {@link #varint} (at most {@value ByteUtils#MAX_VARLONG_SIZE} bytes). */
    long varlong(String field) {
      int p = pos;
      if (p < limit) {
        int b = buf[p];
        if (b >= 0) {
          pos = p + 1;
          return (b >>> 1) ^ -(b & 1);
        }
      }
      int end = Math.min(limit, p + ByteUtils.MAX_VARLONG_SIZE);
      long value = 0L;
      for (int shift = 0; p < end; shift += 7) {
        long b = buf[p++];
        value |= (b & 0x7F) << shift;
        if (b >= 0) {
          pos = p;
          return (value >>> 1) ^ -(value & 1);
        }
      }
      throw overrun(field);
    }

    int headerCount() {
      int start = pos;
      int count = varint("header count");
      // each header takes at least two bytes (two length varints)
      if (count < 0 || count > (limit - pos) / 2) {
        throw new InvalidRecordException("invalid record header count " + count + " at position " + start);
      }
      return count;
    }

    /** Skips a length-prefixed field; returns its length, or -1 for null (only if {@code nullable}). */
    int skipBytes(String field, boolean nullable) {
      int start = pos;
      int length = varint(field);
      if (length < 0) {
        if (length == -1 && nullable) {
          return -1;
        }
        throw new InvalidRecordException("invalid " + field + " length " + length + " at position " + start);
      }
      if (length > limit - pos) {
        throw new InvalidRecordException(
            field + " at position " + start + " has length " + length + " but only " + (limit - pos)
                + " bytes remain in the record");
      }
      pos += length;
      return length;
    }

    /** Reads a nullable length-prefixed field into a new array. */
    byte[] bytes(String field) {
      int length = skipBytes(field, true);
      return length < 0 ? null : Arrays.copyOfRange(buf, pos - length, pos);
    }

    private InvalidRecordException overrun(String field) {
      return new InvalidRecordException(
          "record field " + field + " at position " + pos + " is malformed or runs past the end of its record");
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Two batches are equal when their bytes are equal (compares the whole array). */
  @Override
  public boolean equals(Object o) {
    return this == o || (o instanceof RecordBatch && Arrays.equals(bytes, ((RecordBatch) o).bytes));
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** For logs: the header fields, no record data. */
  @Override
  public String toString() {
    return "RecordBatch(baseOffset="
        + baseOffset()
        + ", lastOffset="
        + lastOffset()
        + ", count="
        + recordCount()
        + ", sizeInBytes="
        + bytes.length
        + ", partitionLeaderEpoch="
        + partitionLeaderEpoch()
        + ", compression="
        + compressionType()
        + ", baseTimestamp="
        + baseTimestamp()
        + ", maxTimestamp="
        + maxTimestamp()
        + ", producerId="
        + producerId()
        + ", producerEpoch="
        + producerEpoch()
        + ", baseSequence="
        + baseSequence()
        + ")";
  }
}
