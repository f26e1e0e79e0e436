package io.tributary.client;

import static io.tributary.client.ClientConfig.*;

import io.tributary.record.CompressionType;
import java.util.Map;

/**
 * The producer's settings, parsed and validated once from a config map (see {@link ClientConfig} for each key).
 *
 * @param acks -1, 0 or 1
 * @param lingerMs ms
 * @param batchSize bytes
 * @param retries count
 * @param retryBackoffMs ms
 * @param deliveryTimeoutMs ms
 * @param requestTimeoutMs ms
 * @param maxRequestSize bytes
 * @param bufferMemory bytes
 * @param maxBlockMs ms
 * @param maxInFlight batches per partition
 * @param metadataMaxAgeMs ms
 * @param idempotent whether {@code enable.idempotence} is in effect (see {@link ClientConfig#ENABLE_IDEMPOTENCE})
 * @param compressionType {@code compression.type}: none, gzip, lz4 or zstd (never snappy)
 * @param compressionLevel the level of that codec ({@code compression.<codec>.level}), 0 for none
 */
record ProducerSettings(
    short acks,
    long lingerMs,
    int batchSize,
    int retries,
    long retryBackoffMs,
    long deliveryTimeoutMs,
    int requestTimeoutMs,
    int maxRequestSize,
    int bufferMemory,
    long maxBlockMs,
    int maxInFlight,
    long metadataMaxAgeMs,
    boolean idempotent,
    CompressionType compressionType,
    int compressionLevel) {

  /**
   * Parses a producer config map.
   *
   * @throws IllegalArgumentException naming the key of a bad value, or {@code delivery.timeout.ms} if it was given and
   *     is smaller than {@code linger.ms + request.timeout.ms}, or {@code enable.idempotence} if it was set to true
   *     with {@code acks} other than all, {@code retries=0} or {@code max.in.flight.requests.per.connection} above 5,
   *     or {@code compression.type} if it is not none, gzip, lz4 or zstd (snappy is not supported), or a {@code
   *     compression.<codec>.level} out of its codec's range
   */
  static ProducerSettings from(Map<String, ?> config) {
    short acks = getAcks(config);
    long lingerMs = getLong(config, LINGER_MS, DEFAULT_LINGER_MS, 0, Integer.MAX_VALUE);
    int batchSize = getInt(config, BATCH_SIZE, DEFAULT_BATCH_SIZE, 0, Integer.MAX_VALUE);
    int retries = getInt(config, RETRIES, DEFAULT_RETRIES, 0, Integer.MAX_VALUE);
    long retryBackoffMs = getLong(config, RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MS, 0, Long.MAX_VALUE);
    int requestTimeoutMs = getInt(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, 0, Integer.MAX_VALUE);
    long deliveryTimeoutMs =
        getLong(config, DELIVERY_TIMEOUT_MS, DEFAULT_DELIVERY_TIMEOUT_MS, 0, Integer.MAX_VALUE);
    if (deliveryTimeoutMs < lingerMs + requestTimeoutMs) {
      if (config != null && config.get(DELIVERY_TIMEOUT_MS) != null) {
        throw new IllegalArgumentException(
            "Invalid value " + config.get(DELIVERY_TIMEOUT_MS) + " for configuration " + DELIVERY_TIMEOUT_MS
                + ": must be at least " + LINGER_MS + " + " + REQUEST_TIMEOUT_MS + " = "
                + (lingerMs + requestTimeoutMs));
      }
      deliveryTimeoutMs = lingerMs + requestTimeoutMs;
    }
    int maxRequestSize = getInt(config, MAX_REQUEST_SIZE, DEFAULT_MAX_REQUEST_SIZE, 1, Integer.MAX_VALUE);
    int bufferMemory = getInt(config, BUFFER_MEMORY, (int) DEFAULT_BUFFER_MEMORY, 0, Integer.MAX_VALUE);
    long maxBlockMs = getLong(config, MAX_BLOCK_MS, DEFAULT_MAX_BLOCK_MS, 0, Long.MAX_VALUE);
    int maxInFlight =
        getInt(
            config,
            MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
            DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
            1,
            Integer.MAX_VALUE);
    long metadataMaxAgeMs = getLong(config, METADATA_MAX_AGE_MS, DEFAULT_METADATA_MAX_AGE_MS, 0, Long.MAX_VALUE);
    boolean idempotent = idempotence(config, acks, retries, maxInFlight);
    CompressionType compressionType = compressionType(config);
    int compressionLevel = compressionLevel(config, compressionType);
    return new ProducerSettings(
        acks,
        lingerMs,
        batchSize,
        retries,
        retryBackoffMs,
        deliveryTimeoutMs,
        requestTimeoutMs,
        maxRequestSize,
        bufferMemory,
        maxBlockMs,
        maxInFlight,
        metadataMaxAgeMs,
        idempotent,
        compressionType,
        compressionLevel);
  }

  /** These settings with {@code maxRequestSize} in place of {@link #maxRequestSize()}. */
  ProducerSettings withMaxRequestSize(int maxRequestSize) {
    return new ProducerSettings(acks, lingerMs, batchSize, retries, retryBackoffMs, deliveryTimeoutMs,
        requestTimeoutMs, maxRequestSize, bufferMemory, maxBlockMs, maxInFlight, metadataMaxAgeMs, idempotent,
        compressionType, compressionLevel);
  }

  /** {@code compression.type}: a codec this client can compress with. */
  private static CompressionType compressionType(Map<String, ?> config) {
    Object given = config == null ? null : config.get(COMPRESSION_TYPE);
    if (given != null && "snappy".equalsIgnoreCase(given.toString().trim())) {
      // a Kafka codec this client does not have: say so, rather than "must be one of" a list without it
      throw new IllegalArgumentException(
          "Invalid value " + given + " for configuration " + COMPRESSION_TYPE
              + ": snappy is not supported by this client (use none, gzip, lz4 or zstd)");
    }
    String name = getChoice(config, COMPRESSION_TYPE, DEFAULT_COMPRESSION_TYPE, "none", "gzip", "lz4", "zstd");
    return CompressionType.forName(name);
  }

  /** The level of {@code type} from its {@code compression.<codec>.level} key, else the codec's default. */
  private static int compressionLevel(Map<String, ?> config, CompressionType type) {
    String key;
    switch (type) {
      case GZIP:
        key = COMPRESSION_GZIP_LEVEL;
        break;
      case LZ4:
        key = COMPRESSION_LZ4_LEVEL;
        break;
      case ZSTD:
        key = COMPRESSION_ZSTD_LEVEL;
        break;
      default:
        return 0;
    }
    int level = getInt(config, key, type.defaultLevel(), type.minLevel(), type.maxLevel());
    if (type == CompressionType.GZIP && level == 0) {
      throw new IllegalArgumentException(
          "Invalid value 0 for configuration " + key + ": must be in [1, 9] or -1");
    }
    return level;
  }

  /**
   * Whether the producer is idempotent: as set, or by default when the other settings allow it (Kafka 3.x).
   *
   * @throws IllegalArgumentException if it is explicitly true and a setting conflicts
   */
  private static boolean idempotence(Map<String, ?> config, short acks, int retries, int maxInFlight) {
    boolean explicit = config != null && config.get(ENABLE_IDEMPOTENCE) != null;
    boolean wanted = getBoolean(config, ENABLE_IDEMPOTENCE, DEFAULT_ENABLE_IDEMPOTENCE);
    if (!wanted) {
      return false;
    }
    String conflict = null;
    if (acks != -1) {
      conflict = ACKS + "=all (-1), not " + acks;
    } else if (retries == 0) {
      conflict = RETRIES + " of at least 1";
    } else if (maxInFlight > MAX_IN_FLIGHT_WITH_IDEMPOTENCE) {
      conflict =
          MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION + " of at most " + MAX_IN_FLIGHT_WITH_IDEMPOTENCE + ", not "
              + maxInFlight;
    }
    if (conflict == null) {
      return true;
    }
    if (explicit) {
      throw new IllegalArgumentException(
          "Invalid value " + config.get(ENABLE_IDEMPOTENCE) + " for configuration " + ENABLE_IDEMPOTENCE
              + ": an idempotent producer needs " + conflict + " (set " + ENABLE_IDEMPOTENCE
              + "=false to use this setting)");
    }
    return false;
  }
}
