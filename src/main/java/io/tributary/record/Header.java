package io.tributary.record;

import java.util.Arrays;
import java.util.Objects;

/**
 * One record header: a non-null string key and an optional byte value, as Kafka's {@code
 * org.apache.kafka.common.header.Header}. Keys are stored as UTF-8 in the batch; several headers may share a key.
 *
 * <p>Immutable in the sense that nothing here changes it, but the value array is <em>not</em> copied, neither by the
 * constructor nor by {@link #value()}: callers must not modify it after handing it over. Thread-safe under that rule.
 */
public final class Header {

  private final String key;
  private final byte[] value;

  /**
   * Creates a header.
   *
   * @param key the header key; non-null, may be empty
   * @param value the header value, or {@code null} for none (encoded with length -1); not copied
   * @throws NullPointerException if {@code key} is null
   */
  public Header(String key, byte[] value) {
    this.key = Objects.requireNonNull(key, "header key");
    this.value = value;
  }

  /** The key; never null. */
  public String key() {
    return key;
  }

  /** The value, or {@code null}; the internal array, not a copy. */
  public byte[] value() {
    return value;
  }

  /** Two headers are equal when their keys are equal and their values have the same bytes (or are both null). */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Header)) {
      return false;
    }
    Header other = (Header) o;
    return key.equals(other.key) && Arrays.equals(value, other.value);
  }

  @Override
  public int hashCode() {
    return 31 * key.hashCode() + Arrays.hashCode(value);
  }

  /** For logs: the key and the value's length (not its bytes). */
  @Override
  public String toString() {
    return "Header(key=" + key + ", value=" + (value == null ? "null" : value.length + " bytes") + ")";
  }
}
