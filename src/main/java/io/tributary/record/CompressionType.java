package io.tributary.record;

import java.util.Locale;

/**
 * The compression codecs of a record batch, as Kafka's {@code org.apache.kafka.common.record.CompressionType}: the id
 * stored in bits 0-2 of the batch attributes ({@link RecordBatch#COMPRESSION_CODEC_MASK}) and the name used by the
 * {@code compression.type} setting.
 *
 * <p>Tributary reads and writes {@link #NONE}, {@link #GZIP} ({@code java.util.zip}), {@link #LZ4} (lz4-java, LZ4 frame
 * format) and {@link #ZSTD} (zstd-jni, zstd frame format). {@link #SNAPPY} is known but not supported: a batch with it
 * is refused with {@link io.tributary.protocol.ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}, and a producer configured with
 * it fails at creation. Levels follow Kafka 3.8 ({@code compression.gzip.level}, {@code compression.lz4.level}, {@code
 * compression.zstd.level}).
 *
 * <p>Immutable and thread-safe.
 */
public enum CompressionType {
  /** No compression (id 0). */
  NONE(RecordBatch.COMPRESSION_NONE, "none", true, 0, 0, 0),
  /** gzip (id 1), levels 1-9 or -1 (zlib's default, 6), default -1 as Kafka. */
  GZIP(RecordBatch.COMPRESSION_GZIP, "gzip", true, -1, 9, -1),
  /** snappy (id 2): known, not supported. */
  SNAPPY(RecordBatch.COMPRESSION_SNAPPY, "snappy", false, 0, 0, 0),
  /**
   * lz4 (id 3), levels 1-17, default 9 as Kafka; the default level uses LZ4's fast compressor, any other level the
   * high-compression one at that level (as Kafka's {@code Lz4Compression}).
   */
  LZ4(RecordBatch.COMPRESSION_LZ4, "lz4", true, 1, 17, 9),
  /** zstd (id 4), levels -131072 to 22, default 3 as Kafka. */
  ZSTD(RecordBatch.COMPRESSION_ZSTD, "zstd", true, -131072, 22, 3);

  /** The codec id in the batch attributes, 0-4. */
  public final int id;
  /** The lower-case name used in {@code compression.type}. */
  public final String configName;

  private final boolean supported;
  private final int minLevel;
  private final int maxLevel;
  private final int defaultLevel;

  CompressionType(int id, String configName, boolean supported, int minLevel, int maxLevel, int defaultLevel) {
    this.id = id;
    this.configName = configName;
    this.supported = supported;
    this.minLevel = minLevel;
    this.maxLevel = maxLevel;
    this.defaultLevel = defaultLevel;
  }

  /** Whether this version can compress and decompress batches with this codec. */
  public boolean isSupported() {
    return supported;
  }

  /** The smallest valid level (0 for codecs without levels). */
  public int minLevel() {
    return minLevel;
  }

  /** The largest valid level (0 for codecs without levels). */
  public int maxLevel() {
    return maxLevel;
  }

  /** The level used when none is configured (Kafka's default; 0 for codecs without levels). */
  public int defaultLevel() {
    return defaultLevel;
  }

  /**
   * The codec with this attribute id.
   *
   * @param id bits 0-2 of the batch attributes
   * @return the codec, or {@code null} for the unassigned ids 5-7 (and anything else)
   */
  public static CompressionType forId(int id) {
    switch (id) {
      case RecordBatch.COMPRESSION_NONE:
        return NONE;
      case RecordBatch.COMPRESSION_GZIP:
        return GZIP;
      case RecordBatch.COMPRESSION_SNAPPY:
        return SNAPPY;
      case RecordBatch.COMPRESSION_LZ4:
        return LZ4;
      case RecordBatch.COMPRESSION_ZSTD:
        return ZSTD;
      default:
        return null;
    }
  }

  /**
   * The codec with this {@code compression.type} name (case-insensitive, surrounding blanks ignored).
   *
   * @param name {@code none}, {@code gzip}, {@code snappy}, {@code lz4} or {@code zstd}
   * @return the codec, supported or not
   * @throws IllegalArgumentException for any other name
   */
  public static CompressionType forName(String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    for (CompressionType t : values()) {
      if (t.configName.equals(n)) {
        return t;
      }
    }
    throw new IllegalArgumentException("Unknown compression type " + name + " (none, gzip, snappy, lz4, zstd)");
  }
}
