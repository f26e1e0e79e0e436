package io.tributary.client;

import static io.tributary.client.ClientConfig.*;

import java.util.Map;

/**
 * The consumer's settings, parsed and validated once from a config map (see {@link ClientConfig} for each key).
 *
 * @param maxPollRecords records per poll
 * @param fetchMaxWaitMs ms
 * @param maxPartitionFetchBytes bytes
 * @param autoOffsetReset {@code earliest}, {@code latest} or {@code none}
 * @param requestTimeoutMs ms
 * @param defaultApiTimeoutMs ms
 * @param retryBackoffMs ms
 * @param metadataMaxAgeMs ms
 */
record ConsumerSettings(
    int maxPollRecords,
    int fetchMaxWaitMs,
    int maxPartitionFetchBytes,
    String autoOffsetReset,
    int requestTimeoutMs,
    int defaultApiTimeoutMs,
    long retryBackoffMs,
    long metadataMaxAgeMs) {

  /**
   * Parses a consumer config map.
   *
   * @throws IllegalArgumentException naming the key of a bad value
   */
  static ConsumerSettings from(Map<String, ?> config) {
    return new ConsumerSettings(
        getInt(config, MAX_POLL_RECORDS, DEFAULT_MAX_POLL_RECORDS, 1, Integer.MAX_VALUE),
        getInt(config, FETCH_MAX_WAIT_MS, DEFAULT_FETCH_MAX_WAIT_MS, 0, Integer.MAX_VALUE),
        getInt(config, MAX_PARTITION_FETCH_BYTES, DEFAULT_MAX_PARTITION_FETCH_BYTES, 1, Integer.MAX_VALUE),
        getChoice(config, AUTO_OFFSET_RESET, DEFAULT_AUTO_OFFSET_RESET, "earliest", "latest", "none"),
        getInt(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getInt(config, DEFAULT_API_TIMEOUT_MS, DEFAULT_DEFAULT_API_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getLong(config, RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MS, 0, Long.MAX_VALUE),
        getLong(config, METADATA_MAX_AGE_MS, DEFAULT_METADATA_MAX_AGE_MS, 0, Long.MAX_VALUE));
  }
}
