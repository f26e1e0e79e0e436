package io.tributary.record;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One decoded record of a {@link RecordBatch}, as Kafka's {@code org.apache.kafka.common.record.Record}: its absolute
 * offset, its timestamp, an optional key, an optional value and its headers.
 *
 * <p>Immutable in the sense that nothing here changes it, but the key and value arrays are <em>not</em> copied, neither
 * by the constructor nor by the accessors (decoding already copies them out of the batch once): callers must not
 * modify them. The header list is unmodifiable. Thread-safe under that rule.
 */
public final class Record {

  private final long offset;
  private final long timestamp;
  private final byte[] key;
  private final byte[] value;
  private final List<Header> headers;
  private final int sizeInBytes;

  /**
   * Creates a record. {@link RecordBatch} creates them when it decodes; tests and clients may create them directly.
   *
   * @param offset the absolute offset in the partition ({@code baseOffset + offsetDelta})
   * @param timestamp milliseconds since the epoch, or -1 for none
   * @param key the key, or {@code null}; not copied
   * @param value the value, or {@code null} (a tombstone); not copied
   * @param headers the headers in order; kept as is when already an unmodifiable {@code List.of}/{@code
   *     List.copyOf} list, else copied into one
   * @param sizeInBytes the size of the encoded record in the batch, including its leading length varint
   * @throws NullPointerException if {@code headers} or one of its elements is null
   */
  public Record(long offset, long timestamp, byte[] key, byte[] value, List<Header> headers, int sizeInBytes) {
    this.offset = offset;
    this.timestamp = timestamp;
    this.key = key;
    this.value = value;
    this.headers = List.copyOf(headers);
    this.sizeInBytes = sizeInBytes;
  }

  /** The absolute offset of this record in its partition. */
  public long offset() {
    return offset;
  }

  /**
   * The timestamp in milliseconds since the epoch (-1 if none): the producer's create time, or the batch's max
   * timestamp when the batch uses log-append time (as Kafka).
   */
  public long timestamp() {
    return timestamp;
  }

  /** The key, or {@code null}; the internal array, not a copy. */
  public byte[] key() {
    return key;
  }

  /** The value, or {@code null}; the internal array, not a copy. */
  public byte[] value() {
    return value;
  }

  /** Whether the record has a key. */
  public boolean hasKey() {
    return key != null;
  }

  /** Whether the record has a value (a record without one is a tombstone to log compaction). */
  public boolean hasValue() {
    return value != null;
  }

  /** The headers in order, possibly empty; unmodifiable. */
  public List<Header> headers() {
    return headers;
  }

  /** The size of the encoded record inside its batch, in bytes, including the leading length varint. */
  public int sizeInBytes() {
    return sizeInBytes;
  }

  /** Records are equal when all their fields are (arrays by content). */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Record)) {
      return false;
    }
    Record other = (Record) o;
    return offset == other.offset
        && timestamp == other.timestamp
        && sizeInBytes == other.sizeInBytes
        && Arrays.equals(key, other.key)
        && Arrays.equals(value, other.value)
        && headers.equals(other.headers);
  }

  @Override
  public int hashCode() {
    int h = Objects.hash(offset, timestamp, sizeInBytes, headers);
    h = 31 * h + Arrays.hashCode(key);
    return 31 * h + Arrays.hashCode(value);
  }

  /** For logs: offset, timestamp, key/value lengths and headers (no payload bytes). */
  @Override
  public String toString() {
    return "Record(offset="
        + offset
        + ", timestamp="
        + timestamp
        + ", key="
        + (key == null ? "null" : key.length + " bytes")
        + ", value="
        + (value == null ? "null" : value.length + " bytes")
        + ", headers="
        + headers
        + ")";
  }
}
