package io.tributary.client;

import static io.tributary.client.ClientConfig.*;

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
    long metadataMaxAgeMs) {

  /**
   * Parses a producer config map.
   *
   * @throws IllegalArgumentException naming the key of a bad value, or {@code delivery.timeout.ms} if it was given and
   *     is smaller than {@code linger.ms + request.timeout.ms}
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
        metadataMaxAgeMs);
  }
}
