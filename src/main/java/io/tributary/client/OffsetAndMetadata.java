package io.tributary.client;

/**
 * A committed offset, as Kafka's {@code OffsetAndMetadata}: {@code offset} is the next offset to read from the
 * partition (the offset after the last record processed), {@code metadata} a free-form string stored with it.
 *
 * @param offset the next offset to read, ≥ 0
 * @param metadata free-form text stored with the offset; {@code null} is stored as ""
 */
public record OffsetAndMetadata(long offset, String metadata) {

  /**
   * An offset with metadata.
   *
   * @param offset the next offset to read, ≥ 0
   * @param metadata free-form text; {@code null} is stored as ""
   * @throws IllegalArgumentException if {@code offset} is negative
   */
  public OffsetAndMetadata {
    if (offset < 0) {
      throw new IllegalArgumentException("Invalid negative offset " + offset);
    }
    if (metadata == null) {
      metadata = "";
    }
  }

  /**
   * An offset with empty metadata.
   *
   * @param offset the next offset to read, ≥ 0
   * @throws IllegalArgumentException if {@code offset} is negative
   */
  public OffsetAndMetadata(long offset) {
    this(offset, "");
  }
}
