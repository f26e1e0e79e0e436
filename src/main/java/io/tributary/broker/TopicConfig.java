package io.tributary.broker;

import io.tributary.protocol.ErrorCode;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The effective configuration of one topic: its overrides (Kafka's topic-level names) over the broker defaults.
 * Immutable.
 *
 * <table>
 *   <caption>Topic config keys</caption>
 *   <tr><th>key</th><th>type, unit</th><th>broker default key</th></tr>
 *   <tr><td>{@code retention.ms}</td><td>long ms, -1 = no time limit</td><td>{@code log.retention.ms}</td></tr>
 *   <tr><td>{@code retention.bytes}</td><td>long bytes per partition, -1 = no size limit</td>
 *       <td>{@code log.retention.bytes}</td></tr>
 *   <tr><td>{@code max.message.bytes}</td><td>int bytes, largest record batch accepted</td>
 *       <td>{@code message.max.bytes}</td></tr>
 *   <tr><td>{@code cleanup.policy}</td><td>{@code delete} (compaction is not built yet)</td>
 *       <td>{@code log.cleanup.policy}</td></tr>
 *   <tr><td>{@code compression.type}</td><td>{@code producer} only: compressed batches are stored as the producer
 *       compressed them; uncompressed ones as LZ4 record batches when the partition's journal has {@code
 *       event-compression = lz4} (the default; see {@code TunedLeveldbJournal})</td><td>(none)</td></tr>
 * </table>
 *
 * @param retentionMs time retention in ms, -1 = unlimited
 * @param retentionBytes size retention per partition in bytes, -1 = unlimited
 * @param maxMessageBytes largest record batch accepted, bytes
 * @param overrides the overrides this config was made from (for describe)
 */
public record TopicConfig(long retentionMs, long retentionBytes, int maxMessageBytes, Map<String, String> overrides) {

  /** Topic-level key for time retention. */
  public static final String RETENTION_MS = "retention.ms";
  /** Topic-level key for size retention. */
  public static final String RETENTION_BYTES = "retention.bytes";
  /** Topic-level key for the largest batch. */
  public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
  /** Topic-level key for the cleanup policy. */
  public static final String CLEANUP_POLICY = "cleanup.policy";
  /** Topic-level key for the codec batches are stored with; only {@code producer} (keep the producer's). */
  public static final String COMPRESSION_TYPE = "compression.type";

  /** Topic-level key for the fewest in-sync replicas an acks=all write needs. */
  public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

  /** Every topic-level key this version knows. */
  public static final Set<String> KEYS =
      Set.of(RETENTION_MS, RETENTION_BYTES, MAX_MESSAGE_BYTES, CLEANUP_POLICY, MIN_INSYNC_REPLICAS, COMPRESSION_TYPE);

  /** Thrown for an unknown key or a bad value; carries {@link ErrorCode#INVALID_CONFIG}. */
  public static final class InvalidConfigException extends IllegalArgumentException {
    public InvalidConfigException(String message) {
      super(message);
    }

    /** Always {@link ErrorCode#INVALID_CONFIG}. */
    public ErrorCode errorCode() {
      return ErrorCode.INVALID_CONFIG;
    }
  }

  /**
   * Validates {@code overrides} and merges them over the broker defaults.
   *
   * @throws InvalidConfigException for an unknown key, a value that does not parse, or a value out of range
   */
  public static TopicConfig create(Map<String, String> overrides, BrokerSettings defaults) {
    Map<String, String> o = overrides == null ? Map.of() : new TreeMap<>(overrides);
    for (String key : o.keySet()) {
      if (!KEYS.contains(key)) {
        throw new InvalidConfigException("Unknown topic config " + key + " (known: " + new java.util.TreeSet<>(KEYS)
            + ")");
      }
    }
    long retentionMs = parseLong(o, RETENTION_MS, defaults.logRetentionMs(), -1);
    long retentionBytes = parseLong(o, RETENTION_BYTES, defaults.logRetentionBytes(), -1);
    long maxMessage = parseLong(o, MAX_MESSAGE_BYTES, defaults.messageMaxBytes(), 64);
    if (maxMessage > defaults.maxFrameSafeBatchBytes()) {
      throw new InvalidConfigException(MAX_MESSAGE_BYTES + " " + maxMessage + " is above what the transport carries ("
          + defaults.maxFrameSafeBatchBytes() + " bytes, set by akka.remote.artery.advanced.maximum-frame-size)");
    }
    parseLong(o, MIN_INSYNC_REPLICAS, 1, 1);
    String policy = o.getOrDefault(CLEANUP_POLICY, "delete");
    if (!policy.equals("delete")) {
      throw new InvalidConfigException(CLEANUP_POLICY + "=" + policy + " is not supported yet (only delete)");
    }
    String compression = o.getOrDefault(COMPRESSION_TYPE, "producer");
    if (!compression.trim().equalsIgnoreCase("producer")) {
      throw new InvalidConfigException(
          COMPRESSION_TYPE + "=" + compression + " is not supported yet (only producer: compressed batches are stored"
              + " as the producer compressed them, uncompressed ones LZ4-compressed when the broker's journal has"
              + " event-compression = lz4, the default)");
    }
    return new TopicConfig(retentionMs, retentionBytes, (int) maxMessage, Map.copyOf(o));
  }

  /**
   * The topic's {@code min.insync.replicas}: its override, else {@code brokerDefault}. The override was validated
   * (an integer ≥ 1) when the topic was created.
   */
  public int minInsyncReplicas(int brokerDefault) {
    String v = overrides.get(MIN_INSYNC_REPLICAS);
    return v == null ? brokerDefault : (int) Math.min(Integer.MAX_VALUE, Long.parseLong(v.trim()));
  }

  private static long parseLong(Map<String, String> o, String key, long dflt, long min) {
    String v = o.get(key);
    if (v == null) {
      return dflt;
    }
    long parsed;
    try {
      parsed = Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      boolean digits = v.trim().matches("[-+]?[0-9]+");
      throw new InvalidConfigException("Invalid value " + v + " for " + key + ": "
          + (digits ? "out of range, at most " + Long.MAX_VALUE : "not a whole number"));
    }
    if (parsed < min) {
      throw new InvalidConfigException("Invalid value " + v + " for " + key + ": must be at least " + min);
    }
    return parsed;
  }
}
