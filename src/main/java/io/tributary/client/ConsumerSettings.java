package io.tributary.client;

import static io.tributary.client.ClientConfig.*;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

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
 * @param groupId {@code group.id}, or {@code null} when not set ("" is kept: the group APIs reject it)
 * @param groupInstanceId {@code group.instance.id}, or {@code null}
 * @param clientId {@code client.id}
 * @param sessionTimeoutMs ms
 * @param heartbeatIntervalMs ms
 * @param maxPollIntervalMs ms
 * @param assignors canonical assignor names, in order of preference
 * @param enableAutoCommit whether positions are committed automatically
 * @param autoCommitIntervalMs ms
 */
record ConsumerSettings(
    int maxPollRecords,
    int fetchMaxWaitMs,
    int maxPartitionFetchBytes,
    String autoOffsetReset,
    int requestTimeoutMs,
    int defaultApiTimeoutMs,
    long retryBackoffMs,
    long metadataMaxAgeMs,
    String groupId,
    String groupInstanceId,
    String clientId,
    int sessionTimeoutMs,
    int heartbeatIntervalMs,
    int maxPollIntervalMs,
    List<String> assignors,
    boolean enableAutoCommit,
    int autoCommitIntervalMs) {

  private static final AtomicInteger CLIENT_IDS = new AtomicInteger();

  /**
   * Parses a consumer config map.
   *
   * @throws IllegalArgumentException naming the key of a bad value; also when {@code heartbeat.interval.ms} is not
   *     below {@code session.timeout.ms}, {@code group.instance.id} is empty, or {@code enable.auto.commit=true} is
   *     given without a {@code group.id}
   */
  static ConsumerSettings from(Map<String, ?> config) {
    String groupId = getString(config, GROUP_ID);
    String instanceId = getString(config, GROUP_INSTANCE_ID);
    if (instanceId != null && instanceId.isBlank()) {
      throw new IllegalArgumentException(
          "Invalid value \"" + instanceId + "\" for configuration " + GROUP_INSTANCE_ID + ": must not be empty");
    }
    String clientId = getString(config, CLIENT_ID);
    if (clientId == null || clientId.isEmpty()) {
      clientId = "consumer-" + (groupId == null || groupId.isEmpty() ? "" : groupId + "-")
          + CLIENT_IDS.incrementAndGet();
    }
    int sessionTimeoutMs = getInt(config, SESSION_TIMEOUT_MS, DEFAULT_SESSION_TIMEOUT_MS, 1, Integer.MAX_VALUE);
    int heartbeatIntervalMs =
        getInt(config, HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_INTERVAL_MS, 1, Integer.MAX_VALUE);
    if (heartbeatIntervalMs >= sessionTimeoutMs) {
      throw new IllegalArgumentException(
          "Invalid value " + heartbeatIntervalMs + " for configuration " + HEARTBEAT_INTERVAL_MS
              + ": must be lower than " + SESSION_TIMEOUT_MS + " (" + sessionTimeoutMs + ")");
    }
    boolean hasGroup = groupId != null;
    boolean autoCommit = getBoolean(config, ENABLE_AUTO_COMMIT, hasGroup);
    if (autoCommit && !hasGroup) {
      throw new IllegalArgumentException(
          "Invalid value true for configuration " + ENABLE_AUTO_COMMIT + ": it needs a " + GROUP_ID);
    }
    return new ConsumerSettings(
        getInt(config, MAX_POLL_RECORDS, DEFAULT_MAX_POLL_RECORDS, 1, Integer.MAX_VALUE),
        getInt(config, FETCH_MAX_WAIT_MS, DEFAULT_FETCH_MAX_WAIT_MS, 0, Integer.MAX_VALUE),
        getInt(config, MAX_PARTITION_FETCH_BYTES, DEFAULT_MAX_PARTITION_FETCH_BYTES, 1, Integer.MAX_VALUE),
        getChoice(config, AUTO_OFFSET_RESET, DEFAULT_AUTO_OFFSET_RESET, "earliest", "latest", "none"),
        getInt(config, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getInt(config, DEFAULT_API_TIMEOUT_MS, DEFAULT_DEFAULT_API_TIMEOUT_MS, 0, Integer.MAX_VALUE),
        getLong(config, RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MS, 0, Long.MAX_VALUE),
        getLong(config, METADATA_MAX_AGE_MS, DEFAULT_METADATA_MAX_AGE_MS, 0, Long.MAX_VALUE),
        groupId,
        instanceId,
        clientId,
        sessionTimeoutMs,
        heartbeatIntervalMs,
        getInt(config, MAX_POLL_INTERVAL_MS, DEFAULT_MAX_POLL_INTERVAL_MS, 1, Integer.MAX_VALUE),
        getAssignors(config),
        autoCommit,
        getInt(config, AUTO_COMMIT_INTERVAL_MS, DEFAULT_AUTO_COMMIT_INTERVAL_MS, 0, Integer.MAX_VALUE));
  }

  /** Whether a usable {@code group.id} is set (not null, not empty). */
  boolean hasGroupId() {
    return groupId != null && !groupId.isEmpty();
  }
}
