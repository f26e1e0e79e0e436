package io.tributary.client;

import static io.tributary.client.ClientConfig.*;

import java.util.Map;

/**
 * The admin client's settings, parsed and validated once from a config map (see {@link ClientConfig}).
 *
 * @param requestTimeoutMs ms per attempt
 * @param defaultApiTimeoutMs ms per call, retries included
 * @param retryBackoffMs ms between attempts
 */
record AdminSettings(int requestTimeoutMs, int defaultApiTimeoutMs, long retryBackoffMs) {

  /**
   * Parses an admin config map.
   *
   * @throws IllegalArgumentException naming the key of a bad value
   */
  static AdminSettings from(Map<String, ?> config) {
    return new AdminSettings(
        getInt(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getInt(config, DEFAULT_API_TIMEOUT_MS, DEFAULT_DEFAULT_API_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getLong(config, RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MS, 0, Long.MAX_VALUE));
  }
}
